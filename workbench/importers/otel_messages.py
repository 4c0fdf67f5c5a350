"""The messages one GenAI span records, in each attribute convention, as plain ``(role, blocks)``.

Conventions read, newest first:

- ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (semantic conventions ≥ 1.37): JSON of
  ``[{role, parts: [{type: "text", content} | {type: "tool_call", id, name, arguments} |
  {type: "tool_call_response", id, response, is_error?} | {type: "reasoning", content}]}]``
  (``is_error: true`` marks an error result, as the workbench's own export writes it); OpenAI-style
  ``{role, content, tool_calls, tool_call_id}`` messages in the same attribute are read too, and
  ``gen_ai.system_instructions`` becomes the system message;
- the indexed attributes ``gen_ai.prompt.N.role``/``.content``/``.tool_call_id`` and
  ``gen_ai.completion.N.role``/``.content``/``.tool_calls.M.id|name|arguments`` (OpenLLMetry);
- the same ``gen_ai.input.messages``/``gen_ai.output.messages`` on the span event
  ``gen_ai.client.inference.operation.details``;
- the span events ``gen_ai.content.prompt`` (attribute ``gen_ai.prompt``) and
  ``gen_ai.content.completion`` (attribute ``gen_ai.completion``), each a JSON message list;
- any-agent's ``gen_ai.output`` (text, or JSON ``[{"tool.name", "tool.args"}]``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from iris.errors import SessionFormatError
from iris.session import ContentBlock, Role, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock

from ._common import json_error_words, parse_arguments
from .otel_spans import Span

__all__ = ["Turn", "has_input", "input_turns", "output_turns"]

Turn = tuple[Role, list[ContentBlock]]
_ROLES: dict[str, Role] = {"system": "system", "developer": "system", "user": "user", "human": "user",
          "assistant": "assistant", "model": "assistant", "ai": "assistant", "tool": "tool",
          "function": "tool"}


_DETAILS = "gen_ai.client.inference.operation.details"


def _attrs(span: Span) -> dict[str, Any]:
    """The span's attributes, with those of its inference-details event where the span lacks them
    (the conventions allow the messages on either)."""
    details = next((a for name, a in span.events if name == _DETAILS), None)
    return {**details, **span.attrs} if details else span.attrs


def has_input(span: Span) -> bool:
    """Whether the span records its request's messages (in any convention), without reading them."""
    attrs = _attrs(span)
    return ("gen_ai.input.messages" in attrs or any(k.startswith("gen_ai.prompt.") for k in attrs)
            or any(name == "gen_ai.content.prompt" for name, _ in span.events))


def input_turns(span: Span) -> list[Turn] | None:
    """The request's messages, or None when the span does not record them."""
    attrs = _attrs(span)
    raw = _json(attrs.get("gen_ai.input.messages"), "gen_ai.input.messages")
    if raw is None:
        raw = _indexed(attrs, "gen_ai.prompt") or _event(span, "gen_ai.content.prompt", "gen_ai.prompt")
    if raw is None:
        return None
    turns = _turns(raw, "gen_ai.input.messages")
    system = _json(attrs.get("gen_ai.system_instructions"), "gen_ai.system_instructions")
    if system and not any(role == "system" for role, _ in turns):
        turns.insert(0, ("system", _blocks(system, "gen_ai.system_instructions")))
    return turns


def output_turns(span: Span) -> list[Turn] | None:
    """The response's messages, or None when the span does not record them."""
    attrs = _attrs(span)
    raw = _json(attrs.get("gen_ai.output.messages"), "gen_ai.output.messages")
    if raw is None:
        raw = _indexed(attrs, "gen_ai.completion") or _event(span, "gen_ai.content.completion",
                                                             "gen_ai.completion")
    if raw is not None:
        return _turns(raw, "gen_ai.output.messages")
    if "gen_ai.output" in attrs:
        return [("assistant", _any_agent_output(attrs["gen_ai.output"], span.id))]
    return None


def _json(value: Any, field: str) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise SessionFormatError(f"not valid JSON ({json_error_words(exc)})", field=field) from None
    except ValueError:
        raise SessionFormatError("not valid JSON", field=field) from None


def _event(span: Span, name: str, key: str) -> Any:
    for event_name, attrs in span.events:
        if event_name == name and key in attrs:
            return _json(attrs[key], f"events[{name}].{key}")
    return None


_INDEX = re.compile(r"^(\d+)\.(.+)$")


