"""Repeated ids in a Claude Code transcript: a file appended to itself, or a line whose ids copy
another's (R-SES-5).

Every line has its own ``uuid``; every ``tool_use`` block its own id, answered by one
``tool_result``; the lines of one response share ``message.id`` and follow each other (only the
tool results of that response may come between them). A repeat of any of these makes the
conversation ambiguous (the same call twice, a response grouped with a copy of itself), so a
strict import refuses it naming the file, the line and the field; a lenient import lists it as a
warning and leaves a line with a repeated ``uuid`` out (the copy of a line already read).

A line that repeats a ``uuid`` with the same content (kind, parents, message id, content blocks
and usage) is a copy, not an ambiguity, when it is not a conversation line (a ``progress`` or
``system`` line written again after a write that lost its newline) or when another run of the
agent wrote it (another ``cwd``, ``version``, ``gitBranch`` or ``slug``: a session resumed
elsewhere writes its last line again there). Strict and lenient imports alike leave it out with a
warning. A conversation line written again by the same run stays an error (a file appended to
itself).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .claude_tree import CONVERSATION, Line

__all__ = ["Repeat", "Repeats"]


@dataclass(frozen=True, slots=True)
class Repeat:
    """One repeated id: what repeats, the field that holds it, and whether the line is a copy."""

    problem: str
    field: str
    copy: bool = False
    """True for a repeated ``uuid``: the line is left out in lenient mode."""
    same: bool = False
    """A repeated ``uuid`` whose line holds what the first one held: left out in strict mode too."""


@dataclass(slots=True)
class Repeats:
    """The first line of every uuid, tool_use id, tool_result and response id seen so far."""

    uuids: dict[str, Line] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    results: dict[str, int] = field(default_factory=dict)
    responses: dict[str, int] = field(default_factory=dict)
    last_response: dict[bool, str] = field(default_factory=dict)
    """The response id of the last assistant line on each side (main, sidechain)."""

    def check(self, line: Line) -> Repeat | None:
        """The first repeat ``line`` makes, or None (then its ids are noted as seen)."""
        repeat = self._find(line)
        if repeat is None or not repeat.copy:
            self._note(line)
        return repeat

    def _find(self, line: Line) -> Repeat | None:
        if (first := self.uuids.get(line.uuid)) is not None:
            if _same_content(first, line) and (first.writer != line.writer
                                               or line.kind not in CONVERSATION):
                why = ("written by another run of the agent (a session resumed elsewhere writes "
                       "its last line again)" if first.writer != line.writer else
                       f"a {line.kind} line written again")
                return Repeat(f"uuid {line.uuid!r} repeats line {first.lineno} with the same "
                              f"content, {why}", "uuid", copy=True, same=True)
            return Repeat(f"uuid {line.uuid!r} repeats line {first.lineno} (a file appended to "
                          "itself?)", "uuid", copy=True)
        seen: set[str] = set()
        for call_id in line.call_ids:
            first = self.calls.get(call_id)
            if first is not None or call_id in seen:
                return Repeat(f"tool_use id {call_id!r} repeats the call of line {first or line.lineno}",
                              "message.content.id")
            seen.add(call_id)
        for call_id in line.result_ids:
            if (first := self.results.get(call_id)) is not None:
                return Repeat(f"a second tool_result for call {call_id!r} (the first is on line {first})",
                              "message.content.tool_use_id")
        msg = line.msg_id
        if msg is not None and msg in self.responses and self.last_response.get(line.sidechain) != msg:
            return Repeat(f"message.id {msg!r} repeats the response of line {self.responses[msg]} "
                          "after another response", "message.id")
        return None

    def _note(self, line: Line) -> None:
        self.uuids.setdefault(line.uuid, line)
        for call_id in line.call_ids:
            self.calls.setdefault(call_id, line.lineno)
        for call_id in line.result_ids:
            self.results.setdefault(call_id, line.lineno)
        if line.msg_id is not None:
            self.responses.setdefault(line.msg_id, line.lineno)
            self.last_response[line.sidechain] = line.msg_id


def _same_content(first: Line, again: Line) -> bool:
    """True when ``again`` holds the conversation content ``first`` held."""
    return (first.kind, first.parent, first.logical_parent, first.msg_id, first.blocks,
            first.usage, first.sidechain, first.compact_summary, first.call_ids,
            first.result_ids) == (again.kind, again.parent, again.logical_parent, again.msg_id,
                                  again.blocks, again.usage, again.sidechain,
                                  again.compact_summary, again.call_ids, again.result_ids)
