"""Format detection from the first records of a file, so users never have to name the format.

JSON Lines formats are recognised by the shape of their first parseable lines (a few broken lines
at the top do not hide the format). A file that is one JSON document spread over several lines is
parsed whole and judged as one record; when it cannot be parsed (a truncated file) its leading
keys decide. Each registered importer's ``detect`` is asked in priority order
(:mod:`.registry`); a file none of them claims is an "unknown session format".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError

from ._source import open_bytes, read_bytes

__all__ = ["detect", "detect_record"]

#: How many leading non-blank lines are examined before giving up.
_PROBE_LINES = 50
_PROBE_BYTES = 1 << 20
#: Keys of a document too broken to parse, and the format they point to (the first found wins).
_KEY_HINTS = (("resourceSpans", "otel"), ("trajectory", "swe_agent"), ("history", "swe_agent"),
              ("messages", "openai_chat"))


def detect_record(data: Any) -> str | None:
    """The format a single JSON value belongs to, or None when it says nothing."""
    from .registry import importers

    return next((imp.name for imp in importers() if _claims(imp, data)), None)


def _claims(importer: Any, data: Any) -> bool:
    try:
        return bool(importer.detect(data))
    except Exception:  # noqa: BLE001 - a plugin's detect failing means "not mine"
        return False


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
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        probed += 1
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, or hostile nesting
            record = None
        if _is_copilot_cli(record):
            raise SessionFormatError(
                "a GitHub Copilot CLI session (its first event is session.start from "
                "copilot-agent): not a format the workbench imports", path=path, line=lineno)
        found = detect_record(record) if record is not None else None
        if found:
            return found
        if probed >= _PROBE_LINES:
            break
    found = _whole_document(path, text)
    if found:
        return found
    from .registry import formats

    first = next((n for n, raw in enumerate(text.splitlines(), start=1) if raw.strip()), 1)
    raise SessionFormatError(
        f"unknown session format: none of {', '.join(formats())} matches the first records",
        path=path, line=first)


def _whole_document(path: Path, text: str) -> str | None:
    """The format of a file that is one JSON document over several lines, if it is one."""
    first = text.lstrip()[:1]
    if first not in ("[", "{") or _first_line_is_json(text):
        return None
    try:
        document = json.loads(read_bytes(path))
    except (ValueError, RecursionError):  # broken or cut: judge by the leading keys
        pass
    else:
        if _is_gemini_cli(document):
            raise SessionFormatError(
                "a Gemini CLI session (one JSON document whose messages have a type such as user "
                "or gemini, and no role): not a format the workbench imports", path=path, line=1)
        return detect_record(document)
    hits = [(m.start(), fmt) for key, fmt in _KEY_HINTS
            if (m := re.search(rf'"{key}"\s*:', text))]
    if hits:
        return min(hits)[1]  # the key that comes first: nested keys come after the top-level one
    return "openai_chat" if first == "[" else None


def _is_copilot_cli(data: Any) -> bool:
    """GitHub Copilot CLI's event log: ``{"type": "session.start", "data": {"producer":
    "copilot-agent", …}}`` first."""
    return (isinstance(data, dict) and data.get("type") == "session.start"
            and isinstance(data.get("data"), dict)
            and data["data"].get("producer") == "copilot-agent")


def _is_gemini_cli(data: Any) -> bool:
    """Gemini CLI's saved session: ``{sessionId, projectHash, messages: [{type: user|gemini|
    info|warning…}]}`` (its messages have a ``type`` and no ``role``, so no importer reads it)."""
    if not isinstance(data, dict) or "projectHash" not in data or "sessionId" not in data:
        return False
    messages = data.get("messages")
    return isinstance(messages, list) and all(
        isinstance(m, dict) and "type" in m and "role" not in m for m in messages)


def _first_line_is_json(text: str) -> bool:
    line = text.lstrip().split("\n", 1)[0]
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _mostly_text(data: bytes) -> bool:
    """True when a sample is valid UTF-8 apart from a possibly cut final character."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3
    return b"\x00" not in data
