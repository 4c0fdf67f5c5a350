"""Whether losing a fact hurt (R-FID-5): when and how the session got a lost fact back, and what
the text that brought it back cost in tokens.

A lost fact is *recovered* by the first of these, looked for from the first message after the
compaction up to the message that needed it:

- ``user``: a user message (what a person typed, or a notification the agent's harness inserted)
  states it;
- ``tool result``: a tool result states it (``git status`` listing the file, a search finding it);
- ``re-read``: the call that needed a path reads that path (not an edit), and its result brings
  the file back;
- ``re-run``: the call that needed a command runs it again, and its result is the outcome.

The recovery's step is the step whose request first holds that text; its cost is the tokens of
that text (the user message or the tool result) by the local estimator. A fact none of these
brought back is never recovered: the agent used it from memory of the checkpoint's neighbours or
re-derived it in a way a string cannot see.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Literal

from ..frozen import FrozenModel
from ..session import Message, TextBlock
from ..tokens import default_estimator
from .facts import PATH_KEYS, Fact, Normaliser, command_parts, command_text
from .matching import Matcher

__all__ = ["Recovery", "RecoveryHow", "ReturnedTexts", "find_recovery"]

RecoveryHow = Literal["re-read", "re-run", "tool result", "user"]
_EDIT_TOOL = re.compile(r"edit|write|patch|replace|create|delete|move", re.IGNORECASE)


class Recovery(FrozenModel):
    """How a lost fact came back."""

    step: int
    how: RecoveryHow
    message: int
    """Session index of the message holding the text that brought it back."""
    tokens: int
    """Tokens (local estimate) of that text: the tool result, or the user message."""


def _user_text(message: Message) -> str:
    if message.role != "user" or message.tool_results or message.is_compaction_summary:
        return ""
    return "\n".join(b.text for b in message.content if isinstance(b, TextBlock))


def _result_of(messages: Sequence[Message], call_id: str, start: int) -> tuple[int, str] | None:
    for i in range(start, min(start + 8, len(messages))):
        for result in messages[i].tool_results:
            if result.call_id == call_id:
                return i, result.text
    return None


def _own_call(fact: Fact, message: Message, norm: Normaliser, matcher: Matcher
              ) -> tuple[str, RecoveryHow] | None:
    """The call of the message that needed ``fact`` that brings it back: a read of the path or a
    run of the command."""
    for call in message.tool_calls:
        if fact.kind == "paths" and not _EDIT_TOOL.search(call.name):
            for key in PATH_KEYS:
                value = call.arguments.get(key)
                if isinstance(value, str) and matcher.found(fact, norm.path(value), ""):
                    return call.id, "re-read"
        command = command_text(call.arguments) if fact.kind == "commands" else None
        if command is not None and fact.key in (norm.text(p) for p in command_parts(command)):
            return call.id, "re-run"
    return None


def _normalised(how: RecoveryHow, text: str, norm: Normaliser
                ) -> tuple[RecoveryHow, str, str, str]:
    flat = norm.text(text)
    return how, text, flat, flat.lower()


class ReturnedTexts:
    """The texts that can hand a fact back, per session message, normalised once: a user
    message's text, each tool result."""

    def __init__(self, messages: Sequence[Message], norm: Normaliser) -> None:
        self.messages, self.norm = messages, norm
        self._texts: dict[int, tuple[tuple[RecoveryHow, str, str, str], ...]] = {}

    def at(self, index: int) -> tuple[tuple[RecoveryHow, str, str, str], ...]:
        """``(how, raw text, normalised, normalised lower-cased)`` of message ``index``."""
        found = self._texts.get(index)
        if found is None:
            message = self.messages[index]
            raw: list[tuple[RecoveryHow, str]] = [("tool result", r.text)
                                                  for r in message.tool_results]
            if typed := _user_text(message):
                raw.insert(0, ("user", typed))
            found = tuple(_normalised(how, text, self.norm) for how, text in raw)
            self._texts[index] = found
        return found


def find_recovery(texts: ReturnedTexts, fact: Fact, *, resume: int, needed: int,
                  firsts: Sequence[int], matcher: Matcher) -> Recovery | None:
    """How the session got ``fact`` back between session message ``resume`` (the first after the
    compaction) and ``needed`` (the first that needed it) — see the module doc; ``firsts`` are the
    session indices of each step's response."""
    count = default_estimator().count
    messages, norm = texts.messages, texts.norm

    def at(index: int, how: RecoveryHow, text: str) -> Recovery:
        return Recovery(step=bisect.bisect_left(firsts, index), how=how, message=index,
                        tokens=count(text))

    for i in range(resume, needed + 1):
        for how, raw, flat, lower in texts.at(i):
            if (how == "user" or i < needed) and matcher.found(fact, flat, lower):
                return at(i, how, raw)
    own = _own_call(fact, messages[needed], norm, matcher)
    if own is not None:
        found = _result_of(messages, own[0], needed + 1)
        if found is not None:
            return at(found[0], own[1], found[1])
    return None
