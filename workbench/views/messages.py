"""What the Messages page shows of one session, as plain data: a table of messages (role, batch,
local estimate, provider usage normalised and raw) and a conversation where every tool call carries
its paired result, errors are flagged and long outputs know their size so the page can collapse them.
Transcript text is kept verbatim; the page renders it as text, never as HTML or markdown.
"""

from __future__ import annotations

import json
import math
from typing import Literal

import pandas as pd
from iris.frozen import FrozenModel
from iris.session import (
    ContentBlock,
    ImageBlock,
    Message,
    Session,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from iris.tokens import TokenEstimator

from . import markup
from .query import parse_index

__all__ = ["PAGE_SIZE", "BlockView", "MessageView", "UsageView", "blank_note", "code_span", "conversation",
           "header_metrics",
           "human_size", "linked_message", "message_flags", "message_frame", "page_count", "usage_caption"]

#: Outputs longer than this many characters (or lines) are collapsed by default.
LONG_CHARS = 1500
LONG_LINES = 25
PREVIEW_LINES = 8
#: Messages per page: the browser lays out every block of a page at each flip (40 took over a second).
PAGE_SIZE = 20


_Frozen = FrozenModel


class UsageView(_Frozen):
    prompt_tokens: int
    """Normalised prompt size (R-TOK-3)."""
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    model: str | None = None
    raw: str = ""
    """The provider's usage object as recorded (JSON text)."""


BlockKind = Literal["text", "thinking", "tool_call", "tool_result", "image"]


class BlockView(_Frozen):
    kind: BlockKind
    title: str
    text: str
    size: str
    long: bool
    preview: str
    is_error: bool = False
    call_id: str | None = None
    result: BlockView | None = None
    """For a tool call: its paired result (None while unanswered)."""
    result_message: int | None = None
    call_message: int | None = None
    """For a tool result: the message holding its call (None for an orphan result)."""


class MessageView(_Frozen):
    index: int
    role: str
    batch: int | None
    estimate: int
    usage: UsageView | None
    blocks: tuple[BlockView, ...]
    model: str | None = None
    timestamp: str | None = None
    has_error: bool = False
    unanswered_calls: int = 0
    is_compaction_summary: bool = False
    synthetic: bool = False
    compaction_provided: bool = False
    """Put in place by a recorded compaction (a kept copy, not a model response)."""


def blank_note(text: str) -> str | None:
    """What a text block holding only whitespace is (Claude Code records ``"\\n\\n"`` text
    blocks, kept by the lossless import): an empty box would look like text failed to load."""
    if text.strip():
        return None
    if not text:
        return "empty text block"
    return f"whitespace-only text block ({len(text)} character{'s' if len(text) != 1 else ''})"


def human_size(text: str) -> str:
    n = len(text.encode("utf-8"))
    lines = text.count("\n") + 1 if text else 0
    size = f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"
    return f"{size} · {lines} lines"


def _block(kind: BlockKind, title: str, text: str, *, is_error: bool = False, call_id: str | None = None,
           result: BlockView | None = None, result_message: int | None = None,
           call_message: int | None = None) -> BlockView:
    lines = text.splitlines()
    long = len(text) > LONG_CHARS or len(lines) > LONG_LINES
    preview = "\n".join(lines[:PREVIEW_LINES])[:LONG_CHARS] if long else text
    return BlockView(kind=kind, title=title, text=text, size=human_size(text), long=long, preview=preview,
                     is_error=is_error, call_id=call_id, result=result, result_message=result_message,
                     call_message=call_message)


def _result_view(session: Session, call_id: str) -> tuple[BlockView | None, int | None]:
    loc = session.index.results.get(call_id)
    if loc is None:
        return None, None
    block = session.messages[loc.message].content[loc.block]
    assert isinstance(block, ToolResultBlock)
    status = "error" if block.is_error else "result"
    return _block("tool_result", f"{status} · message #{loc.message}", block.text,
                  is_error=block.is_error, call_id=call_id), loc.message


def _call_name(session: Session, call_id: str) -> tuple[str, int | None]:
    loc = session.index.calls.get(call_id)
    if loc is None:
        return "unknown call", None
    block = session.messages[loc.message].content[loc.block]
    return (block.name if isinstance(block, ToolCallBlock) else "?"), loc.message


def _view_block(session: Session, block: ContentBlock) -> BlockView:
    if isinstance(block, TextBlock):
        return _block("text", "text", block.text)
    if isinstance(block, ThinkingBlock):
        return _block("thinking", "thinking", block.text)
    if isinstance(block, ToolCallBlock):
        result, where = _result_view(session, block.id)
        args = json.dumps(block.arguments, indent=2, ensure_ascii=False, sort_keys=True)
        return _block("tool_call", block.name, args, call_id=block.id, result=result, result_message=where,
                      is_error=bool(result and result.is_error))
    if isinstance(block, ToolResultBlock):
        name, where = _call_name(session, block.call_id)
        title = f"result of {name}" + (f" (call in message #{where})" if where is not None else " (orphan)")
        return _block("tool_result", title, block.text, is_error=block.is_error, call_id=block.call_id,
                      call_message=where)
    assert isinstance(block, ImageBlock)
    return _block("image", f"image {block.name}", f"original: {block.original_ref}\nmodel: {block.model_ref}")


def _usage_view(message: Message) -> UsageView | None:
    u = message.usage
    if u is None:
        return None
    return UsageView(prompt_tokens=u.prompt_tokens, input_tokens=u.input_tokens,
                     cache_read_tokens=u.cache_read_tokens, cache_write_tokens=u.cache_write_tokens,
                     output_tokens=u.output_tokens, model=u.model,
                     raw=json.dumps(u.raw, sort_keys=True) if u.raw is not None else "")


def conversation(session: Session, estimator: TokenEstimator, start: int = 0,
                 stop: int | None = None) -> tuple[MessageView, ...]:
    """Messages ``start:stop`` of the session, ready to render."""
    views = []
    batch_of = session.index.batch_of_message
    for i in range(start, min(stop if stop is not None else len(session.messages), len(session.messages))):
        msg = session.messages[i]
        blocks = tuple(_view_block(session, b) for b in msg.content)
        views.append(MessageView(
            index=i, role=msg.role, batch=batch_of[i], estimate=estimator.message_tokens(msg),
            usage=_usage_view(msg), blocks=blocks, model=msg.model,
            timestamp=msg.timestamp.isoformat() if msg.timestamp else None,
            has_error=any(b.is_error for b in blocks),
            unanswered_calls=sum(1 for b in blocks if b.kind == "tool_call" and b.result is None),
            is_compaction_summary=msg.is_compaction_summary, synthetic=msg.synthetic,
            compaction_provided=msg.compaction_provided))
    return tuple(views)


def _summary(message: Message) -> str:
    parts = []
    for b in message.content:
        if isinstance(b, ToolCallBlock):
            parts.append(f"→ {b.name}")
        elif isinstance(b, ToolResultBlock):
            parts.append("✗ error" if b.is_error else "← result")
        else:
            parts.append(b.type if isinstance(b, ImageBlock) else " ".join(b.text.split())[:60])
    return " | ".join(parts)[:120]


def message_frame(session: Session, estimator: TokenEstimator) -> pd.DataFrame:
    """One row per message: role, batch, local estimate, normalised and raw provider usage."""
    rows = []
    for i, msg in enumerate(session.messages):
        u = msg.usage
        rows.append({
            "#": i, "Role": msg.role, "Batch": session.index.batch_of_message[i], "Content": _summary(msg),
            "Estimate": estimator.message_tokens(msg),
            "Prompt tokens": u.prompt_tokens if u else None, "Input": u.input_tokens if u else None,
            "Cache read": u.cache_read_tokens if u else None,
            "Cache write": u.cache_write_tokens if u else None, "Output": u.output_tokens if u else None,
            "Error": any(b.is_error for b in msg.tool_results),
        })
    frame = pd.DataFrame(rows, columns=["#", "Role", "Batch", "Content", "Estimate", "Prompt tokens", "Input",
                                        "Cache read", "Cache write", "Output", "Error"])
    for col in ("Batch", "Prompt tokens", "Input", "Cache read", "Cache write", "Output"):
        frame[col] = frame[col].astype("Int64")
    return frame


def header_metrics(session: Session, estimated_tokens: int) -> list[tuple[str, int | str]]:
    """The page header's six figures as (label, value): counts, the local estimate and the
    largest prompt the provider recorded ("—" when no response recorded usage)."""
    index = session.index
    usage = [m.usage.prompt_tokens for m in session.messages if m.usage is not None]
    return [("Messages", len(session.messages)), ("Responses", len(index.batches)),
            ("Tool calls", len(index.calls)), ("Unanswered", len(index.unanswered_calls)),
            ("Estimated tokens", f"{estimated_tokens:,}"),
            ("Max prompt (provider)", f"{max(usage):,}" if usage else "—")]


def page_count(n_messages: int, page_size: int = PAGE_SIZE) -> int:
    """How many pages ``n_messages`` fill (at least one)."""
    return max(1, math.ceil(n_messages / page_size))


def linked_message(param: str | None) -> int | None:
    """The message number of a ``?message=N`` link (None when absent or not a number: ASCII
    digits only, see ``views.query.parse_index``)."""
    return parse_index(param)


def code_span(text: str | None) -> str:
    """Inline code for transcript-provided names (see ``views.markup.code_span``)."""
    return markup.code_span(text or "")


def message_flags(msg: MessageView) -> str:
    """The caption under a message's heading: batch, local estimate, model and origin."""
    flags = [f"batch {msg.batch}" if msg.batch is not None else "before the first response",
             f"≈ {msg.estimate:,} tokens (local estimate)"]
    if msg.model:
        flags.append(code_span(msg.model))
    if msg.synthetic:
        flags.append("injected")
    if msg.is_compaction_summary:
        flags.append("compaction summary")
    if msg.compaction_provided:
        flags.append("provided by the recorded compaction (a kept copy, not a response)")
    return " · ".join(flags)


def usage_caption(msg: MessageView) -> str | None:
    """The provider usage line of a message (None where no line is shown: a user or tool
    message, or a kept copy a recorded compaction provided)."""
    if (u := msg.usage) is not None:
        return (f"Provider usage: prompt {u.prompt_tokens:,} (input {u.input_tokens:,} + cache read "
                f"{u.cache_read_tokens:,} + cache write {u.cache_write_tokens:,}) · output "
                f"{u.output_tokens:,} · raw {code_span(u.raw)}")
    if msg.role == "assistant" and not msg.compaction_provided:
        return "Provider usage: not recorded"
    return None
