"""OpenAI chat-completions message lists → :class:`Session` (R-SES-4).

Accepted shapes: a JSON array of messages, or an object with ``messages`` (mini-swe-agent
trajectories add ``info``, ``instance_id`` and a per-message ``extra``). The document is read whole,
then decoded element by element, so every message knows its line number (counted on from the
previous element: linear in the file size) and a truncated file still yields the messages before
the cut in lenient mode.

Rules: ``tool_calls`` → :class:`ToolCallBlock` (JSON-string arguments parsed, non-objects kept as
``{"_raw": text}``); ``reasoning_content`` → :class:`ThinkingBlock`; ``role: tool`` messages pair
by ``tool_call_id``; usage comes from ``usage`` or ``extra.response.usage`` with ``prompt_tokens``
including cached tokens (``cache_read_in_input=True``) and mini-swe-agent's ``extra.cost`` kept as
the response's recorded cost (``Usage.cost_usd``); ``developer`` is a system message; the
mini-swe-agent ``exit`` message is not model context and is left out (reported as a warning that
names its ``exit_status``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError
from iris.session import (
    ContentBlock,
    ImageBlock,
    Message,
    Role,
    Session,
    SessionHeader,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)

from ._builder import MessageList
from ._common import (
    LineErrors,
    as_bool,
    as_dict,
    as_int,
    as_list,
    as_str,
    has_surrogate_escape,
    json_error_words,
    opt_str,
    parse_arguments,
    parse_time,
    short_id,
    shorten_title,
)
from ._cost import opt_cost
from ._nesting import within_nesting
from ._source import open_bytes, read_bytes

__all__ = ["load_openai_chat"]

_ROLES: dict[str, Role] = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
          "tool": "tool"}
_DECODER = json.JSONDecoder()
_TOO_MANY_DIGITS = "not valid JSON (a number with too many digits to read)"


def load_openai_chat(path: str | Path, *, lenient: bool = False,
                     skipped: list[SessionFormatError] | None = None,
                     warnings: list[SessionFormatError] | None = None,
                     content_hash: str | None = None) -> Session:
    """Import an OpenAI chat message list (see the module docstring for the rules)."""
    path = Path(path)
    errors = LineErrors(path, lenient, skipped, warnings)
    try:
        text = read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionFormatError(f"not UTF-8 text (byte offset {exc.start})", path=path,
                                 line=_line_of_byte(path, exc.start)) from None
    top: dict[str, Any] = {}
    out = MessageList()
    model: str | None = None
    escaped = has_surrogate_escape(text)
    for lineno, raw in _messages(text, top, errors):
        with errors.line(lineno):
            raw = errors.scrub(raw, lineno) if escaped else raw
            model = _add(out, as_dict(raw, "message"), lineno, errors) or model
    if not out.entries:
        raise errors.nothing_imported("message")
    out.check_orphans(errors)
    out.check_repeated_calls(errors, "tool_calls.id", "tool_call_id")
    messages = out.freeze()
    top = errors.scrub(top, None) if escaped else top
    header = _header(_top_fields(top, errors), messages, model, content_hash)
    return Session(header=header, messages=tuple(messages))


# --------------------------------------------------------------------------------------------
# Reading the document element by element


def _messages(text: str, top: dict[str, Any], errors: LineErrors) -> list[tuple[int, Any]]:
    """``(line, message)`` pairs; top-level members other than ``messages`` go into ``top``."""
    pos = _skip(text, 0)
    if pos >= len(text):
        raise SessionFormatError("empty file: no messages", path=errors.path)
    found: list[tuple[int, Any]] = []
    if text[pos] == "[":
        if (end := _array(text, pos, errors, found)) is not None:
            _nothing_after(text, end, errors)
        return found
    if text[pos] != "{":
        raise SessionFormatError("expected a JSON array of messages or an object with 'messages'",
                                 path=errors.path, line=_line(text, pos))
    try:
        has_messages, end = _object(text, pos, top, errors, found)
    except SessionFormatError as exc:
        if not (found and errors.lenient):
            raise
        errors.record(exc)  # broken after the messages (lenient): keep them
        return found
    if not has_messages:
        raise SessionFormatError("no 'messages' array", path=errors.path, field="messages",
                                 line=_line(text, pos))
    if end is not None:
        _nothing_after(text, end, errors)
    return found


def _nothing_after(text: str, end: int, errors: LineErrors) -> None:
    """Only white space may follow the document: a second document (a file appended to itself)
    or trailing garbage is an error naming its line (lenient: listed, the document kept)."""
    pos = _skip(text, end)
    if pos < len(text):
        errors.error("text after the end of the JSON document (a second document or trailing "
                     "garbage): one document per file", line=_line(text, pos))


def _object(text: str, pos: int, top: dict[str, Any], errors: LineErrors,
            found: list[tuple[int, Any]]) -> tuple[bool, int | None]:
    """Walk the top-level object's members: (whether it had a ``messages`` member, the position
    after its closing brace, or None when it was cut inside the messages (lenient))."""
    has_messages = False
    pos = _skip(text, pos + 1)
    while pos < len(text) and text[pos] != "}":
        key, pos = _decode(text, pos, errors)
        pos = _skip(text, pos)
        if not isinstance(key, str) or text[pos:pos + 1] != ":":
            raise SessionFormatError("expected a member name and ':'", path=errors.path,
                                     line=_line(text, pos))
        pos = _skip(text, pos + 1)
        if key == "messages":
            has_messages = True
            if text[pos:pos + 1] != "[":
                raise SessionFormatError("must be an array", path=errors.path,
                                         line=_line(text, pos), field="messages")
            end = _array(text, pos, errors, found)
            if end is None:
                return True, None  # truncated inside the messages (lenient): keep what was read
            pos = end
        else:
            top[key], pos = _decode(text, pos, errors)
        pos = _skip(text, pos)
        if text[pos:pos + 1] == ",":
            pos = _skip(text, pos + 1)
    if pos >= len(text):
        raise SessionFormatError("the top-level object is not closed (truncated file?)",
                                 path=errors.path, line=_line(text, pos))
    return has_messages, pos + 1


def _array(text: str, pos: int, errors: LineErrors, found: list[tuple[int, Any]]) -> int | None:
    """Decode the array at ``pos`` element by element into ``found``; the position after it,
    or None when it is cut or broken (an error, raised or recorded)."""
    pos = _skip(text, pos + 1)
    counted, line = pos, _line(text, pos)  # lines are counted on from the previous element
    while pos < len(text) and text[pos] != "]":
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            # A cut or broken element: nothing after it can be located reliably.
            errors.error(f"not valid JSON ({json_error_words(exc)}; truncated file?)", line=exc.lineno)
            return None
        except RecursionError:  # hostile nesting names the element's line
            errors.error("JSON nested too deeply to read", line=line)
            return None
        except ValueError:  # the decoder refuses integer literals of more than 4,300 digits
            errors.error(_TOO_MANY_DIGITS, line=line)
            return None
        found.append((line, value))
        pos = _skip(text, pos)
        if text[pos:pos + 1] == ",":
            pos = _skip(text, pos + 1)
        elif text[pos:pos + 1] != "]":
            errors.error("expected ',' or ']' after a message (truncated file?)", line=_line(text, pos))
            return None
    if pos >= len(text):
        errors.error("the array is not closed (truncated file?)", line=_line(text, pos))
        return None
    return pos + 1


def _decode(text: str, pos: int, errors: LineErrors) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise SessionFormatError(f"not valid JSON ({json_error_words(exc)}; truncated file?)", path=errors.path,
                                 line=exc.lineno) from None
    except RecursionError:
        raise SessionFormatError("JSON nested too deeply to read", path=errors.path,
                                 line=_line(text, pos)) from None
    except ValueError:
        raise SessionFormatError(_TOO_MANY_DIGITS, path=errors.path, line=_line(text, pos)) from None


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _line_of_byte(path: Path, offset: int) -> int:
    with open_bytes(path) as fh:
        return fh.read(offset).count(b"\n") + 1


# --------------------------------------------------------------------------------------------
# Messages


def _add(out: MessageList, raw: dict[str, Any], lineno: int, errors: LineErrors) -> str | None:
    """Convert and append one message; returns the response model name, if any."""
    role = raw.get("role")
    if role == "exit":
        status = (raw.get("extra") or {}).get("exit_status") if isinstance(raw.get("extra"), dict) else None
        errors.warn(f"'exit' message (exit_status={status!r}) is not model context; left out",
                    line=lineno)
        return None
    if role not in _ROLES:
        raise SessionFormatError(f"unknown role {role!r} (expected one of "
                                 f"{', '.join(sorted(_ROLES))})", field="role")
    extra = {} if raw.get("extra") is None else as_dict(raw["extra"], "extra")
    when = parse_time(extra.get("timestamp") if extra else raw.get("timestamp"), "extra.timestamp")
    if role == "tool":
        out.add("tool", [_result(raw, extra)], timestamp=when, line=lineno)
        return None
    blocks = _content(raw.get("content"))
    if role != "assistant":
        out.add(_ROLES[role], blocks, timestamp=when, line=lineno)
        return None
    response = {} if extra.get("response") is None else as_dict(extra["response"], "extra.response")
    model = opt_str(response.get("model"), "extra.response.model")
    reasoning = opt_str(raw.get("reasoning_content"), "reasoning_content")
    head: list[ContentBlock] = [ThinkingBlock(text=reasoning)] if reasoning else []
    calls = [_call(c, i) for i, c in enumerate(as_list(_or(raw.get("tool_calls"), []), "tool_calls"))]
    usage_raw = _or(raw.get("usage"), response.get("usage"))
    cost = opt_cost(extra.get("cost"), "extra.cost")  # mini-swe-agent: what litellm charged
    usage = (_usage(as_dict(usage_raw, "usage"), model, cost) if usage_raw not in (None, {})
             else None)
    msg_id = opt_str(response.get("id"), "extra.response.id")
    out.add("assistant", head + blocks + calls, id=msg_id, usage=usage, model=model, timestamp=when,
            line=lineno)
    return model


def _or(value: Any, default: Any) -> Any:
    """``value`` unless it is null/absent (a wrong type is kept, to be refused by its check)."""
    return default if value is None else value


def _content(content: Any) -> list[ContentBlock]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [TextBlock(text=content)]
    blocks: list[ContentBlock] = []
    for i, part in enumerate(as_list(content, "content")):
        part = as_dict(part, f"content[{i}]")
        kind = part.get("type")
        if kind == "text":
            blocks.append(TextBlock(text=as_str(part.get("text"), f"content[{i}].text")))
        elif kind == "image_url":
            url = part.get("image_url", {}).get("url") if isinstance(part.get("image_url"), dict) else None
            ref = url if isinstance(url, str) and not url.startswith("data:") else None
            blocks.append(ImageBlock(name=f"image-{i}", original_ref=ref))
        else:
            raise SessionFormatError(f"unknown content part type {kind!r}", field=f"content[{i}].type")
    return blocks


def _call(raw: Any, i: int) -> ToolCallBlock:
    call = as_dict(raw, f"tool_calls[{i}]")
    fn = as_dict(call.get("function"), f"tool_calls[{i}].function")
    arguments = fn.get("arguments")
    if arguments is not None and not isinstance(arguments, (str, dict)):  # a JSON text (or its object)
        as_str(arguments, f"tool_calls[{i}].function.arguments")  # raises the field's error
    return ToolCallBlock(id=as_str(call.get("id"), f"tool_calls[{i}].id"),
                         name=as_str(fn.get("name"), f"tool_calls[{i}].function.name"),
                         arguments=parse_arguments(arguments))


def _result(raw: dict[str, Any], extra: dict[str, Any]) -> ToolResultBlock:
    blocks = _content(raw.get("content"))
    text = "\n".join(b.text for b in blocks if b.type == "text")
    # mini-swe-agent records a failure to run the command (timeout, …) in exception_info.
    is_error = as_bool(raw.get("is_error"), "is_error") or bool(extra.get("exception_info"))
    return ToolResultBlock(call_id=as_str(raw.get("tool_call_id"), "tool_call_id"), text=text,
                           is_error=is_error)


def _usage(raw: dict[str, Any], model: str | None, cost: float | None = None) -> Usage:
    """OpenAI-style usage: ``prompt_tokens`` already includes cached tokens; ``cost`` is the
    response's recorded cost, if the transcript has one."""
    details = _or(raw.get("prompt_tokens_details"), {})
    details = as_dict(details, "usage.prompt_tokens_details")
    cached = details.get("cached_tokens")
    if cached is None:
        cached = raw.get("prompt_cache_hit_tokens")  # DeepSeek's own field
    return Usage(input_tokens=as_int(raw.get("prompt_tokens"), "usage.prompt_tokens"),
                 output_tokens=as_int(raw.get("completion_tokens"), "usage.completion_tokens"),
                 cache_read_tokens=as_int(cached, "usage.prompt_tokens_details.cached_tokens"),
                 cache_read_in_input=True, model=model, raw=within_nesting(raw), cost_usd=cost)