def _indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]] | None:
    """``prefix.N.key`` (and ``prefix.N.tool_calls.M.key``) attributes as OpenAI-style messages."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix + "."):
            continue
        m = _INDEX.match(key[len(prefix) + 1:])
        if not m:
            continue
        msg = found.setdefault(int(m.group(1)), {})
        rest = m.group(2).split(".")
        if rest[0] == "tool_calls" and len(rest) == 3 and rest[1].isdigit():
            calls = msg.setdefault("_calls", {})
            calls.setdefault(int(rest[1]), {})[rest[2]] = value
        else:
            msg[m.group(2)] = value
    if not found:
        return None
    out = []
    for _, msg in sorted(found.items()):
        calls = msg.pop("_calls", {})
        if calls:
            msg["tool_calls"] = [{"id": c.get("id"), "function": {"name": c.get("name"),
                                                                  "arguments": c.get("arguments")}}
                                 for _, c in sorted(calls.items())]
        out.append(msg)
    return out


def _turns(raw: Any, field: str) -> list[Turn]:
    if not isinstance(raw, list):
        raise SessionFormatError("must be a JSON array of messages", field=field)
    turns: list[Turn] = []
    for i, msg in enumerate(raw):
        if not isinstance(msg, dict):
            raise SessionFormatError("must be an object", field=f"{field}[{i}]")
        role = _ROLES.get(str(msg.get("role", "assistant")).lower())
        if role is None:
            raise SessionFormatError(f"unknown role {msg.get('role')!r}", field=f"{field}[{i}].role")
        blocks: list[ContentBlock] = _blocks(msg.get("parts", msg.get("content")), f"{field}[{i}]")
        blocks += [_openai_call(c, f"{field}[{i}].tool_calls[{n}]")
                   for n, c in enumerate(msg.get("tool_calls") or [])]
        if role == "tool" and not any(isinstance(b, ToolResultBlock) for b in blocks):
            call_id = msg.get("tool_call_id") or msg.get("id")
            if not isinstance(call_id, str) or not call_id:
                raise SessionFormatError("a tool message without tool_call_id",
                                         field=f"{field}[{i}].tool_call_id")
            blocks = [ToolResultBlock(call_id=call_id, text=_text_of(blocks))]
        turns.append((role, blocks))
    return turns


def _blocks(parts: Any, field: str) -> list[ContentBlock]:
    if parts is None or parts == "":
        return []
    if isinstance(parts, str):
        return [TextBlock(text=parts)]
    if not isinstance(parts, list):
        raise SessionFormatError("must be text or a list of parts", field=f"{field}.parts")
    blocks: list[ContentBlock] = []
    for n, part in enumerate(parts):
        if isinstance(part, str):
            blocks.append(TextBlock(text=part))
            continue
        if not isinstance(part, dict):
            raise SessionFormatError("must be an object", field=f"{field}.parts[{n}]")
        kind = part.get("type")
        text = part.get("content", part.get("text"))
        if kind == "tool_call":
            blocks.append(ToolCallBlock(id=str(part.get("id") or f"call-{n}"), name=str(part.get("name")),
                                        arguments=parse_arguments(part.get("arguments"))))
        elif kind == "tool_call_response":
            blocks.append(ToolResultBlock(call_id=str(part.get("id")), text=_as_text(part.get("response")),
                                          is_error=part.get("is_error") is True))
        elif kind in ("reasoning", "thinking") and isinstance(text, str):
            blocks.append(ThinkingBlock(text=text))
        elif isinstance(text, str):
            blocks.append(TextBlock(text=text))
    return blocks


def _openai_call(raw: Any, field: str) -> ToolCallBlock:
    if not isinstance(raw, dict):
        raise SessionFormatError("must be an object", field=field)
    fn = raw.get("function")
    if not isinstance(fn, dict):
        fn = raw
    return ToolCallBlock(id=str(raw.get("id")), name=str(fn.get("name")),
                         arguments=parse_arguments(fn.get("arguments")))


def _any_agent_output(value: Any, span_id: str) -> list[ContentBlock]:
    """any-agent writes the text, or a JSON list of ``{"tool.name", "tool.args"}`` calls."""
    parsed = value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [TextBlock(text=value)] if value else []
    if isinstance(parsed, list) and all(isinstance(c, dict) and "tool.name" in c for c in parsed):
        return [ToolCallBlock(id=f"{span_id}-{n}", name=str(c["tool.name"]),
                              arguments=parse_arguments(c.get("tool.args")))
                for n, c in enumerate(parsed)]
    return [TextBlock(text=_as_text(value))]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _text_of(blocks: list[ContentBlock]) -> str:
    return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
