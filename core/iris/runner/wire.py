"""A prepared request as the chat-completions wire sees it, and an answer back as a message.

Records keep the logical root ``<session_dir>`` in recovery addresses (``Full output saved to
<session_dir>/reduced-artifacts/…``) so they do not depend on the machine. The model, however,
must be able to read that file back with its own file tool, so every text sent on the wire
carries the real path instead (:func:`real_paths`), and a checkpoint's list of archived history
files names each ``history-N.md`` by its real path (:func:`real_archives`): only the wire text
changes, never a record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from ..preparation.records import MessageMark
from ..reduction.artifacts import LOGICAL_ROOT, REDUCED_DIR, TOOL_OUTPUTS_DIR
from ..session import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)

__all__ = ["real_archives", "real_paths", "reply_message", "reply_usage", "wire_messages", "wire_tools"]

_ADDRESS = re.compile(re.escape(LOGICAL_ROOT) + r"/((?:" + re.escape(REDUCED_DIR) + "|"
                      + re.escape(TOOL_OUTPUTS_DIR) + r")/[a-z0-9_-][a-z0-9_.-]{0,39}-[0-9a-f]{12}\.txt)")
"""An artifact address as the engine writes it (``safe_tool_name`` + 12 hex of sha256): nothing
else, so no text can make the wire name a file outside the two folders."""


def real_paths(text: str, session_dir: Path) -> str:
    """``text`` with every recovery address under the logical root rewritten to the real file
    in ``session_dir`` (only names of the engine's artifact shape, which never leave their
    folder)."""
    if LOGICAL_ROOT not in text:
        return text
    root = session_dir.resolve()
    return _ADDRESS.sub(lambda m: str(root / m.group(1)), text)


_ARCHIVE_LINE = re.compile(r"^- (history-\d+\.md) (\(\d+ messages\))$", re.MULTILINE)


def real_archives(text: str, session_dir: Path) -> str:
    """A checkpoint's list of archived history files with each file's real path (the checkpoint
    names them by file name, ``- history-1.md (15 messages)``, relative to the session folder)."""
    root = session_dir.resolve()
    return _ARCHIVE_LINE.sub(lambda m: f"- {root / m.group(1)} {m.group(2)}", text)


def _text(blocks: Sequence[object], session_dir: Path) -> str:
    parts: list[str] = []
    for b in blocks:
        if isinstance(b, TextBlock):
            parts.append(b.text)
        elif isinstance(b, ImageBlock):
            parts.append(f"[image {b.name} model={b.model_ref or '-'}]")
    return real_paths("\n".join(parts), session_dir)


def _assistant(message: Message, session_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": _text(message.content, session_dir) or None}
    calls = [{"id": c.id, "type": "function",
              "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
             for c in message.tool_calls]
    if calls:
        out["tool_calls"] = calls
    return out


def wire_messages(messages: Sequence[Message], session_dir: Path,
                  marks: Sequence[MessageMark] = ()) -> list[dict[str, Any]]:
    """The chat-completions ``messages`` of a prepared request (thinking blocks are not sent);
    ``marks`` (aligned with ``messages``) tell which messages are checkpoints, whose archive
    list gets real paths too."""
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if i < len(marks) and marks[i].origin == "checkpoint":
            out.append({"role": "system" if m.role == "system" else "user",
                        "content": real_archives(_text(m.content, session_dir), session_dir)})
            continue
        if m.role == "assistant":
            out.append(_assistant(m, session_dir))
            continue
        for r in m.tool_results:
            out.append({"role": "tool", "tool_call_id": r.call_id,
                        "content": real_paths(r.text, session_dir)})
        rest = [b for b in m.content if not isinstance(b, (ToolResultBlock, ThinkingBlock))]
        if rest:
            role = "system" if m.role == "system" else "user"
            out.append({"role": role, "content": _text(rest, session_dir)})
    return out


def wire_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Tool schemas (``name``, ``description``, ``input_schema``) as chat-completions functions."""
    return [{"type": "function", "function": {
        "name": str(t["name"]), "description": str(t.get("description", "")),
        "parameters": t.get("input_schema") or {"type": "object", "properties": {}}}}
        for t in tools]


def _object(value: object) -> dict[str, Any]:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def reply_usage(answer: Mapping[str, Any], model: str) -> Usage | None:
    """The provider's usage of an answer (OpenAI counts: cached reads are inside the prompt)."""
    usage = _object(answer.get("usage"))
    if not usage:
        return None
    cached = _count(_object(usage.get("prompt_tokens_details")).get("cached_tokens"))
    return Usage(input_tokens=_count(usage.get("prompt_tokens")),
                 output_tokens=_count(usage.get("completion_tokens")), cache_read_tokens=cached,
                 cache_read_in_input=True, model=model, raw=usage)


def _arguments(text: object) -> dict[str, Any]:
    if isinstance(text, dict):
        return cast("dict[str, Any]", text)
    try:
        value: object = json.loads(text) if isinstance(text, str) and text.strip() else {}
    except json.JSONDecodeError:
        return {"_raw": text}
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {"_raw": text}


def reply_message(answer: Mapping[str, Any], model: str, *, id_prefix: str = "call") -> Message:
    """The assistant message of a chat-completions answer (a call without an id gets
    ``<id_prefix>_<i>``); raises ValueError naming the field when the answer has no
    ``choices[0].message``."""
    choices = answer.get("choices")
    first = cast("list[object]", choices)[0] if isinstance(choices, list) and choices else None
    message = _object(_object(first).get("message"))
    if not message:
        raise ValueError("the answer has no choices[0].message")
    blocks: list[TextBlock | ThinkingBlock | ToolCallBlock] = []
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        blocks.append(ThinkingBlock(text=reasoning))
    content = message.get("content")
    if isinstance(content, str) and content:
        blocks.append(TextBlock(text=content))
    calls = message.get("tool_calls")
    for i, call in enumerate(cast("list[object]", calls) if isinstance(calls, list) else []):
        c, fn = _object(call), _object(_object(call).get("function"))
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"choices[0].message.tool_calls[{i}].function.name is missing")
        call_id = c.get("id") if isinstance(c.get("id"), str) and c.get("id") else f"{id_prefix}_{i}"
        blocks.append(ToolCallBlock(id=str(call_id), name=name, arguments=_arguments(fn.get("arguments"))))
    named = answer.get("model")
    return Message(role="assistant", content=tuple(blocks),
                   id=answer.get("id") if isinstance(answer.get("id"), str) else None,
                   model=named if isinstance(named, str) and named else model,
                   usage=reply_usage(answer, named if isinstance(named, str) and named else model))
