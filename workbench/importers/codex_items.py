"""Codex ``response_item`` payloads and usage objects → session blocks and usage.

Pure conversions (no importer state), so a bad item fails before anything is added and a lenient
import can leave exactly that line out.
"""

from __future__ import annotations

import json
import re
from typing import Any

from iris.errors import SessionFormatError
from iris.session import (
    ContentBlock,
    ImageBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)

from ._common import as_dict, as_int, as_list, as_str, parse_arguments
from ._fast import maker
from ._nesting import within_nesting

__all__ = ["as_items", "codex_usage", "convert_item"]

#: Text that marks a user item as context Codex injected (environment, AGENTS.md, instructions).
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
             "<INSTRUCTIONS>", "<turn_aborted>", "<user_shell_command>")
_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "developer": "system", "system": "system"}
#: A redacted rollout's stand-in for hidden text, with the hidden text's length (the shape
#: workbench.analysis.redaction reads; importers sit below it and cannot import it).
_REDACTED = re.compile(r"\[REDACTED_[A-Z0-9_]+ len=(\d+) sha=[0-9a-fA-F]+\]")
#: Items that carry no model context the workbench can show.
_IGNORED = {"ghost_snapshot", "other"}

#: A role with its blocks, or no role (add nothing) with blocks None for an unknown item type.
Converted = tuple[Role, list[ContentBlock], bool] | tuple[None, list[ContentBlock] | None, bool]


# Values are checked here (as_str, as_int, parse_arguments), so the records are built without
# validating them again (see _fast).
_text = maker(TextBlock, "text")
_thinking = maker(ThinkingBlock, "text", "encrypted_chars")
_image = maker(ImageBlock, "name", "original_ref")
_call_block = maker(ToolCallBlock, "id", "name", "arguments")
_result = maker(ToolResultBlock, "call_id", "text", "is_error")
_usage = maker(Usage, "input_tokens", "output_tokens", "cache_read_tokens", "cache_read_in_input", "model", "raw")


def convert_item(payload: dict[str, Any]) -> Converted:
    """``(role, blocks, synthetic)`` for one item; role None means "add nothing" (blocks None:
    an unknown item type, worth a warning)."""
    kind = as_str(payload.get("type"), "payload.type")
    if kind == "message":
        return _message(payload)
    if kind == "reasoning":
        text = _reasoning_text(payload)
        encrypted = _encrypted_chars(payload.get("encrypted_content"))
        if not text and encrypted is None:
            return None, [], False
        return "assistant", [_thinking(text, encrypted)], False
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        return "assistant", [_call(payload, kind)], False
    if kind in ("function_call_output", "custom_tool_call_output"):
        return "tool", [_output(payload)], False
    if kind == "tool_search_call":  # the model looks up tools it may call (MCP namespaces)
        return "assistant", [_call_block(as_str(payload.get("call_id") or payload.get("id"),
                                                "payload.call_id"),
                                         "tool_search", parse_arguments(payload.get("arguments")))], False
    if kind == "tool_search_output":
        return "tool", [_search_output(payload)], False
    if kind == "web_search_call":
        action = payload.get("action")
        if not isinstance(action, dict):
            action = {}
        return "assistant", [_text(f"[web search] {action.get('query', '')}".rstrip())], False
    if kind == "compaction":
        size = len(payload.get("encrypted_content") or "")
        return "user", [_text(f"[compaction summary: encrypted, {size} chars]")], True
    if kind in _IGNORED:
        return None, [], False
    return None, None, False


def _message(payload: dict[str, Any]) -> Converted:
    role = payload.get("role")
    if role not in _ROLES:
        raise SessionFormatError(f"unknown role {role!r} (expected user, assistant or developer)",
                                 field="payload.role")
    blocks: list[ContentBlock] = []
    for i, part in enumerate(as_list(payload.get("content"), "payload.content")):
        part = as_dict(part, f"payload.content[{i}]")
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            blocks.append(_text(as_str(part.get("text"), f"payload.content[{i}].text")))
        elif kind == "input_image":
            url = part.get("image_url")
            ref = url if isinstance(url, str) and not url.startswith("data:") else (
                f"inline data URL, {len(url)} chars" if isinstance(url, str) else None)
            blocks.append(_image(f"image-{i}", ref))
        else:
            raise SessionFormatError(f"unknown content part type {kind!r}",
                                     field=f"payload.content[{i}].type")
    mapped = _ROLES[role]
    synthetic = mapped == "system" or (mapped == "user" and _injected(blocks))
    return mapped, blocks, synthetic


