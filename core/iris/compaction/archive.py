"""History archives (R-CMP-7): the compacted head, losslessly, as ``history-N.md``.

N is the highest existing N + 1 in the session directory. The file starts with a ``# Index`` of
message segments (``12: Tool result: read (2100 lines, LARGE)``; LARGE = 40 lines or more), then a
readable export (``User:``, ``Assistant:``, ``Thinking:``, ``# Tool call: x``, ``# Tool result: x``
blocks separated by ``---``), then the exact messages as JSON Lines in a fenced block, which is what
makes the archive lossless: :func:`read_archive` gives back the very messages that were archived.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import StorageError
from ..safe_files import write_file
from ..session import Message, ThinkingBlock, ToolCallBlock, ToolResultBlock, block_text

__all__ = ["ARCHIVE_FORMAT_VERSION", "next_archive_number", "read_archive", "render_archive",
           "store_archive", "write_archive"]

#: 1: index, readable export, JSON Lines of the exact messages.
ARCHIVE_FORMAT_VERSION = 1
LARGE_LINES = 40
_NAME = re.compile(r"^history-(\d+)\.md$")
_RAW_OPEN = "```jsonl iris-archive-messages"


def next_archive_number(work_dir: Path) -> int:
    numbers = [int(m.group(1)) for p in work_dir.glob("history-*.md")
               if (m := _NAME.match(p.name))] if work_dir.is_dir() else []
    return max(numbers, default=0) + 1


def _label(message: Message, names: dict[str, str]) -> str:
    results = message.tool_results
    if results:
        return "Tool result: " + ", ".join(names.get(r.call_id, "?") for r in results)
    if message.tool_calls:
        return "Assistant: tool call " + ", ".join(c.name for c in message.tool_calls)
    if message.is_compaction_summary:
        return "Checkpoint"
    return message.role.capitalize()


def _index(messages: Sequence[Message], first: int) -> list[str]:
    names: dict[str, str] = {}
    lines = ["# Index", ""]
    for i, message in enumerate(messages):
        for call in message.tool_calls:
            names[call.id] = call.name
        n = sum(len(block_text(b).splitlines()) for b in message.content)
        large = ", LARGE" if n >= LARGE_LINES else ""
        lines.append(f"{first + i}: {_label(message, names)} ({n} lines{large})")
    return lines


def _block(message: Message, names: dict[str, str]) -> str:
    out: list[str] = []
    for b in message.content:
        if isinstance(b, ToolCallBlock):
            names[b.id] = b.name
            out.append(f"# Tool call: {b.name}\n{json.dumps(b.arguments, ensure_ascii=False)}")
        elif isinstance(b, ToolResultBlock):
            out.append(f"# Tool result: {names.get(b.call_id, '?')}\n{b.text}")
        elif isinstance(b, ThinkingBlock):
            out.append(f"Thinking:\n{b.text}")
        else:
            out.append(f"{message.role.capitalize()}:\n{block_text(b)}")
    return "\n\n".join(out) or f"{message.role.capitalize()}: (empty)"


def render_archive(messages: Sequence[Message], *, number: int, first_index: int = 0,
                   session_id: str = "", model: str | None = None) -> str:
    """The archive text for ``messages`` (message ``first_index`` is the first archived one)."""
    names: dict[str, str] = {}
    export = "\n\n---\n\n".join(_block(m, names) for m in messages)
    raw = "\n".join(m.model_dump_json(exclude_none=False) for m in messages)
    header = [f"# Session Export (history-{number}.md, format {ARCHIVE_FORMAT_VERSION})",
              (f"Session: {session_id or '-'}  Model: {model or '-'}  Messages: {first_index}–"
               f"{first_index + len(messages) - 1}")]
    return "\n".join([*_index(messages, first_index), "", *header, "", export, "",
                      "## Exact messages", "", _RAW_OPEN, raw, "```", ""])


def write_archive(work_dir: Path, messages: Sequence[Message], *, number: int,
                  first_index: int = 0, session_id: str = "", model: str | None = None) -> Path:
    """Write ``history-<number>.md``; never overwrites an existing archive."""
    return store_archive(work_dir, render_archive(
        messages, number=number, first_index=first_index, session_id=session_id, model=model),
        number=number)


def store_archive(work_dir: Path, text: str, *, number: int) -> Path:
    """Write an already rendered archive text as ``history-<number>.md`` (never overwriting)."""
    path = Path(work_dir) / f"history-{number}.md"
    try:
        write_file(path, text, root=work_dir, overwrite=False)
    except FileExistsError:
        raise StorageError(f"{path}: archive already exists; refusing to overwrite") from None
    except OSError as exc:
        raise StorageError(f"{path}: cannot write archive: {exc.strerror or exc}") from None
    return path


def read_archive(path: Path) -> tuple[Message, ...]:
    """The exact messages stored in an archive."""
    text = Path(path).read_text(encoding="utf-8")
    start = text.rfind(_RAW_OPEN)
    if start < 0:
        raise StorageError(f"{path}: no exact-messages block")
    body = text[start + len(_RAW_OPEN):].split("\n```", 1)[0]
    return tuple(Message.model_validate_json(line) for line in body.splitlines() if line.strip())
