"""R-TRUTH-3: the OTLP export carries the provider's counts, cache reads and writes and the cost;
re-importing the workbench's own export gives the same session id, bill and error results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.replay import ReplayOptions, replay

from workbench.cli import main
from workbench.importers import load_session
from workbench.importers.claude_progress import subagent_sessions
from workbench.pricing import replay_cost
from workbench.pricing.billing import recorded_bill
from workbench.views.otlp_export import otlp_document

pytestmark = pytest.mark.slow  # replays a real session

SESSION = "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"


def _chat_attributes(document: dict) -> list[dict]:
    out = []
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                if span["name"].startswith("chat"):
                    out.append({a["key"]: next(iter(a["value"].values()))
                                for a in span.get("attributes", [])})
    return out


def _errors(session) -> set[str]:
    return {b.call_id for m in session.messages for b in m.content
            if b.type == "tool_result" and b.is_error}


def test_r_truth_3_the_exported_trace_reimports_with_its_bill_errors_and_id(real_sessions, tmp_path):
    """R-TRUTH-3: ``workbench export FILE --otlp OUT`` read back with the workbench's OTel importer
    has the original's session id, the same recorded bill (cache reads and 1-hour writes
    included) and the same error results."""
    path = real_sessions / "claude_code" / SESSION
    out = tmp_path / "trace.json"
    assert main(["export", str(path), "--otlp", str(out)]) == 0
    original = load_session(path).session
    again = load_session(out).session
    assert again.header.session_id == original.header.session_id
    assert recorded_bill(again).usd == recorded_bill(original).usd
    before, after = _errors(original), _errors(again)
    assert before and after == before
    _check_subagents(json.loads(out.read_text(encoding="utf-8")), original, path)


def _check_subagents(document: dict, session, path: Path) -> None:
    """Each sub-agent's recorded calls are chat spans under an ``invoke_agent`` span under the
    ``execute_tool`` span of the call that started it, costing the sub-agent's bill."""
    spans = [s for r in document["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
    attrs = {s["spanId"]: {a["key"]: next(iter(a["value"].values())) for a in s["attributes"]}
             for s in spans}
    children: dict[str, list[str]] = {}
    for s in spans:
        children.setdefault(s.get("parentSpanId", ""), []).append(s["spanId"])
    subs = {s.header.session_id: s for s in subagent_sessions(path)}
    assert session.subagents and subs
    for run in session.subagents:
        tool = next(i for i, a in attrs.items() if a.get("gen_ai.tool.call.id") == run.call_id)
        assert attrs[tool]["gen_ai.operation.name"] == "execute_tool"
        (agent,) = children[tool]
        assert attrs[agent]["gen_ai.operation.name"] == "invoke_agent"
        assert attrs[agent]["gen_ai.conversation.id"] == run.session_id
        calls = [attrs[c] for c in children[agent]]
        assert calls and all(c["gen_ai.operation.name"] == "chat" for c in calls)
        assert sum(c.get("llm.cost.total", 0) for c in calls) == pytest.approx(
            recorded_bill(subs[run.session_id]).usd, abs=1e-6)


def test_r_truth_3_spans_carry_cache_counts_and_the_cost(real_sessions):
    """R-TRUTH-3: every chat span states its prompt including cached tokens, the cache reads and
    writes and the cost (``llm.cost.total``) as the workbench prices the replayed request; on the
    as-recorded replay those are the provider's counts and the costs add up to the bill. The
    first span's prompt holds the system prompt and tools the provider counted."""
    session = load_session(real_sessions / "claude_code" / SESSION).session
    result = replay(session, options=ReplayOptions(baseline="recorded"))
    spans = _chat_attributes(otlp_document(session, result.preparations, result.request))
    bill = recorded_bill(session).usd
    assert bill is not None
    assert sum(a["llm.cost.total"] for a in spans) == pytest.approx(bill, rel=1e-6)
    first = spans[0]
    assert int(first["gen_ai.usage.input_tokens"]) == int(
        first["context_workbench.recorded.input_tokens"]) > 20_000
    for a in spans:
        prompt = int(a["gen_ai.usage.input_tokens"])
        read = int(a["gen_ai.usage.cache_read.input_tokens"])
        written = int(a["gen_ai.usage.cache_creation.input_tokens"])
        assert read + written <= prompt == int(a["llm.token_count.prompt"])
        assert read == int(a["llm.token_count.prompt_details.cache_read"])
    engine = replay(session)
    priced = _chat_attributes(otlp_document(session, engine.preparations, engine.request))
    assert sum(a["llm.cost.total"] for a in priced) == pytest.approx(
        replay_cost(session, engine).requests_usd, rel=1e-6)


def test_r_truth_3_an_error_result_round_trips(tmp_path):
    """R-TRUTH-3: a tool result marked as an error is exported with ``is_error: true`` and read
    back as an error (the OTel importer also reads the flag from other producers)."""
    from iris.session import Message, ToolCallBlock, ToolResultBlock

    from workbench.services.otlp import write_otlp
    from workbench.views.otlp_export import message_parts

    result = ToolResultBlock(call_id="c1", text="No such file", is_error=True)
    assert message_parts(Message(role="tool", content=(result,)))["parts"][0]["is_error"] is True
    assert "is_error" not in message_parts(Message(role="tool", content=(
        result.model_copy(update={"is_error": False}),)))["parts"][0]
    call = ToolCallBlock(id="c1", name="Read", arguments={"path": "x"})
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "name": "chat m",
        "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps([
                {"role": "user", "parts": [{"type": "text", "content": "read x"}]},
                {"role": "assistant", "parts": [{"type": "tool_call", "id": call.id,
                                                 "name": call.name, "arguments": call.arguments}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                            "response": "No such file", "is_error": True}]}])}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps([
                {"role": "assistant", "parts": [{"type": "text", "content": "gone"}]}])}}]}]}]}]}
    path = write_otlp(Path(tmp_path) / "err.json", doc)
    back = load_session(path).session
    assert _errors(back) == {"c1"}
