"""Format detection from the first records of a file, so users never have to name the format.

JSON Lines formats are recognised by the shape of their first parseable lines (a few broken lines
at the top do not hide the format); a file that is one JSON document (an array, or an object
spread over several lines) is an OpenAI chat message list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError

from ._source import open_bytes

__all__ = ["detect", "detect_record"]

#: How many leading non-blank lines are examined before giving up.
_PROBE_LINES = 50
_PROBE_BYTES = 1 << 20

_CODEX_TYPES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
_CLAUDE_TYPES = {"user", "assistant", "system", "progress", "summary", "file-history-snapshot",
                 "queue-operation"}


def detect_record(data: Any) -> str | None:
    """The format a single JSON value belongs to, or None when it says nothing."""
    if isinstance(data, list):
        return "openai_chat"
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    if kind == "header" and "session_id" in data:
        return "native"
    if kind in _CODEX_TYPES and "payload" in data:
        return "codex"
    if kind in _CLAUDE_TYPES and ("uuid" in data or "sessionId" in data or "message" in data
                                  or kind in {"summary", "file-history-snapshot", "queue-operation"}):
        return "claude_code"
    if isinstance(data.get("messages"), list):
        return "openai_chat"
    return None


def detect(path: Path) -> str:
    """Detect the format of ``path``; raise :class:`SessionFormatError` naming the file."""
    with open_bytes(path) as fh:
        head = fh.read(_PROBE_BYTES)
    if not head.strip():
        raise SessionFormatError("empty file: no session records", path=path)
    text = head.decode("utf-8", errors="replace")
    if "\ufffd" in text[:4096] and not _mostly_text(head[:4096]):
        raise SessionFormatError("not a text file (binary or not UTF-8)", path=path, line=1)
    probed = 0
    for raw in text.splitlines():
        if not raw.strip():
            continue
        probed += 1
        try:
            found = detect_record(json.loads(raw))
        except (json.JSONDecodeError, RecursionError):  # not JSON, or hostile nesting
            found = None
        if found:
            return found
        if probed >= _PROBE_LINES:
            break
    first = text.lstrip()[:1]
    if first == "[" or (first == "{" and not _first_line_is_json(text)):
        return "openai_chat"
    raise SessionFormatError(
        "unknown session format: none of native, claude_code, codex, openai_chat matches the "
        "first records", path=path)


def _first_line_is_json(text: str) -> bool:
    line = text.lstrip().split("\n", 1)[0]
    try:
        json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def _mostly_text(data: bytes) -> bool:
    """True when a sample is valid UTF-8 apart from a possibly cut final character."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3
    return b"\x00" not in data
