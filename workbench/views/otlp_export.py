"""A replay's preparations as OpenTelemetry GenAI spans, built with the OpenTelemetry SDK.

One trace per replay: a root ``invoke_agent`` span and, per preparation, a ``chat`` span (kind
CLIENT) that follows the GenAI semantic conventions, so a tracing tool that reads OTLP (Arize
Phoenix, Langfuse, Jaeger, the Collector) shows the replay like the agent's own traces:

- ``gen_ai.operation.name`` ``chat``, ``gen_ai.provider.name`` (and the older ``gen_ai.system``),
  ``gen_ai.request.model`` / ``gen_ai.response.model``, ``gen_ai.response.finish_reasons``;
- ``gen_ai.input.messages``: the prepared request (what the engine would send), as
  ``[{role, parts}]`` with ``text``, ``reasoning``, ``tool_call``, ``tool_call_response`` and ``uri``
  parts; ``gen_ai.output.messages``: the recorded response of that step, ``[{role: "assistant",
  parts, finish_reason}]`` (``tool_call`` when it calls a tool, otherwise ``stop``);
- ``gen_ai.usage.input_tokens``: the prepared request as the workbench prices it
  (:func:`workbench.pricing.priced_steps`): the provider's count where the request is the one the
  agent sent, else its estimated size as a whole request (calibrated local estimate + unrecorded
  overhead, also on the requests before the first response measured it); it includes the cached
  tokens, as the conventions say, and ``gen_ai.usage.cache_read.input_tokens`` /
  ``gen_ai.usage.cache_creation.input_tokens`` give the prompt-cache split (the recorded one, or
  the cache model's; writes only for a provider that bills them); the raw local estimate is
  ``context_workbench.local.input_tokens``; ``gen_ai.usage.output_tokens``: the recorded
  response's output tokens (absent when the transcript has no usage);
- the same counts under OpenInference's names (``llm.token_count.prompt``, ``.completion``,
  ``.total``, ``.prompt_details.cache_read``, ``.prompt_details.cache_write``, ``llm.model_name``,
  ``llm.provider``), which Arize Phoenix prices, and ``llm.cost.total``: what the request costs
  as the workbench prices it (its bill, for a request the agent sent);
- ``context_workbench.recorded.*``: the recorded response's provider counts (``input_tokens``,
  ``output_tokens``, ``cache_read.input_tokens``, ``cache_creation.input_tokens`` and its
  ``ephemeral_1h_input_tokens`` share), the cost the transcript recorded (``cost_usd``) and its
  bill (``billed_usd``): what re-importing the file reads as each response's usage, so the
  session keeps its bill;
- a tool result that was an error is a ``tool_call_response`` part with ``is_error: true``;
- each sub-agent the recorded session started (``otlp_spans(subagents=…)``): an ``execute_tool``
  span for the call that started it, an ``invoke_agent`` span under it and one ``chat`` span per
  recorded response of the sub-agent (the provider's counts, cache split and bill), so the trace
  holds the sub-agents' spend where it was made (an importer reads the main agent's calls only);
- ``context_workbench.*``: step, phase, budget, pressure line, compaction, stages, record ids.

A failed preparation's span has an error status and no input messages. A chat span lasts from its
request time (the timestamp of the last message before the response) to its response time, as the
transcript recorded them; steps without timestamps get consecutive milliseconds from the export
time. ``shift_to_now`` moves the whole trace so that it ends now (tracing tools open on the last
hours). Trace and span ids derive from the session, run and step, so exporting twice gives the
same ids. Building them is pure (no file, no network): :mod:`workbench.services.otlp` sends them
as OTLP protobuf over HTTP (``push_otlp``) or writes :func:`spans_document` as one OTLP JSON line
(``write_otlp``), which imports back (``workbench import``, format ``otel``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from google.protobuf import json_format
from iris.errors import IrisError
from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.session import Message, Session, SubagentCall, Usage
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..pricing import CostStep, priced_steps
from ..pricing.billing import billed, cache_writes, recorded_cost, response_model, responses

__all__ = ["SCOPE", "message_parts", "otlp_document", "otlp_spans", "output_message", "provider_name",
           "spans_document"]

SCOPE = "context_workbench.replay"
_MS = 1_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
RequestOf = Callable[[ContextPreparation], PreparedRequest | None]
Priced = tuple[CostStep, Decimal | None]


@dataclass(frozen=True)
class _Step:
    prep: ContextPreparation
    request: PreparedRequest | None
    response: Message | None
    start: int
    end: int


class _FixedIds(IdGenerator):
    """Hands out the ids the exporter chose (the SDK asks for one per span it starts)."""

    def __init__(self, trace_id: int) -> None:
        self.trace_id = trace_id
        self.span_id = 0

    def generate_span_id(self) -> int:
        return self.span_id

    def generate_trace_id(self) -> int:
        return self.trace_id


def otlp_spans(session: Session, preparations: Sequence[ContextPreparation], request_of: RequestOf, *,
               replay_name: str = "replay", now_ns: int | None = None,
               shift_to_now: bool = False, subagents: Sequence[Session] = ()) -> list[ReadableSpan]:
    """The replay's finished SDK spans, the root first (see the module docstring). ``subagents``:
    the sub-agent sessions the recorded session started (their recorded calls are nested under
    the tool call that started each)."""
    now = now_ns if now_ns is not None else time.time_ns()
    steps = _steps(session, preparations, request_of, now)
    offset = now - max(s.end for s in steps) if shift_to_now and steps else 0
    if offset:
        steps = [_Step(s.prep, s.request, s.response, s.start + offset, s.end + offset) for s in steps]
    first = preparations[0] if preparations else None
    seed = f"{session.header.session_id}|{first.run_id if first else ''}|{replay_name}"
    ids = _FixedIds(_id(seed, 16))
    sink = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource({"service.name": "context-workbench"}), id_generator=ids, sampler=ALWAYS_ON,
        span_limits=SpanLimits(max_span_attribute_length=SpanLimits.UNSET), shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(sink))
    tracer = provider.get_tracer(SCOPE)
    ids.span_id = _id(f"{seed}|root", 8)
    root = tracer.start_span(
        f"invoke_agent {replay_name}", kind=SpanKind.INTERNAL,
        start_time=min((s.start for s in steps), default=now),
        attributes=_clean({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": replay_name,
                           "gen_ai.conversation.id": session.header.session_id,
                           "context_workbench.session_title": session.header.title,
                           "context_workbench.steps": len(preparations)}))
    parent = trace.set_span_in_context(root)
    priced = priced_steps(session, preparations, request_of)
    writes = any(u.cache_write_tokens for _, u, _ in responses(session))
    for step in steps:
        ids.span_id = _id(f"{seed}|{step.prep.preparation_id}|{step.prep.step_index}", 8)
        _chat_span(tracer, parent, session, step, priced.get(step.prep.step_index), writes)
    ends = [s.end for s in steps]
    for run, sub in _runs(session, subagents):
        ends.append(_subagent_spans(tracer, parent, ids, seed, session, run, sub, offset, now))
    root.end(end_time=max(ends, default=now + _MS))
    provider.shutdown()
    finished = sink.get_finished_spans()
    if not finished:  # the SDK hands out a no-op tracer when it is switched off
        raise IrisError("no spans were made: the OpenTelemetry SDK is switched off "
                             "(OTEL_SDK_DISABLED is set); unset it to export")
    *chats, last = finished
    return [last, *chats]


def otlp_document(session: Session, preparations: Sequence[ContextPreparation], request_of: RequestOf,
                  *, replay_name: str = "replay", now_ns: int | None = None,
                  shift_to_now: bool = False) -> dict[str, Any]:
    """The OTLP JSON ``TracesData`` of one replay."""
    return spans_document(otlp_spans(session, preparations, request_of, replay_name=replay_name,
                                     now_ns=now_ns, shift_to_now=shift_to_now))


def spans_document(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """SDK spans in the OTLP JSON encoding: the exporter's own protobuf message, written with the
    protocol's JSON rules (hex trace and span ids, integer enums, 64-bit integers as strings)."""
    document = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return document


