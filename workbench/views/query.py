"""The URL's query parameters (``?session=…&replay=…&step=…&message=…``) in words.

A link can carry anything: a step that is not a number (``abc``, ``²``, a thousand digits), a
session or replay that is not in the store or belongs to another session. The pages never fail on
one and never silently open another object: each bad or unknown parameter becomes one line saying
what was asked for and what is shown instead. The values are a user's input, so the lines show them
as inline code (see :mod:`workbench.views.markup`).
"""

from __future__ import annotations

from .markup import code_span

__all__ = ["MAX_DIGITS", "bad_number", "parse_index", "unknown_message", "unknown_replay",
           "unknown_session", "unknown_step"]

#: A step or message number has at most this many digits (more is refused before ``int()``, whose
#: own limit is 4,300 digits).
MAX_DIGITS = 9
_SHOWN = 60  # characters of a bad value repeated in a notice


def _value(value: str) -> str:
    return code_span(value if len(value) <= _SHOWN else value[:_SHOWN] + "…")


def parse_index(value: str | None) -> int | None:
    """A 0-based number from the URL: ASCII digits only (``"²".isdigit()`` is true but ``int()``
    refuses it; ``"٣"`` is a digit ``int()`` takes), at most :data:`MAX_DIGITS` of them; else
    None."""
    if value is None or not value or len(value) > MAX_DIGITS:
        return None
    if not (value.isascii() and value.isdecimal()):
        return None
    return int(value)


def bad_number(param: str, value: str, shown: str) -> str:
    """``?step=abc is not a step number; showing step 0.``"""
    return f"The link's {param} {_value(value)} is not a {param} number; showing {shown}."


def unknown_session(asked: str, shown: str | None) -> str:
    """No such session in the store, and which one the page opens instead."""
    instead = f"showing {code_span(shown)}" if shown is not None else "the store has no session"
    return f"No session {_value(asked)} in the store; {instead}."


def unknown_replay(asked: str, session_id: str, shown: str | None) -> str:
    """No such replay of this session (unknown, or a replay of another session)."""
    instead = f"showing {code_span(shown)}" if shown is not None else "it has no replay yet"
    return f"No replay {_value(asked)} of session {code_span(session_id)}; {instead}."


def unknown_step(asked: int, n_steps: int, shown: int) -> str:
    """A step number past the replay's last step."""
    return (f"No step {asked} in this replay (steps 0 to {n_steps - 1}); showing step {shown}."
            if n_steps else f"No step {asked}: this replay has no steps.")


def unknown_message(asked: int, n_messages: int) -> str:
    """A message number past the session's last message."""
    return (f"No message #{asked} in this session (messages 0 to {n_messages - 1}); showing the "
            "first page.")