def _injected(blocks: list[ContentBlock]) -> bool:
    texts = [b.text for b in blocks if b.type == "text"]
    return bool(texts) and all(t.lstrip().startswith(_INJECTED) for t in texts)


def _reasoning_text(payload: dict[str, Any]) -> str:
    """Readable reasoning: the summary texts (else the raw reasoning content, when recorded)."""
    parts = []
    for source in ("summary", "content"):
        items = payload.get(source)
        if items is not None:
            parts = [as_str(as_dict(p, f"payload.{source}[{i}]").get("text"), f"payload.{source}[{i}].text")
                     for i, p in enumerate(as_list(items, f"payload.{source}"))]
        if parts:
            break
    return "\n".join(parts)


def _encrypted_chars(content: Any) -> int | None:
    """Length of a reasoning item's ``encrypted_content`` (sent back to the model with the
    reasoning, and counted by Codex's compaction trigger); a redacted rollout's placeholder
    states the original length."""
    if not isinstance(content, str) or not content:
        return None
    redacted = _REDACTED.fullmatch(content.strip())
    return int(redacted.group(1)) if redacted else len(content)


def _call(payload: dict[str, Any], kind: str) -> ToolCallBlock:
    call_id = as_str(payload.get("call_id") or payload.get("id"), "payload.call_id")
    if kind == "custom_tool_call":
        # Free-form tools (apply_patch) take raw text, kept whole under "input".
        return _call_block(call_id, as_str(payload.get("name"), "payload.name"), {"input": payload.get("input", "")})
    if kind == "local_shell_call":
        return _call_block(call_id, "local_shell", parse_arguments(payload.get("action")))
    return _call_block(call_id, as_str(payload.get("name"), "payload.name"),
                       parse_arguments(payload.get("arguments")))


def _output(payload: dict[str, Any]) -> ToolResultBlock:
    call_id = as_str(payload.get("call_id"), "payload.call_id")
    output = payload.get("output", "")
    is_error = False
    if isinstance(output, dict):
        # Structured outputs: {content, success} in some versions.
        is_error = output.get("success") is False
        output = output.get("content", json.dumps(output, ensure_ascii=False, sort_keys=True))
    if isinstance(output, list):
        output = "\n".join(p.get("text", "") for p in output if isinstance(p, dict))
    return _result(call_id, as_str(output, "payload.output", optional=True), is_error)


def _search_output(payload: dict[str, Any]) -> ToolResultBlock:
    """A ``tool_search_output``: the tools found (their definitions are what the model reads
    next), kept whole as JSON text."""
    call_id = as_str(payload.get("call_id"), "payload.call_id")
    tools = as_list(payload.get("tools") if payload.get("tools") is not None else [], "payload.tools")
    return _result(call_id, json.dumps(tools, ensure_ascii=False, sort_keys=True),
                   payload.get("status") not in (None, "completed"))


def codex_usage(last: dict[str, Any], model: str | None) -> Usage:
    """``last_token_usage`` of one model call. ``input_tokens`` includes the cached tokens
    (OpenAI convention), so ``cache_read_in_input`` is True."""
    field = "payload.info.last_token_usage"
    return _usage(as_int(last.get("input_tokens"), f"{field}.input_tokens"),
                  as_int(last.get("output_tokens"), f"{field}.output_tokens"),
                  as_int(last.get("cached_input_tokens"), f"{field}.cached_input_tokens"),
                  True, model, within_nesting(last))


def as_items(history: Any) -> list[dict[str, Any]]:
    items = as_list(history, "payload.replacement_history")
    return [as_dict(item, f"payload.replacement_history[{i}]") for i, item in enumerate(items)]
