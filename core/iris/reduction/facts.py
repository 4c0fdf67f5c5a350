"""Facts reduction needs from one tool call and its result.

The file path and displayed line range of a read (``READ_RESULT lines=A-B total=N`` header, else
numbered output, else ``offset``/``limit``-style arguments, else the whole file), the files an edit,
write, patch or delete changed with the pre-edit changed range when it can be known (unified-diff
hunk headers or explicit line arguments; otherwise unknown), the shell command line, the error status.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..frozen import FrozenModel
from .toolkinds import ToolKind

__all__ = ["FileChange", "ToolFacts", "extract_facts", "is_failure", "numbered_lines", "shell_command"]

WHOLE_FILE_END = 10**9
"""End line used for "to the end of the file" ranges."""
_LARGEST = 10**15

# Line numbers and counts have at most 15 digits (longer digit runs are not numbers to convert).
_READ_HEADER = re.compile(r"READ_RESULT\s+lines=(\d{1,15})-(\d{1,15})(?:\s+total=(\d{1,15}))?")
# "     12→text" (Claude Code), "12\ttext", "   12  text" (cat -n), "12: text" / "12| text".
_NUMBERED = re.compile(r"^\s*(\d{1,15})(?:→|\t|:\s|\|\s?|\s{2,})(.*)$")
_HUNK = re.compile(r"^@@+ -(\d{1,15})(?:,(\d{1,15}))? \+\d+(?:,\d+)? @@")
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+)$")
_DIFF_FILE = re.compile(r"^\+\+\+ (?:b/)?(.+)$")
_RETURNCODE = re.compile(r"^\s*<returncode>\s*(-?\d{1,15})\s*</returncode>")
_PATH_KEYS = ("file_path", "path", "filePath", "filename", "file", "notebook_path", "target_file")


_Frozen = FrozenModel


class FileChange(_Frozen):
    """One file changed by an edit/write/patch/delete call."""

    path: str
    start: int | None = None
    """First pre-edit line changed (1-based); None when unknown."""
    end: int | None = None
    """Last pre-edit line changed (inclusive); None when unknown."""
    shift: int | None = 0
    """Lines added minus lines removed; None when unknown."""
    whole_file: bool = False
    """The file was replaced as a whole (write, patch Add File)."""
    deleted: bool = False
    old_text: str | None = None
    """Replaced text (Claude Code ``old_string``) when the range must be located in an earlier read."""


class ToolFacts(_Frozen):
    """What reduction knows about one tool call and its result."""

    kind: ToolKind
    path: str | None = None
    """The file a read/edit/write/delete names (first one for multi-file patches)."""
    read_range: tuple[int, int] | None = None
    """Displayed lines ``(first, last)`` of a read, 1-based inclusive; None when not a read."""
    total_lines: int | None = None
    changes: tuple[FileChange, ...] = ()
    command: str | None = None
    """The shell command line."""
    is_error: bool = False


def shell_command(arguments: Mapping[str, Any]) -> str | None:
    """The command line of a shell-like call (``command``/``cmd`` as string or argv list)."""
    for key in ("command", "cmd", "_raw", "input", "chars"):
        value = arguments.get(key)
        if isinstance(value, list):
            parts = [str(v) for v in cast("list[object]", value)]
            if len(parts) >= 3 and parts[0] in ("bash", "sh", "zsh") and parts[1] in ("-lc", "-c"):
                return " ".join(parts[2:])
            return " ".join(parts)
        if isinstance(value, str) and value.strip():
            return value
    return None


def numbered_lines(text: str, limit: int | None = None) -> list[tuple[int, str]]:
    """``(line number, text)`` for each numbered line of a read output (others skipped)."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(text.splitlines()):
        if limit is not None and i >= limit:
            break
        m = _NUMBERED.match(line)
        if m:
            out.append((int(m.group(1)), m.group(2)))
    return out


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and 0 <= value <= _LARGEST:  # not inf, nan or 10**400
        return int(value)
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) <= 15:
        return int(value)
    return None


def _read_range(args: Mapping[str, Any], text: str) -> tuple[tuple[int, int], int | None]:
    header = _READ_HEADER.search(text[:400])
    if header:
        total = int(header.group(3)) if header.group(3) else None
        return (int(header.group(1)), int(header.group(2))), total
    lines = text.splitlines()  # only the first and the last numbered line matter
    i = next((k for k, line in enumerate(lines) if _NUMBERED.match(line)), None)
    if i is not None:
        j = next(k for k in range(len(lines) - 1, i - 1, -1) if _NUMBERED.match(lines[k]))
        if j > i or len(lines) == 1:
            first, last = _NUMBERED.match(lines[i]), _NUMBERED.match(lines[j])
            return (int(first.group(1)), int(last.group(1))), None  # type: ignore[union-attr]
    raw_view = args.get("view_range")
    view = cast("Sequence[object]", raw_view) if isinstance(raw_view, (list, tuple)) else ()
    if len(view) == 2 and _int(view[0]) is not None:
        end = _int(view[1])
        return (_int(view[0]) or 1, end if end and end > 0 else WHOLE_FILE_END), None
    start = _int(args.get("start_line")) or _int(args.get("offset"))
    end = _int(args.get("end_line"))
    limit = _int(args.get("limit"))
    first = max(start or 1, 1)
    if end is None and limit:
        end = first + limit - 1
    return (first, end or WHOLE_FILE_END), None


