"""What the native format refuses beyond its JSON Schema (R-SES-5): token counts outside
0 … 2⁵³ − 1, timestamps outside years 1–9999 once expressed in UTC, a tool result whose call id no
earlier call has, and free-form values nested deeper than the records hold.

A strict import raises the first problem as a :class:`SessionFormatError` naming the file, the line
and the field. A lenient import keeps the line: a bad count drops the message's usage (its tokens
are then estimated, the recorded bill does not move), a bad timestamp becomes "no time", an orphan
result is kept (``Session.index.orphan_results`` lists it); each as a warning naming the line and
the field. Over-deep tool-call arguments and usage objects are kept as their JSON text in both
modes (:mod:`._nesting`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from iris.errors import SessionFormatError
from iris.frozen import UNCHANGED
from iris.session import ContentBlock, Message, SessionHeader, ToolCallBlock, ToolResultBlock

from ._common import MAX_COUNT
from ._nesting import too_deep, within_nesting

__all__ = ["NativeChecks"]

_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def _in_range(value: datetime) -> bool:
    try:
        value.astimezone(UTC)
    except (OverflowError, ValueError):
        return False
    return True


def _bad_count(value: object) -> bool:
    return isinstance(value, int) and not 0 <= value <= MAX_COUNT


class NativeChecks:
    """The checks of one native file, line by line (keeps the ids of the calls seen so far)."""

    def __init__(self, path: str | Path | None, *, lenient: bool,
                 warnings: list[SessionFormatError] | None) -> None:
        self.path = path
        self.lenient = lenient
        self.warnings = warnings
        self.calls: set[str] = set()

    def _problem(self, problem: str, lineno: int, field: str, kept: str) -> None:
        if not self.lenient:
            raise SessionFormatError(problem, path=self.path, line=lineno, field=field)
        if self.warnings is not None:
            self.warnings.append(SessionFormatError(f"{problem} ({kept})", path=self.path,
                                                    line=lineno, field=field))

    def _limits(self, limits: object, lineno: int) -> None:
        for name in ("context", "input", "output"):
            value = limits.get(name) if isinstance(limits, dict) else getattr(limits, name, None)
            if _bad_count(value):
                raise SessionFormatError(f"must be a count from 0 to {MAX_COUNT:,}, got {value:,}",
                                         path=self.path, line=lineno, field=f"limits.{name}")

    def header(self, header: SessionHeader, lineno: int) -> None:
        """The header's limits and creation time (a bad header is an error in both modes)."""
        self._limits(header.limits, lineno)
        if header.created_at is not None and not _in_range(header.created_at):
            raise SessionFormatError(f"not a timestamp in range: {header.created_at.isoformat()!r}",
                                     path=self.path, line=lineno, field="created_at")

    def counts(self, values: dict[str, object], lineno: int) -> None:
        """Counts and indices of a model switch, (micro)compaction or snapshot line (refused)."""
        for name in ("at_message", "pre_tokens", "tokens_saved", "step_index"):
            if _bad_count(values.get(name)):
                raise SessionFormatError(f"must be a count from 0 to {MAX_COUNT:,}, got "
                                         f"{values[name]:,}", path=self.path, line=lineno,
                                         field=name)
        self._limits(values.get("limits"), lineno)

    def message(self, message: Message, lineno: int) -> Message:
        """``message`` checked (strict) or with its bad values dropped and noted (lenient)."""
        usage, timestamp = message.usage, message.timestamp
        if usage is not None:
            bad = next((n for n in _COUNTS if _bad_count(getattr(usage, n))), None)
            if bad is not None:
                self._problem(f"must be a count from 0 to {MAX_COUNT:,}, got "
                              f"{getattr(usage, bad):,}", lineno, f"usage.{bad}",
                              "the message is kept without its usage")
                usage = None
            elif usage.raw is not None and too_deep(usage.raw):
                usage = usage.evolve(**UNCHANGED, raw=within_nesting(usage.raw))
        if timestamp is not None and not _in_range(timestamp):
            self._problem(f"not a timestamp in range: {timestamp.isoformat()!r}", lineno,
                          "timestamp", "the message is kept without a time")
            timestamp = None
        content = self._content(message, lineno)
        if usage is message.usage and timestamp is message.timestamp and content is message.content:
            return message
        return message.evolve(**UNCHANGED, usage=usage, timestamp=timestamp, content=content)

    def _content(self, message: Message, lineno: int) -> tuple[ContentBlock, ...]:
        content = message.content
        blocks: list[ContentBlock] | None = None
        for n, block in enumerate(content):
            if isinstance(block, ToolCallBlock):
                if message.role == "assistant":
                    self.calls.add(block.id)
                if too_deep(block.arguments):
                    blocks = blocks or list(content)
                    blocks[n] = block.evolve(**UNCHANGED, arguments=within_nesting(block.arguments))
            elif isinstance(block, ToolResultBlock) and message.role != "assistant" \
                    and block.call_id not in self.calls:
                self._problem(f"tool result for call {block.call_id!r}, which no earlier "
                              "assistant message made", lineno, f"content.{n}.call_id",
                              "kept as an orphan result")
        return content if blocks is None else tuple(blocks)