def _top_fields(top: dict[str, Any], errors: LineErrors) -> tuple[str | None, str | None]:
    """``(instance_id, info.config.model.model_name)`` of a mini-swe-agent trajectory, checked: a
    wrong type is an error naming the field (strict) or listed and left out (lenient)."""
    try:
        info = {} if top.get("info") is None else as_dict(top["info"], "info")
        config = {} if info.get("config") is None else as_dict(info["config"], "info.config")
        chosen = {} if config.get("model") is None else as_dict(config["model"], "info.config.model")
        return (opt_str(top.get("instance_id"), "instance_id"),
                opt_str(chosen.get("model_name"), "info.config.model.model_name"))
    except SessionFormatError as exc:
        errors.error(exc.problem, field=exc.field)
        return None, None


def _header(fields: tuple[str | None, str | None], messages: list[Message], model: str | None,
            content_hash: str | None) -> SessionHeader:
    instance, config_model = fields
    first_model = next((m.model for m in messages if m.model), None) or config_model or model
    if instance:
        title = f"{instance} ({config_model or first_model or 'unknown model'})"
    else:
        title = next((shorten_title(m.text) for m in messages
                      if m.role == "user" and m.text.strip()), "Chat session")
    # instance_id names the task, not the run: the id comes from the content hash.
    return SessionHeader(session_id=short_id("openai_chat", content_hash or "sha256:unknown"),
                         title=shorten_title(title), source_format="openai_chat", model=first_model,
                         created_at=next((m.timestamp for m in messages if m.timestamp), None))
