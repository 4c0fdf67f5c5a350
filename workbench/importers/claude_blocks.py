"""Anthropic content blocks and usage as Claude Code records them → session blocks and usage.

Kept apart from the tree walk in ``claude_code.py`` because the block shapes are the Anthropic
Messages API's and are useful on their own. Images are never copied into the session (they can be
megabytes of base64): an :class:`ImageBlock` names them and records their source reference.
"""

from __future__ import annotations

import json
import re
from typing import Any

from iris.errors import SessionFormatError
from iris.session import (
    ContentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)

from ._common import MAX_COUNT, as_bool, as_dict, as_int, as_str, opt_str
from ._fast import maker
from ._nesting import within_nesting

__all__ = ["anthropic_usage", "command_text", "convert_content", "is_injected"]

#: Text Claude Code injects into user turns (reminders, local-command caveats and output,
#: interruption markers): context the model sees, but nothing a person typed.
_INJECTED = ("<system-reminder>", "<local-command-caveat>", "<local-command-stdout>",
             "<local-command-stderr>", "Caveat: The messages below were generated",
             "[Request interrupted by user", "<task-notification>", "<user-prompt-submit-hook>")


def convert_content(content: Any, role: str) -> tuple[ContentBlock, ...]:
    """``message.content`` (a string or a list of blocks) → session blocks."""
    if isinstance(content, str):
        return (_text(content),) if content else ()
    if not isinstance(content, list):
        raise SessionFormatError(
            f"must be a string or a list of blocks, got {type(content).__name__}",
            field="message.content")
    blocks: list[ContentBlock] = []
    for i, raw in enumerate(content):
        if not isinstance(raw, dict):
            as_dict(raw, f"message.content[{i}]")  # raises the field's error
        kind = raw.get("type")
        text = raw.get("text")
        if kind == "text" and isinstance(text, str):  # the common cases, checked inline
            blocks.append(_text(text))
        elif kind == "tool_use" and _plain_call(raw):
            blocks.append(_tool_call(raw["id"], raw["name"], within_nesting(raw["input"])))
        elif kind == "tool_result":
            blocks.extend(_tool_result(raw, i))
        else:
            blocks.extend(_block(raw, role, f"message.content[{i}]"))
    return tuple(blocks)


def _plain_call(raw: dict[str, Any]) -> bool:
    """A ``tool_use`` block whose fields need no conversion (anything else takes ``_block``)."""
    return type(raw.get("id")) is str and type(raw.get("name")) is str and type(raw.get("input")) is dict


# Values are checked here, so the blocks are built without validating them again (see _fast).
_text = maker(TextBlock, "text")
_thinking = maker(ThinkingBlock, "text", "signature")
_redacted = maker(ThinkingBlock, "text")
_tool_call = maker(ToolCallBlock, "id", "name", "arguments")
_result = maker(ToolResultBlock, "call_id", "text", "is_error", "image_refs")
_image_block = maker(ImageBlock, "name", "original_ref")
_usage = maker(Usage, "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
               "model", "raw")