def _steps(session: Session, preparations: Sequence[ContextPreparation], request_of: RequestOf,
           now: int) -> list[_Step]:
    steps = []
    for n, prep in enumerate(preparations):
        response = _response(session, prep)
        start, end = _times(session, prep.response_message_index, now + n * _MS)
        steps.append(_Step(prep, request_of(prep), response, start, end))
    return steps


def _times(session: Session, index: int, fallback: int) -> tuple[int, int]:
    """Request time to response time: the response's timestamp, and the latest timestamp before it
    (the last message the request carried); one millisecond when either is missing."""
    if not 0 <= index < len(session.messages) or session.messages[index].timestamp is None:
        return fallback, fallback + _MS
    stamp = session.messages[index].timestamp
    assert stamp is not None
    end = _ns(stamp)
    before = next((m.timestamp for m in reversed(session.messages[:index]) if m.timestamp is not None),
                  None)
    start = _ns(before) if before is not None else end - _MS
    return (start, end) if start < end else (end - _MS, end)


def _ns(stamp: datetime) -> int:
    """Nanoseconds since the epoch, exactly (a naive time is taken as UTC)."""
    aware = stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)
    return (aware - _EPOCH) // timedelta(microseconds=1) * 1000


def _whole(prep: ContextPreparation) -> int:
    """The prepared request on the whole-request basis every page states (the raw local estimate
    for records without it)."""
    whole = prep.whole_request_tokens
    return prep.final_input_tokens if whole is None else whole


