"""The message list an importer fills while it reads: grouping of one response's pieces into one
assistant message, splitting of tool results into ``tool`` messages, and the check for results
that answer no call. Shared so every format pairs and groups the same way (R-SES-1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from iris.session import ContentBlock, Message, Role, ToolResultBlock, Usage

from ._common import LineErrors
from ._fast import maker

__all__ = ["MessageList"]


@dataclass(slots=True)
class _Entry:
    role: Role
    blocks: list[ContentBlock]
    id: str | None = None
    usage: Usage | None = None
    model: str | None = None
    timestamp: datetime | None = None
    synthetic: bool = False
    summary: bool = False
    provided: bool = False
    lines: list[int] = field(default_factory=list)

    def freeze(self) -> Message:
        return Message(role=self.role, content=tuple(self.blocks), id=self.id, usage=self.usage,
                       model=self.model, timestamp=self.timestamp, synthetic=self.synthetic,
                       is_compaction_summary=self.summary, compaction_provided=self.provided)

    def freeze_checked(self) -> Message:
        """:meth:`freeze` for an importer that has checked every value's type itself."""
        return _message(self.role, tuple(self.blocks), self.id, self.usage, self.model,
                        self.timestamp, self.synthetic, self.summary, self.provided)


_message = maker(Message, "role", "content", "id", "usage", "model", "timestamp", "synthetic",
                 "is_compaction_summary", "compaction_provided")


class MessageList:
    """Mutable while importing; :meth:`freeze` returns the frozen messages.

    ``checked=True`` promises that every value passed in already has its field's type (roles,
    ids, models as ``str``, timestamps as aware ``datetime``, flags as ``bool``): the messages are
    then built without validating them again (see ``_fast``)."""

    def __init__(self, *, checked: bool = False) -> None:
        self.checked = checked
        self.entries: list[_Entry] = []
        self._groups: dict[str, int] = {}
        self.calls: set[str] = set()
        self._results: list[tuple[str, int]] = []
        self._repeated: list[tuple[str, int, int, str]] = []  # (id, line, message index, kind)
        self._answered: set[str] = set()

    @property
    def messages(self) -> list[_Entry]:
        return self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, role: Role, blocks: list[ContentBlock] | tuple[ContentBlock, ...], *,
            id: str | None = None, usage: Usage | None = None, model: str | None = None,
            timestamp: datetime | None = None, synthetic: bool = False, summary: bool = False,
            provided: bool = False, line: int = 0) -> int:
        """Append one message; returns its index. ``provided`` marks context a recorded
        compaction put in place (``Message.compaction_provided``)."""
        self.entries.append(_Entry(role=role, blocks=list(blocks), id=id, usage=usage, model=model,
                                   timestamp=timestamp, synthetic=synthetic, summary=summary,
                                   provided=provided, lines=[line]))
        self._note(blocks, line, provided)
        return len(self.entries) - 1

    def extend(self, index: int, blocks, line: int = 0) -> None:
        """More blocks of the message at ``index`` (the same response)."""
        entry = self.entries[index]
        entry.blocks.extend(blocks)
        entry.lines.append(line)
        self._note(blocks, line, entry.provided)

    def _note(self, blocks, line: int, provided: bool = False) -> None:
        for block in blocks:
            if block.type == "tool_call":
                if block.id in self.calls and not provided:  # a provided copy repeats by design
                    self._repeated.append((block.id, line, len(self.entries) - 1, "call"))
                self.calls.add(block.id)
            elif block.type == "tool_result":
                self._results.append((block.call_id, line))
                if block.call_id in self._answered and not provided:
                    self._repeated.append((block.call_id, line, len(self.entries) - 1, "result"))
                self._answered.add(block.call_id)

    def add_assistant(self, key: str, blocks, usage: Usage | None, model: str | None,
                      timestamp: datetime | None, synthetic: bool = False, line: int = 0) -> int:
        """Add the pieces of the response ``key``; pieces of one response form one message and
        the usage of the last piece that has one wins (Claude Code repeats placeholder usage)."""
        index = self._groups.get(key)
        if index is None:
            index = self.add("assistant", blocks, id=key, usage=usage, model=model,
                             timestamp=timestamp, synthetic=synthetic, line=line)
            self._groups[key] = index
            return index
        self.extend(index, blocks, line)
        if usage is not None:
            self.entries[index].usage = usage
        return index

    def add_user(self, id: str | None, blocks, timestamp: datetime | None, synthetic: bool,
                 summary: bool, line: int = 0) -> None:
        """A user turn: tool results (and the images inside them) become one ``tool`` message,
        the remaining blocks one ``user`` message after it."""
        results = [b for b in blocks if isinstance(b, ToolResultBlock) or _result_image(b, blocks)]
        rest = [b for b in blocks if not (isinstance(b, ToolResultBlock) or _result_image(b, blocks))]
        if results:
            self.add("tool", results, id=id, timestamp=timestamp, line=line)
        if rest:
            self.add("user", rest, id=id, timestamp=timestamp, synthetic=synthetic,
                     summary=summary, line=line)

    def check_orphans(self, errors: LineErrors, carried_before: int | None = None) -> None:
        """Results whose call id matches no call: an error in strict mode; kept (and reported
        as a warning, and by ``Session.index.orphan_results``) in lenient mode. In a file that
        continues an earlier conversation, a result on a line before ``carried_before`` (the
        file's first response) answers a call of the history the file does not hold: kept with a
        warning in strict mode too."""
        for call_id, line in self._results:
            if call_id not in self.calls:
                problem = f"tool result for call {call_id!r}, which no assistant message made"
                if carried_before is not None and line < carried_before:
                    errors.warn(problem + " in this file: the file continues an earlier "
                                "conversation, whose call it answers (kept as an orphan result)",
                                line=line or None)
                elif errors.lenient:
                    errors.warn(problem + " (kept as an orphan result)", line=line or None)
                else:
                    errors.error(problem, line=line or None)

    def check_repeated_calls(self, errors: LineErrors, field: str,
                             result_field: str | None = None) -> None:
        """Tool calls whose id an earlier call already has, and second results for one call (a
        file appended to itself, a duplicated span or line): a result could not say which call
        it answers. An error of ``field`` (``result_field`` for a result) in strict mode; kept and
        reported as a warning in lenient mode. Copies a recorded compaction provided
        (``provided``) repeat ids by design and are not counted."""
        for call_id, line, index, kind in self._repeated:
            problem = (f"tool call id {call_id!r} (message #{index}) is the id of an earlier call "
                       "too: each call needs its own id to pair with its result" if kind == "call"
                       else f"a second result for tool call {call_id!r} (message #{index}): each "
                       "call has one result")
            where = field if kind == "call" else result_field or field
            if errors.lenient:
                errors.warn(problem + " (kept)", line=line or None, field=where)
            else:
                errors.error(problem, line=line or None, field=where)

    def freeze(self) -> list[Message]:
        if self.checked:
            return [entry.freeze_checked() for entry in self.entries]
        return [entry.freeze() for entry in self.entries]


def _result_image(block: ContentBlock, blocks) -> bool:
    """Images that came out of a tool result are marked by a ``name`` starting with the call id
    of a result in the same turn."""
    if block.type != "image":
        return False
    return any(isinstance(b, ToolResultBlock) and block.name.startswith(b.call_id + "/")
               for b in blocks)
