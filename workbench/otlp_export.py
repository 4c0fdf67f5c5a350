"""A replay's preparations as OpenTelemetry GenAI spans, in an OTLP JSON file.

One trace per replay: a root ``invoke_agent`` span and, per preparation, a ``chat`` span that
follows the GenAI semantic conventions, so any tracing tool that reads OTLP shows the replay like
the agent's own traces:

- ``gen_ai.input.messages``: the prepared request (what the engine would send), as
  ``[{role, parts}]`` with ``text``, ``reasoning``, ``tool_call`` and ``tool_call_response`` parts;
- ``gen_ai.output.messages``: the recorded response of that step;
- ``gen_ai.usage.input_tokens``: the prepared request's estimated size as a whole request
  (calibrated local estimate + unrecorded overhead, the basis the provider counts on; the request
  was never sent, so no provider counted it), the raw local estimate is
  ``context_workbench.local.input_tokens``; ``gen_ai.usage.output_tokens``: the recorded
  response's output tokens (absent when the transcript has no usage); the provider's recorded
  prompt size of the original request is ``context_workbench.recorded.input_tokens``;
- ``context_workbench.*``: step, phase, budget, pressure line, compaction, stages, record ids.

A failed preparation's span has an error status and no input messages. Times are the recorded
responses' timestamps where the transcript has them, otherwise consecutive milliseconds from the
export time. The file can be imported back (``workbench import``, format ``otel``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from iris.errors import StorageError
from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.safe_files import write_file
from iris.session import Message, Session

__all__ = ["SCOPE", "export_otlp", "message_parts", "otlp_document", "write_otlp"]

SCOPE = "context_workbench.replay"
_MS = 1_000_000


def otlp_document(session: Session, preparations: Sequence[ContextPreparation],
                  request_of: Callable[[ContextPreparation], PreparedRequest | None], *,
                  replay_name: str = "replay", now_ns: int | None = None) -> dict[str, Any]:
    """The OTLP JSON ``TracesData`` of one replay (see the module docstring)."""
    first = preparations[0] if preparations else None
    trace = _hex(f"{session.header.session_id}|{first.run_id if first else ''}|{replay_name}", 32)
    root_id = _hex(f"{trace}|root", 16)
    base = now_ns if now_ns is not None else time.time_ns()
    spans = []
    for n, prep in enumerate(preparations):
        start = _start(session, prep, base + n * _MS)
        spans.append(_chat_span(session, prep, request_of(prep), trace, root_id, start))
    starts = [int(s["startTimeUnixNano"]) for s in spans] or [base]
    root = {"traceId": trace, "spanId": root_id, "name": f"invoke_agent {replay_name}", "kind": 1,
            "startTimeUnixNano": str(min(starts)), "endTimeUnixNano": str(max(starts) + _MS),
            "attributes": _attrs({"gen_ai.operation.name": "invoke_agent",
                                  "gen_ai.agent.name": replay_name,
                                  "gen_ai.conversation.id": session.header.session_id,
                                  "context_workbench.session_title": session.header.title,
                                  "context_workbench.steps": len(preparations)}),
            "status": {}}
    return {"resourceSpans": [{
        "resource": {"attributes": _attrs({"service.name": "context-workbench"})},
        "scopeSpans": [{"scope": {"name": SCOPE}, "spans": [root, *spans]}]}]}


def export_otlp(replay: Any, path: str | Path) -> Path:
    """Write a notebook replay (:class:`workbench.notebook.NotebookReplay`) as OTLP JSON."""
    return write_otlp(path, otlp_document(replay.session, replay.preparations, replay.result.request,
                                          replay_name=replay.label))


def write_otlp(path: str | Path, document: dict[str, Any]) -> Path:
    """Write the document on one line, as the collector's file exporter writes and its
    ``otlpjsonfile`` receiver reads (atomically; a symbolic link at the target is refused)."""
    path = Path(path)
    try:
        write_file(path, json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")
    except OSError as exc:
        raise StorageError(f"{path}: cannot write the OTLP file ({exc.strerror or exc})") from None
    return path


def _whole(prep: ContextPreparation) -> int:
    """The prepared request on the whole-request basis every page states (the raw local estimate
    for records without it)."""
    whole = prep.whole_request_tokens
    return prep.final_input_tokens if whole is None else whole


def _chat_span(session: Session, prep: ContextPreparation, request: PreparedRequest | None,
               trace: str, parent: str, start: int) -> dict[str, Any]:
    response = _response(session, prep)
    model = (response.model if response else None) or session.header.model
    usage = response.usage if response else None
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat", "gen_ai.conversation.id": prep.session_id,
        "gen_ai.request.model": model, "gen_ai.response.model": response.model if response else None,
        "gen_ai.usage.input_tokens": _whole(prep) if request is not None else None,
        "gen_ai.usage.output_tokens": usage.output_tokens if usage else None,
        "gen_ai.input.messages": _messages_json(request.messages) if request is not None else None,
        "gen_ai.output.messages": _messages_json((response,)) if response else None,
        "context_workbench.step_index": prep.step_index, "context_workbench.phase": prep.phase,
        "context_workbench.preparation_id": prep.preparation_id,
        "context_workbench.final_request_ref": prep.final_request_ref,
        "context_workbench.input_budget": prep.input_budget,
        "context_workbench.pressure_line": prep.pressure_line,
        "context_workbench.compaction_applied": prep.compaction_applied,
        "context_workbench.stages": [s.name for s in prep.stages],
        "context_workbench.recorded.input_tokens": usage.prompt_tokens if usage else None,
        "context_workbench.local.input_tokens": (prep.final_input_tokens if request is not None
                                                 else None),
        "context_workbench.recorded.usage_kind": prep.provider_usage_kind,
    }
    status: dict[str, Any] = {}
    if prep.error is not None:
        status = {"code": 2, "message": f"{prep.error.stage or 'preparation'}: {prep.error.message}"}
    return {"traceId": trace, "spanId": _hex(f"{trace}|{prep.preparation_id}|{prep.step_index}", 16),
            "parentSpanId": parent, "name": f"chat {model or 'model'}", "kind": 3,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + _MS),
            "attributes": _attrs(attrs), "status": status}


def _response(session: Session, prep: ContextPreparation) -> Message | None:
    i = prep.response_message_index
    return session.messages[i] if 0 <= i < len(session.messages) else None


def _start(session: Session, prep: ContextPreparation, fallback: int) -> int:
    response = _response(session, prep)
    if response is not None and response.timestamp is not None:
        return int(response.timestamp.timestamp() * 1e9)
    return fallback


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
            parts.append({"type": "tool_call_response", "id": b.call_id, "response": b.text})
        elif b.type == "image":
            parts.append({"type": "uri", "modality": "image", "uri": b.model_ref or b.original_ref or b.name})
    return {"role": message.role, "parts": parts}


def _messages_json(messages: Sequence[Message]) -> str:
    return json.dumps([message_parts(m) for m in messages], ensure_ascii=False)


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    """OTLP key/value attributes (None values left out; 64-bit integers as strings)."""
    return [{"key": k, "value": _any_value(v)} for k, v in values.items() if v is not None]


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _hex(seed: str, width: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:width]
