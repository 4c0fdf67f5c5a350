"""Redacted transcript text, and whether an estimate error measured on it means anything.

Some transcripts are shared with their text replaced by placeholders such as
``[REDACTED_TEXT len=13131 sha=036b7e47]``: the provider counted the original text, the local
tokenizer counts only the placeholder. When a notable share of the session's text is hidden this
way, the local estimate cannot follow the provider's count, and the estimate error says more about
the redaction than about the estimate. :func:`redaction_of` measures the share from the
placeholders' own ``len=`` figures; :attr:`Redaction.meaningful` is False from
:data:`NOT_MEANINGFUL_SHARE` of hidden characters on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, cast

from iris.frozen import FrozenModel
from iris.session import Session

__all__ = ["NOT_MEANINGFUL_SHARE", "PLACEHOLDER", "Redaction", "RedactionExtent", "redaction_of"]

#: One redaction placeholder: its kind, the length of the hidden text and a short hash.
PLACEHOLDER = re.compile(r"\[REDACTED_[A-Z0-9_]+ len=(\d+) sha=[0-9a-fA-F]+\]")
#: From this share of hidden characters (of hidden + visible) the estimate error is not meaningful.
NOT_MEANINGFUL_SHARE = 0.10


class Redaction(FrozenModel):
    """How much of a session's text is hidden behind placeholders."""

    placeholders: int
    messages: int
    """Messages that hold at least one placeholder."""
    hidden_chars: int
    """Characters of original text the placeholders stand for (their ``len=`` figures)."""
    visible_chars: int
    """Characters of the transcript text that are not placeholders."""

    @property
    def share(self) -> float:
        total = self.hidden_chars + self.visible_chars
        return self.hidden_chars / total if total else 0.0

    @property
    def meaningful(self) -> bool:
        """Whether an estimate error measured on this session says something about the estimate."""
        return self.share < NOT_MEANINGFUL_SHARE

    def note(self) -> str:
        what = (f"{self.share:.0%} of this session's text ({self.hidden_chars:,} characters in "
                f"{self.placeholders:,} placeholders over {self.messages:,} messages) is redacted "
                "to [REDACTED_… len=… sha=…] placeholders")
        if self.meaningful:
            return f"{what}; the estimate error is barely affected"
        return (f"{what}: the provider counted the original text, the local estimate counts the "
                "placeholders, so the estimate error is not meaningful for this session")

    def extent(self) -> RedactionExtent:
        """The figures ``--summary-json`` writes as ``text_redacted``."""
        return RedactionExtent(placeholders=self.placeholders, messages=self.messages,
                               hidden_chars=self.hidden_chars, visible_chars=self.visible_chars,
                               share_pct=round(100 * self.share, 1))


class RedactionExtent(FrozenModel):
    """A redaction's extent as the summary states it (keys in this order)."""

    placeholders: int
    messages: int
    hidden_chars: int
    visible_chars: int
    share_pct: float
    """Hidden characters in % of hidden + visible, one decimal."""


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in cast("dict[Any, Any]", value).values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in cast("Sequence[Any]", value):
            yield from _strings(item)


def _block_text(block: Any) -> Iterator[str]:
    """The texts of one content block: text, thinking, tool output and tool-call arguments."""
    text = getattr(block, "text", None)
    if isinstance(text, str):
        yield text
    yield from _strings(getattr(block, "arguments", None))


def redaction_of(session: Session) -> Redaction | None:
    """The session's redaction placeholders counted, or None when it has none."""
    placeholders = messages = hidden = visible = 0
    for message in session.messages:
        found = 0
        for block in message.content:
            for text in _block_text(block):
                matches = PLACEHOLDER.findall(text)
                found += len(matches)
                hidden += sum(int(n) for n in matches)
                visible += len(PLACEHOLDER.sub("", text))
        placeholders += found
        messages += bool(found)
    if not placeholders:
        return None
    return Redaction(placeholders=placeholders, messages=messages, hidden_chars=hidden,
                     visible_chars=visible)