def _usage_attrs(step: _Step, priced: Priced | None, model: str | None, provider: str,
                 writes: bool) -> dict[str, Any]:
    """The replayed request's usage as the provider would count it (GenAI conventions and their
    OpenInference names, which Phoenix prices: the prompt includes the cached tokens), what it
    costs, and the recorded response's counts and bill (what re-importing reads back)."""
    cost, usd = priced if priced is not None else (None, None)
    usage = step.response.usage if step.response else None
    sent = cost.replay_input_tokens if cost is not None else None
    if sent is None and step.request is not None:
        sent = _whole(step.prep)
    split = cost.cache if cost is not None and sent is not None else None
    read = split.read if split else None
    written = split.written if split and writes and cost is not None and cost.ttl else None
    out = usage.output_tokens if usage else None
    return {
        "gen_ai.usage.input_tokens": sent, "gen_ai.usage.output_tokens": out,
        "gen_ai.usage.cache_read.input_tokens": read,
        "gen_ai.usage.cache_creation.input_tokens": written,
        "llm.model_name": model, "llm.provider": provider,
        "llm.token_count.prompt": sent, "llm.token_count.completion": out,
        "llm.token_count.total": (sent or 0) + (out or 0) if sent is not None else None,
        "llm.token_count.prompt_details.cache_read": read,
        "llm.token_count.prompt_details.cache_write": written,
        "llm.cost.total": float(usd) if usd is not None else None,
        **_recorded_attrs(usage, model, step.response.timestamp if step.response else None),
    }


def _recorded_attrs(usage: Usage | None, model: str | None, when: datetime | None) -> dict[str, Any]:
    """A recorded response's provider counts, the 1-hour share of its cache writes, the cost the
    transcript recorded and its bill (``context_workbench.recorded.*``)."""
    if usage is None or not usage.is_trusted:
        return {"context_workbench.recorded.input_tokens": usage.prompt_tokens if usage else None}
    five, hour = cache_writes(usage)
    bill = billed(usage, model, when).usd
    return {
        "context_workbench.recorded.input_tokens": usage.prompt_tokens,
        "context_workbench.recorded.output_tokens": usage.output_tokens,
        "context_workbench.recorded.cache_read.input_tokens": usage.cache_read_tokens,
        "context_workbench.recorded.cache_creation.input_tokens": five + hour,
        "context_workbench.recorded.cache_creation.ephemeral_1h_input_tokens": hour,
        "context_workbench.recorded.cost_usd": recorded_cost(usage),
        "context_workbench.recorded.billed_usd": float(bill) if bill is not None else None,
    }


def _runs(session: Session, subagents: Sequence[Session]) -> list[tuple[SubagentCall, Session]]:
    """Each sub-agent run of ``session`` with its session, in the order the calls were made."""
    by_id = {s.header.session_id: s for s in subagents}
    return [(run, by_id[run.session_id]) for run in session.subagents if run.session_id in by_id]


