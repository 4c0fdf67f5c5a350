"""One message of a request being prepared (:class:`Part`) and how it appears in a final request.

The stages' state (:mod:`.state`) holds parts and the step memory (:mod:`.memory`) keys its entries
by them; both import this module, which imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from ..context import ContextContribution
from ..session import Message
from .records import MarkKind, MessageMark, content_hash

__all__ = ["MarkSource", "Origin", "Part", "PartView"]

Origin = Literal["context", "contribution", "history", "checkpoint", "notice"]

PartView = tuple[Message, MessageMark]
"""One message of a final request: the message as shown and its mark (the message's content hash
and the mark's JSON are computed only when the request's hash is read)."""


class MarkSource(Protocol):
    """Where a part's mark comes from (the step memory's ``MarkMemory`` shares equal marks)."""

    def get(self, origin: Origin, history_index: int | None, key: str | None,
            marks: tuple[MarkKind, ...]) -> MessageMark: ...


@dataclass(frozen=True, slots=True)
class Part:
    """One message of the request being prepared."""

    message: Message
    tokens: int
    origin: Origin
    history_index: int | None = None
    """Session message index (None for context, contributions and checkpoints)."""
    key: str | None = None
    """Context position or contribution key."""
    required: bool = True
    priority: int = 100
    position: int = 0
    """Position among the step's contributions (R-DYN-4 tie-break)."""
    marks: tuple[MarkKind, ...] = ()
    payload: ContextContribution | None = None
    """The contribution object this part was made from (handed back to the selection function)."""
    _digest: str | None = field(default=None, init=False, repr=False, compare=False)
    _view: PartView | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def digest(self) -> str:
        """Content hash of the message, computed once per part (parts are values: a part made
        again from the same message computes the same hash)."""
        digest = self._digest
        if digest is None:
            digest = content_hash(self.message)
            object.__setattr__(self, "_digest", digest)
        return digest

    def view(self, marks: MarkSource) -> PartView:
        """How this part appears in a final request, computed once per part: the message and its
        mark (shared through ``marks``)."""
        view = self._view
        if view is None:
            view = (self.message, marks.get(self.origin, self.history_index, self.key, self.marks))
            object.__setattr__(self, "_view", view)
        return view

    def replaced(self, message: Message, tokens: int, mark: MarkKind) -> Part:
        marks = self.marks if mark in self.marks else (*self.marks, mark)
        return Part(message, tokens, self.origin, self.history_index, self.key, self.required,
                    self.priority, self.position, marks, self.payload)