def _patch_changes(patch: str) -> list[FileChange]:
    """Changed ranges from unified-diff hunks or ``*** Begin Patch`` envelopes."""
    changes: list[FileChange] = []
    path: str | None = None
    mode = "Update"
    ranges: list[tuple[int, int, int]] = []
    unknown = False

    def flush() -> None:
        if path is None:
            return
        if mode in ("Add", "Delete"):
            changes.append(FileChange(path=path, whole_file=mode == "Add", deleted=mode == "Delete",
                                      start=None, end=None, shift=None))
        elif unknown or not ranges:
            changes.append(FileChange(path=path, start=None, end=None, shift=None))
        else:
            changes.append(FileChange(path=path, start=min(r[0] for r in ranges),
                                      end=max(r[1] for r in ranges), shift=sum(r[2] for r in ranges)))

    added = removed = 0
    for line in patch.splitlines():
        pf = _PATCH_FILE.match(line) or (None if line.startswith("+++ /dev/null") else _DIFF_FILE.match(line))
        if pf:
            if ranges:
                ranges[-1] = (ranges[-1][0], ranges[-1][1], added - removed)
            flush()
            path, mode = (pf.group(2), pf.group(1)) if pf.re is _PATCH_FILE else (pf.group(1), "Update")
            ranges, unknown, added, removed = [], False, 0, 0
            continue
        hunk = _HUNK.match(line)
        if hunk:
            if ranges:
                ranges[-1] = (ranges[-1][0], ranges[-1][1], added - removed)
            start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
            ranges.append((start, start + max(count, 1) - 1, 0))
            added = removed = 0
        elif line.startswith("@@"):
            unknown = True  # apply_patch context hunks carry no line numbers
        elif line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    if ranges:
        ranges[-1] = (ranges[-1][0], ranges[-1][1], added - removed)
    flush()
    return changes


def _edit_changes(kind: ToolKind, args: Mapping[str, Any], path: str | None) -> tuple[FileChange, ...]:
    if kind == "write":
        return (FileChange(path=path, whole_file=True, start=None, end=None, shift=None),) if path else ()
    if kind == "delete":
        return (FileChange(path=path, deleted=True, start=None, end=None, shift=None),) if path else ()
    for key in ("patch", "input", "_raw", "diff"):
        value = args.get(key)
        if isinstance(value, str) and ("@@" in value or "*** " in value):
            found = _patch_changes(value)
            if found:
                return tuple(found)
    if path is None:
        return ()
    start = _int(args.get("start_line")) or _int(args.get("line_start")) or _int(args.get("insert_line"))
    if start is not None:
        end = _int(args.get("end_line")) or _int(args.get("line_end")) or start
        return (FileChange(path=path, start=start, end=end, shift=None),)
    old, new = args.get("old_string", args.get("old_str")), args.get("new_string", args.get("new_str"))
    if isinstance(old, str) and isinstance(new, str) and old and not args.get("replace_all"):
        return (FileChange(path=path, start=None, end=None, old_text=old,
                           shift=new.count("\n") - old.count("\n")),)
    return (FileChange(path=path, start=None, end=None, shift=None),)


def is_failure(text: str, is_error: bool) -> bool:
    """Error status, or no status and content starting ``Error:``, or a non-zero ``<returncode>``."""
    if is_error:
        return True
    head = text.lstrip()[:200]
    if head.startswith("Error:"):
        return True
    rc = _RETURNCODE.match(head)
    return bool(rc and int(rc.group(1)) != 0)


def extract_facts(kind: ToolKind, arguments: Mapping[str, Any], text: str, is_error: bool) -> ToolFacts:
    """The :class:`ToolFacts` of one call (its kind, arguments) and its result text."""
    path = next((str(arguments[k]) for k in _PATH_KEYS if isinstance(arguments.get(k), str)), None)
    failed = is_failure(text, is_error)
    read_range = total = None
    changes: tuple[FileChange, ...] = ()
    if kind == "read" and path:
        read_range, total = _read_range(arguments, text)
    elif kind in ("edit", "write", "delete"):
        changes = _edit_changes(kind, arguments, path)
        if path is None and changes:
            path = changes[0].path
    command = shell_command(arguments) if kind == "shell" else None
    return ToolFacts(kind=kind, path=path, read_range=read_range, total_lines=total, changes=changes,
                     command=command, is_error=failed)