def _call_times(session: Session, call_id: str) -> tuple[str, datetime | None, datetime | None]:
    """The tool's name, when the call was made and when its result came back (None: unknown)."""
    name, start, end = "Task", None, None
    for m in session.messages:
        for b in m.content:
            if b.type == "tool_call" and b.id == call_id:
                name, start = b.name, m.timestamp
            elif b.type == "tool_result" and b.call_id == call_id:
                end = m.timestamp
    return name, start, end


def _subagent_spans(tracer: trace.Tracer, parent: Any, ids: _FixedIds, seed: str, session: Session,
                    run: SubagentCall, sub: Session, offset: int, now: int) -> int:
    """An ``execute_tool`` span for the call that started a sub-agent, an ``invoke_agent`` span
    under it and one ``chat`` span per recorded response of the sub-agent, with the provider's
    counts, cache split and bill; returns when the tool span ends."""
    responses = [(k, m) for k, m in enumerate(sub.messages) if m.role == "assistant"]
    times = [_times(sub, k, now + n * _MS) for n, (k, _) in enumerate(responses)]
    times = [(a + offset, b + offset) for a, b in times]
    name, called, answered = _call_times(session, run.call_id)
    start = min([a for a, _ in times] + ([_ns(called) + offset] if called else []), default=now)
    end = max([b for _, b in times] + ([_ns(answered) + offset] if answered else []),
              default=start + _MS)
    ids.span_id = _id(f"{seed}|tool|{run.call_id}", 8)
    tool = tracer.start_span(f"execute_tool {name}", context=parent, kind=SpanKind.INTERNAL,
                             start_time=start, attributes=_clean({
                                 "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                                 "gen_ai.tool.call.id": run.call_id, "gen_ai.tool.type": "function"}))
    ids.span_id = _id(f"{seed}|agent|{run.session_id}", 8)
    agent = tracer.start_span(f"invoke_agent {run.agent_id}", context=trace.set_span_in_context(tool),
                              kind=SpanKind.INTERNAL, start_time=start, attributes=_clean({
                                  "gen_ai.operation.name": "invoke_agent",
                                  "gen_ai.agent.id": run.agent_id, "gen_ai.agent.name": sub.header.title,
                                  "gen_ai.conversation.id": sub.header.session_id}))
    inside = trace.set_span_in_context(agent)
    model = sub.header.model
    for (k, m), (a, b) in zip(responses, times, strict=True):
        model = response_model(m, model)
        usage = m.usage if m.usage is not None and m.usage.is_trusted else None
        bill = billed(usage, model, m.timestamp).usd if usage else None
        five, hour = cache_writes(usage) if usage else (0, 0)
        provider = provider_name(sub, model)
        ids.span_id = _id(f"{seed}|{run.session_id}|{k}", 8)
        span = tracer.start_span(f"chat {model or 'model'}", context=inside, kind=SpanKind.CLIENT,
                                 start_time=a, attributes=_clean({
            "gen_ai.operation.name": "chat", "gen_ai.conversation.id": sub.header.session_id,
            "gen_ai.provider.name": provider, "gen_ai.request.model": model or "unknown",
            "gen_ai.response.model": m.model, "gen_ai.response.id": m.id,
            "gen_ai.usage.input_tokens": usage.prompt_tokens if usage else None,
            "gen_ai.usage.output_tokens": usage.output_tokens if usage else None,
            "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens if usage else None,
            "gen_ai.usage.cache_creation.input_tokens": five + hour if usage else None,
            "llm.model_name": model, "llm.provider": provider,
            "llm.token_count.prompt": usage.prompt_tokens if usage else None,
            "llm.token_count.completion": usage.output_tokens if usage else None,
            "llm.token_count.prompt_details.cache_read": usage.cache_read_tokens if usage else None,
            "llm.token_count.prompt_details.cache_write": five + hour if usage else None,
            "llm.cost.total": float(bill) if bill is not None else None,
            "gen_ai.output.messages": _json([output_message(m)]),
            **_recorded_attrs(m.usage, model, m.timestamp)}))
        span.end(end_time=max(b, a + 1))
    agent.end(end_time=end)
    tool.end(end_time=end)
    return end


def _chat_span(tracer: trace.Tracer, parent: Any, session: Session, step: _Step,
               priced: Priced | None = None, writes: bool = False) -> None:
    prep, request, response = step.prep, step.request, step.response
    model = (response.model if response else None) or session.header.model
    output = output_message(response) if response else None
    provider = provider_name(session, model)
    attrs = {
        "gen_ai.operation.name": "chat", "gen_ai.conversation.id": prep.session_id,
        "gen_ai.provider.name": provider, "gen_ai.system": provider,
        "gen_ai.request.model": model or "unknown", "gen_ai.response.model": response.model if response else None,
        "gen_ai.response.id": response.id if response else None,
        "gen_ai.response.finish_reasons": [output["finish_reason"]] if output else None,
        **_usage_attrs(step, priced, model, provider, writes),
        "gen_ai.input.messages": _json([message_parts(m) for m in request.messages]) if request else None,
        "gen_ai.output.messages": _json([output]) if output else None,
        "context_workbench.step_index": prep.step_index, "context_workbench.phase": prep.phase,
        "context_workbench.preparation_id": prep.preparation_id,
        "context_workbench.final_request_ref": prep.final_request_ref,
        "context_workbench.input_budget": prep.input_budget,
        "context_workbench.pressure_line": prep.pressure_line,
        "context_workbench.compaction_applied": prep.compaction_applied,
        "context_workbench.stages": [s.name for s in prep.stages],
        "context_workbench.local.input_tokens": prep.final_input_tokens if request is not None else None,
        "context_workbench.recorded.usage_kind": prep.provider_usage_kind,
    }
    span = tracer.start_span(f"chat {model or 'model'}", context=parent, kind=SpanKind.CLIENT,
                             start_time=step.start, attributes=_clean(attrs))
    if prep.error is not None:
        span.set_status(Status(StatusCode.ERROR, f"{prep.error.stage or 'preparation'}: {prep.error.message}"))
    span.end(end_time=step.end)


def provider_name(session: Session, model: str | None) -> str:
    """``gen_ai.provider.name``: from the model's name, else from the transcript's format."""
    name = (model or "").lower()
    for prefix, provider in (("claude", "anthropic"), ("gpt", "openai"), ("o1", "openai"),
                             ("o3", "openai"), ("o4", "openai"), ("codex", "openai"),
                             ("gemini", "gcp.gemini"), ("mistral", "mistral_ai"), ("deepseek", "deepseek")):
        if name.startswith(prefix) or f"/{prefix}" in name:
            return provider
    return {"claude_code": "anthropic", "codex": "openai"}.get(session.header.source_format, "_OTHER")


def _response(session: Session, prep: ContextPreparation) -> Message | None:
    i = prep.response_message_index
    return session.messages[i] if 0 <= i < len(session.messages) else None


def message_parts(message: Message) -> dict[str, Any]:
    """One message in the semantic conventions' ``{role, parts}`` shape."""
    parts: list[dict[str, Any]] = []
    for b in message.content:
        if b.type == "text":
            parts.append({"type": "text", "content": b.text})
        elif b.type == "thinking":
            parts.append({"type": "reasoning", "content": b.text})
        elif b.type == "tool_call":
            parts.append({"type": "tool_call", "id": b.id, "name": b.name, "arguments": b.arguments})
        elif b.type == "tool_result":
            part = {"type": "tool_call_response", "id": b.call_id, "response": b.text}
            parts.append({**part, "is_error": True} if b.is_error else part)
        elif b.type == "image":
            parts.append({"type": "uri", "modality": "image",
                          "uri": b.model_ref or b.original_ref or b.name or "image"})
    return {"role": message.role, "parts": parts}


def output_message(message: Message) -> dict[str, Any]:
    """A response as the conventions' output message: ``{role, parts, finish_reason}`` (the
    transcript records no stop reason; a response that calls a tool stopped for it)."""
    reason = "tool_call" if message.tool_calls else "stop"
    return {**message_parts(message), "finish_reason": reason}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    """Attributes without the absent ones (OpenTelemetry has no null attribute value)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in values.items() if v is not None}


def _id(seed: str, size: int) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:size], "big") or 1
