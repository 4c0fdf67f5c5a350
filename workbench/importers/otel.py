"""OpenTelemetry GenAI spans → :class:`Session` (R-SES-4).

The spans (any layout :mod:`.otel_spans` reads) are taken in start-time order. Model calls are the
spans whose ``gen_ai.operation.name`` is ``chat``, ``text_completion``, ``generate_content`` or
``call_llm`` (or that carry ``gen_ai.request.model`` without a tool name); tool runs are
``execute_tool`` spans; only those of the agent that made the first call are read (the nearest
``invoke_agent`` ancestor decides).

The transcript is built append-only. A call's new input messages are those after the previous
response; they are appended, then its output as one assistant message carrying the call's usage. A
request that no longer contains the previous response replaced the context, as a compaction does:
its messages are appended as compaction-provided context after a :class:`RecordedCompaction`
(``otel:context_rewrite``). When calls after the first record no input messages (any-agent records
them only on the first), each ``execute_tool`` span becomes the result of the earliest unanswered
call of that tool (by ``gen_ai.tool.call.id`` when present).

Usage: ``gen_ai.usage.input_tokens`` (older: ``prompt_tokens``) includes cached tokens
(``gen_ai.usage.cache_read.input_tokens``, ``cache_creation.input_tokens``), as in OpenAI's counts;
a call without usage attributes has no usage (the engine estimates) and a warning counts them.
A cost attribute (``gen_ai.usage.cost``, ``llm.cost.total``, … see ``_cost.OTEL_COST_KEYS``) is kept
as the call's recorded cost, which pricing uses instead of a list price. A span of the workbench's
own export (:mod:`workbench.views.otlp_export`) describes a replayed request; the recorded response's
usage it carries (``context_workbench.recorded.*``: prompt, output, cache reads, cache writes with
their 1-hour share, the recorded cost) is the one read, so the session keeps its bill.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError
from iris.session import (
    ContentBlock,
    RecordedCompaction,
    Role,
    Session,
    SessionHeader,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)

from ._builder import MessageList
from ._common import LINE_FAILURES, LineErrors, as_int, parse_time, short_id, shorten_title
from ._cost import OTEL_COST_KEYS, opt_cost, otel_cost
from ._document import in_field, load_documents
from .otel_messages import Turn, has_input, input_turns, output_turns
from .otel_spans import Span, spans_of

__all__ = ["LLM_OPERATIONS", "load_otel"]

LLM_OPERATIONS = {"chat", "text_completion", "generate_content", "call_llm", "completion"}
_COUNT_DIGITS = 16  # a count string longer than this is beyond 2**53 - 1: refused by as_int


def load_otel(path: str | Path, *, lenient: bool = False,
              skipped: list[SessionFormatError] | None = None,
              warnings: list[SessionFormatError] | None = None,
              content_hash: str | None = None) -> Session:
    """Import OpenTelemetry GenAI spans (see the module docstring for the rules)."""
    path = Path(path)
    errors = LineErrors(path, lenient, skipped, warnings)
    spans = _read_spans(path, errors)
    calls = [s for s in spans if _is_call(s)]
    errors.lines_read = len(spans)
    if not calls:
        raise SessionFormatError(f"no GenAI model-call spans among {len(spans)} spans (expected "
                                 "gen_ai.operation.name chat/text_completion/generate_content/call_llm)",
                                 path=path)
    traces = {s.trace for s in calls if s.trace}
    if len(traces) > 1:
        errors.warn(f"{len(traces)} traces in one file: their {len(calls)} model calls are read as one "
                    "conversation in time order")
    spans, calls = _main_agent(spans, calls, errors)
    builder = _Transcript(errors, use_tool_spans=not any(has_input(s) for s in calls[1:]))
    for span in spans:
        try:
            if _is_call(span):
                builder.call(span)
            elif span.operation == "execute_tool" and builder.use_tool_spans:
                builder.tool(span)
        except LINE_FAILURES as exc:
            errors.failed(in_field(exc, span.where), None)
    if not builder.out.entries:
        raise errors.nothing_imported("message")
    builder.out.check_orphans(errors)
    builder.out.check_repeated_calls(errors, "attributes.gen_ai.tool.call.id")
    if builder.without_usage:
        errors.warn(f"{builder.without_usage} of {len(calls)} model calls record no usage "
                    "(gen_ai.usage.*): those responses have none (estimated)")
    messages = builder.out.freeze()
    return Session(header=_header(spans, messages, content_hash), messages=tuple(messages),
                   compactions=tuple(builder.compactions))


def _main_agent(spans: list[Span], calls: list[Span],
                errors: LineErrors) -> tuple[list[Span], list[Span]]:
    """The spans of the agent that made the first model call: calls and tool runs under another
    ``invoke_agent`` span (a sub-agent, a hand-off) are left out with a warning."""
    by_id = {(s.trace, s.id): s for s in spans}

    def agent(span: Span) -> str | None:
        seen = 0
        while span.parent is not None and seen < len(by_id):
            parent = by_id.get((span.trace, span.parent))
            if parent is None:
                return None
            span = parent
            if span.operation == "invoke_agent":
                return f"{span.trace}/{span.id}"
            seen += 1
        return None

    main = agent(calls[0])
    other = [s for s in calls if agent(s) != main]
    if not other:
        return spans, calls
    errors.warn(f"{len(other)} model calls of other agents (under another invoke_agent span) left "
                "out: the conversation is the first call's agent")
    kept = [s for s in spans if not (_is_call(s) or s.operation == "execute_tool") or agent(s) == main]
    return kept, [s for s in calls if agent(s) == main]


def _header(spans: list[Span], messages: list, content_hash: str | None) -> SessionHeader:
    """Id: ``gen_ai.conversation.id``, else from the content hash; title: the first user text."""
    conversation = next((s.attrs.get("gen_ai.conversation.id") for s in spans
                         if isinstance(s.attrs.get("gen_ai.conversation.id"), str)), None)
    title = next((shorten_title(m.text) for m in messages if m.role == "user" and m.text.strip()),
                 "OpenTelemetry trace")
    return SessionHeader(session_id=conversation or short_id("otel", content_hash or "sha256:unknown"),
                         title=title, source_format="otel",
                         model=next((m.model for m in messages if m.model), None),
                         created_at=next((m.timestamp for m in messages if m.timestamp), None))


def _read_spans(path: Path, errors: LineErrors) -> list[Span]:
    spans: list[Span] = []
    for lineno, doc in load_documents(path, errors):
        try:
            spans.extend(spans_of(doc, "" if lineno == 1 else f"line {lineno}: "))
        except LINE_FAILURES as exc:
            errors.failed(exc, lineno)
    spans.sort(key=lambda s: s.start)  # stable: spans without times keep file order
    return _once(spans, errors)


def _once(spans: list[Span], errors: LineErrors) -> list[Span]:
    """Each span once: a span id that an earlier span of its trace has (a span exported twice, a
    file appended to itself) is an error naming the later one (lenient: it is left out)."""
    seen: set[tuple[str, str]] = set()
    kept: list[Span] = []
    for span in spans:
        key = (span.trace, span.id)
        if span.id and key in seen:
            errors.error(f"span {span.id!r} of trace {span.trace!r} appears twice", line=1,
                         field=f"{span.where}.spanId")
            continue
        seen.add(key)
        kept.append(span)
    return kept


def _is_call(span: Span) -> bool:
    op = span.operation
    if op is not None:
        return op in LLM_OPERATIONS
    return "gen_ai.request.model" in span.attrs and "gen_ai.tool.name" not in span.attrs


class _Transcript:
    """The message list, grown call by call."""

    def __init__(self, errors: LineErrors, *, use_tool_spans: bool) -> None:
        self.out = MessageList()
        self.errors = errors
        self.use_tool_spans = use_tool_spans
        self.pending: list[ToolCallBlock] = []
        self.without_usage = 0
        self.compactions: list[RecordedCompaction] = []

    def call(self, span: Span) -> None:
        turns = input_turns(span)
        if turns is not None:
            self._inputs(turns, span)
        model = _str(span.attrs.get("gen_ai.response.model")) or _str(span.attrs.get("gen_ai.request.model"))
        blocks = [b for _, turn in (output_turns(span) or []) for b in turn]
        if not blocks:
            self.errors.warn("a model call with no recorded output", field=span.where)
        usage = _usage(span.attrs, model)
        self.without_usage += usage is None
        when = parse_time(span.start / 1e9) if span.start else None
        self.out.add("assistant", blocks, id=span.id or None, usage=usage, model=model,
                     timestamp=when)
        self.pending = [b for b in blocks if isinstance(b, ToolCallBlock)]

    def _inputs(self, turns: list[Turn], span: Span) -> None:
        """Append what the request adds after the previous response; a request that no longer
        contains the previous response replaced the context."""
        last = self.out.entries[-1] if self.out.entries else None
        if last is None:
            start = 0
        else:
            start = next((i + 1 for i in range(len(turns) - 1, -1, -1) if _same(last, turns[i])), None)
        if start is None:
            self.compactions.append(RecordedCompaction(at_message=len(self.out.entries), trigger="auto",
                                                       source="otel:context_rewrite"))
            self.errors.warn(f"the request's {len(turns)} input messages no longer contain the "
                             "previous response: recorded as a compaction", field=span.where)
        for role, blocks in turns[start or 0:]:
            self._append(role, blocks, provided=start is None)

    def tool(self, span: Span) -> None:
        name, call_id = span.attrs.get("gen_ai.tool.name"), span.attrs.get("gen_ai.tool.call.id")
        match = next((c for c in self.pending if c.id == call_id), None) or next(
            (c for c in self.pending if c.name == name), None)
        if match is None:
            self.errors.warn(f"tool span {name!r} answers no call of the previous model call; "
                             "left out", field=span.where)
            return
        self.pending.remove(match)
        output = span.attrs.get("gen_ai.output", span.attrs.get("gen_ai.tool.call.result", ""))
        self._append("tool", [ToolResultBlock(call_id=match.id, text=output if isinstance(
            output, str) else str(output))])

    def _append(self, role: Role, blocks: list[ContentBlock], *, provided: bool = False) -> None:
        if role == "tool":
            blocks = [b for b in blocks if isinstance(b, ToolResultBlock)] or blocks
        self.out.add(role, blocks, provided=provided)


def _same(entry: Any, turn: Turn) -> bool:
    role, blocks = turn
    return entry.role == role and [_key(b) for b in entry.blocks] == [_key(b) for b in blocks]


def _key(block: Any) -> tuple:
    return (block.type, getattr(block, "text", None), getattr(block, "id", None),
            getattr(block, "call_id", None))


_RECORDED = "context_workbench.recorded."


def _recorded_usage(attrs: dict[str, Any], model: str | None) -> Usage | None:
    """The recorded response's usage a workbench export carries beside the replayed request's
    (``context_workbench.recorded.*``): the provider's counts, the 1-hour share of the cache
    writes and the cost the transcript recorded, so the re-imported session has the same bill."""
    def count(name: str) -> int:
        value = attrs.get(_RECORDED + name)
        return 0 if value is None else _int(value, _RECORDED + name)

    prompt, hour = count("input_tokens"), count("cache_creation.ephemeral_1h_input_tokens")
    read, write = count("cache_read.input_tokens"), count("cache_creation.input_tokens")
    raw = {"input_tokens": prompt, "output_tokens": count("output_tokens"),
           "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
           "cache_creation": {"ephemeral_5m_input_tokens": write - hour,
                              "ephemeral_1h_input_tokens": hour}}
    cost = opt_cost(attrs.get(_RECORDED + "cost_usd"), f"attributes.{_RECORDED}cost_usd")
    return Usage(input_tokens=prompt, output_tokens=raw["output_tokens"], cache_read_tokens=read,
                 cache_write_tokens=write, cache_read_in_input=True, cache_write_in_input=True,
                 model=model, raw=raw, cost_usd=cost)


def _usage(attrs: dict[str, Any], model: str | None) -> Usage | None:
    if _RECORDED + "usage_kind" in attrs:  # a workbench export: the provider's own counts
        return _recorded_usage(attrs, model) if _RECORDED + "output_tokens" in attrs else None
    keys = {"input": ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
            "output": ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
            "read": ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens"),
            "write": ("gen_ai.usage.cache_creation.input_tokens",
                      "gen_ai.usage.cache_creation_input_tokens")}
    values = {k: next((attrs[n] for n in names if n in attrs), None) for k, names in keys.items()}
    if values["input"] is None and values["output"] is None:
        return None
    raw = {n: attrs[n] for names in (*keys.values(), OTEL_COST_KEYS) for n in names if n in attrs}
    return Usage(input_tokens=_int(values["input"], keys["input"][0]),
                 output_tokens=_int(values["output"], keys["output"][0]),
                 cache_read_tokens=_int(values["read"], keys["read"][0]),
                 cache_write_tokens=_int(values["write"], keys["write"][0]),
                 cache_read_in_input=True, cache_write_in_input=True, model=model, raw=raw,
                 cost_usd=otel_cost(attrs))


def _int(value: Any, field: str) -> int:
    """Token counts, also as the numeric strings (``"269"``) and whole floats (``269.0``) some
    exporters write; either is then checked as a count (0 to 2**53 - 1), so ``1e308`` is refused
    rather than stored as a 309-digit integer."""
    text = value.strip() if isinstance(value, str) else ""
    digits = text.isascii() and text.isdecimal() and len(text) <= _COUNT_DIGITS
    if digits or isinstance(value, float) and value.is_integer():
        value = int(value)
    return as_int(value, f"attributes.{field}")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None