def _block(raw: dict[str, Any], role: str, where: str) -> list[ContentBlock]:
    kind = raw.get("type")
    if kind == "text":
        return [_text(as_str(raw.get("text"), f"{where}.text"))]
    if kind == "thinking":
        return [_thinking(as_str(raw.get("thinking"), f"{where}.thinking"),
                          opt_str(raw.get("signature"), f"{where}.signature"))]
    if kind == "redacted_thinking":
        return [_redacted("[redacted thinking]")]
    if kind == "tool_use":
        return [_tool_call(as_str(raw.get("id"), f"{where}.id"), as_str(raw.get("name"), f"{where}.name"),
                           within_nesting(as_dict(raw.get("input", {}), f"{where}.input")))]
    if kind == "image":
        return [_image(raw, f"image-{where.rsplit('[', 1)[-1].rstrip(']')}")]
    if kind in ("server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "document"):
        # Server-side tools run inside one API response: no client call/result pair exists.
        return [_text(f"[{kind}] " + json.dumps(raw.get("input", raw.get("content", "")),
                                                ensure_ascii=False, sort_keys=True)[:2000])]
    raise SessionFormatError(f"unknown content block type {kind!r}", field=f"{where}.type")


def _tool_result(raw: dict[str, Any], i: int) -> list[ContentBlock]:
    call_id = raw.get("tool_use_id")
    if not isinstance(call_id, str):
        as_str(call_id, f"message.content[{i}].tool_use_id")  # raises the field's error
    content = raw.get("content", "")
    if isinstance(content, str):  # the common case: one text, no images
        return [_result(call_id, content, as_bool(raw.get("is_error"), f"message.content[{i}].is_error"), ())]
    texts: list[str] = []
    images: list[ImageBlock] = []
    if isinstance(content, list):
        where = f"message.content[{i}]"
        for j, item in enumerate(content):
            item = as_dict(item, f"{where}.content[{j}]")
            if item.get("type") == "image":
                images.append(_image(item, f"{call_id}/image-{len(images) + 1}"))
            elif item.get("type") == "text":
                texts.append(as_str(item.get("text"), f"{where}.content[{j}].text"))
            else:
                texts.append(json.dumps(item, ensure_ascii=False, sort_keys=True))
    elif content is not None:
        raise SessionFormatError(f"must be a string or a list, got {type(content).__name__}",
                                 field=f"message.content[{i}].content")
    result = _result(call_id, "\n".join(texts), as_bool(raw.get("is_error"), f"message.content[{i}].is_error"),
                     tuple(img.name for img in images))
    return [result, *images]


def _image(raw: dict[str, Any], name: str) -> ImageBlock:
    """Name and source of an image; base64 data is summarised, not copied."""
    source = raw.get("source")
    if not isinstance(source, dict):
        source = {}
    media = source.get("media_type") or "image"
    if source.get("type") == "url" and isinstance(source.get("url"), str):
        ref = source["url"]
    elif isinstance(source.get("data"), str):
        ref = f"inline:{media};base64,{len(source['data'])} chars"
    else:
        ref = None
    ext = media.split("/")[-1] if "/" in media else "img"
    return _image_block(f"{name}.{ext}" if "." not in name.rsplit("/", 1)[-1] else name, ref)


def anthropic_usage(raw: dict[str, Any], model: str | None) -> Usage:
    """Anthropic usage: ``input_tokens`` is only the uncached part, so cache reads and writes are
    added to get the prompt size (``cache_*_in_input`` stay False)."""
    counts = (raw.get("input_tokens"), raw.get("output_tokens"), raw.get("cache_read_input_tokens"),
              raw.get("cache_creation_input_tokens"))
    a, b, c, d = counts
    raw = within_nesting(raw)
    if type(a) is int and type(b) is int and type(c) is int and type(d) is int \
            and 0 <= min(a, b, c, d) and max(a, b, c, d) <= MAX_COUNT:  # not bool, in range
        return _usage(a, b, c, d, model, raw)
    return _usage(as_int(raw.get("input_tokens"), "message.usage.input_tokens"),
                  as_int(raw.get("output_tokens"), "message.usage.output_tokens"),
                  as_int(raw.get("cache_read_input_tokens"), "message.usage.cache_read_input_tokens"),
                  as_int(raw.get("cache_creation_input_tokens"), "message.usage.cache_creation_input_tokens"),
                  model, raw)


def is_injected(blocks: tuple[ContentBlock, ...]) -> bool:
    """True when every text block of a user turn is text Claude Code injected."""
    texts = [b.text for b in blocks if b.type == "text"]
    return bool(texts) and all(t.lstrip().startswith(_INJECTED) for t in texts)


_TAG = re.compile(r"<(command-name|command-args)>(.*?)</\1>", re.DOTALL)


def command_text(text: str) -> str:
    """A slash-command turn (``<command-name>/x</command-name><command-args>y…``) as ``/x y``."""
    if "<command-name>" not in text:
        return text
    parts = dict(_TAG.findall(text))
    return " ".join(p for p in (parts.get("command-name", ""), parts.get("command-args", "")) if p)
