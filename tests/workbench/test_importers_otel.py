"""OpenTelemetry GenAI spans: OTLP JSON, any-agent span lists, indexed legacy attributes
(R-SES-2, R-SES-4, R-SES-5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.errors import SessionFormatError
from iris.session import Message, ToolCallBlock, ToolResultBlock, Usage

from workbench.importers import detect_format, load_session

FIX = Path(__file__).parents[1] / "fixtures" / "importers"


def _usage(message: Message) -> Usage:
    assert message.usage is not None, message
    return message.usage


def _result(message: Message) -> ToolResultBlock:
    block = message.content[0]
    assert isinstance(block, ToolResultBlock), block
    return block


def _shape(session):
    return [(m.role, [b.type for b in m.content]) for m in session.messages]


def test_r_ses_4_otlp_json_semconv_messages_and_usage():
    """R-SES-4/R-SES-2: gen_ai.input/output.messages in OTLP JSON; intValue strings as numbers;
    cached reads inside the input count; the conversation id names the session."""
    result = load_session(FIX / "otel_otlp.json")
    s = result.session
    assert result.format == "otel" == detect_format(FIX / "otel_otlp.json")
    assert _shape(s) == [("system", ["text"]), ("user", ["text"]), ("assistant", ["text", "tool_call"]),
                         ("tool", ["tool_result"]), ("assistant", ["text"])]
    first, second = [m for m in s.messages if m.role == "assistant"]
    assert (_usage(first).input_tokens, _usage(first).output_tokens) == (1200, 40)
    assert _usage(second).cache_read_tokens == 1024 and _usage(second).prompt_tokens == 1310
    assert first.model == "gpt-4o-2024-08-06" and s.header.session_id == "conv-sums-1"
    assert _result(s.messages[3]).call_id == "call_1" and "range_sum" in s.messages[3].text
    assert first.timestamp is not None and first.timestamp.year == 2026
    assert not result.warnings


def test_r_ses_4_any_agent_span_list_pairs_tools_by_time():
    """R-SES-4: input messages only on the first call_llm; the execute_tool span becomes the
    result of the call that requested it (no ids in the file: ids are made from the span)."""
    s = load_session(FIX / "otel_any_agent.json").session
    assert _shape(s) == [("system", ["text"]), ("user", ["text"]), ("assistant", ["tool_call"]),
                         ("tool", ["tool_result"]), ("assistant", ["text"])]
    call = s.messages[2].content[0]
    assert isinstance(call, ToolCallBlock), call
    assert call.name == "read_file" and call.arguments == {"path": "/repo/sums.py"}
    assert _result(s.messages[3]).call_id == call.id
    assert [m.usage.input_tokens for m in s.messages if m.usage] == [269, 331]  # "269" strings


def test_r_ses_2_legacy_indexed_attributes_and_missing_usage():
    """R-SES-2: gen_ai.prompt.N / gen_ai.completion.N, one span per line; a call without usage
    has none, and a warning counts it."""
    result = load_session(FIX / "otel_legacy.jsonl")
    s = result.session
    assert result.format == "otel"
    assert _shape(s)[2:] == [("assistant", ["tool_call"]), ("tool", ["tool_result"]), ("assistant", ["text"])]
    assert _usage(s.messages[2]).input_tokens == 210 and s.messages[4].usage is None
    assert any("1 of 2 model calls record no usage" in w.problem for w in result.warnings)


def test_r_ses_4_collector_file_exporter_lines(tmp_path):
    """One OTLP document per line (the collector's file exporter) reads like one document."""
    doc = json.loads((FIX / "otel_otlp.json").read_text())
    rs = doc["resourceSpans"][0]
    spans = rs["scopeSpans"][0]["spans"]
    lines = [{"resourceSpans": [{**rs, "scopeSpans": [{"spans": spans[:2]}]}]},
             {"resourceSpans": [{**rs, "scopeSpans": [{"spans": spans[2:]}]}]}]
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert detect_format(path) == "otel"
    result = load_session(path)
    assert _shape(result.session) == _shape(load_session(FIX / "otel_otlp.json").session)
    assert not result.warnings  # one trace over two lines
    lines[1]["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["traceId"] = "f" * 32
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert any("2 traces in one file" in w.problem for w in load_session(path).warnings)


def test_r_ses_5_otel_without_model_calls_is_clear(tmp_path):
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"spans": [{"name": "GET /", "span_id": "1", "attributes": {}}]}))
    with pytest.raises(SessionFormatError, match="no GenAI model-call spans among 1 spans"):
        load_session(path)


def test_r_ses_5_bad_span_attribute_names_the_span(tmp_path):
    """R-SES-5: a malformed gen_ai.output.messages names the span and attribute."""
    doc = json.loads((FIX / "otel_otlp.json").read_text())
    attrs = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][3]["attributes"]
    for a in attrs:
        if a["key"] == "gen_ai.output.messages":
            a["value"]["stringValue"] = "[{broken"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SessionFormatError) as err:
        load_session(path)
    assert err.value.field == "resourceSpans[0].scopeSpans[0].spans[3].gen_ai.output.messages"
    assert len(load_session(path, lenient=True).session.messages) == 4


def test_r_ses_4_unknown_json_document_is_unknown_format(tmp_path):
    """A multi-line JSON document of no known shape is "unknown session format" (not a chat
    importer's "no 'messages' array")."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"name": "x", "settings": {"a": 1}}, indent=2))
    with pytest.raises(SessionFormatError, match="unknown session format"):
        load_session(path)


def test_r_ses_4_otlp_written_by_protobuf_json_format(tmp_path):
    """OTLP JSON as protobuf's own JSON printer writes it (ids in base64, int64 as strings, default
    fields left out) imports like the hand-written fixture."""
    json_format = pytest.importorskip("google.protobuf.json_format")
    trace_pb2 = pytest.importorskip("opentelemetry.proto.trace.v1.trace_pb2")
    data = json_format.Parse((FIX / "otel_otlp.json").read_text(), trace_pb2.TracesData())
    path = tmp_path / "printed.json"
    path.write_text(json_format.MessageToJson(data))
    assert "resourceSpans" in path.read_text()
    assert detect_format(path) == "otel"
    printed, fixture = load_session(path).session, load_session(FIX / "otel_otlp.json").session
    assert _shape(printed) == _shape(fixture)
    assert [m.usage for m in printed.messages] == [m.usage for m in fixture.messages]


def test_r_ses_4_messages_on_the_inference_details_event(tmp_path):
    """The conventions also allow the messages on a ``gen_ai.client.inference.operation.details``
    span event instead of span attributes: the same session."""
    doc = json.loads((FIX / "otel_otlp.json").read_text())
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        moved = [a for a in span["attributes"] if a["key"].endswith((".input.messages", ".output.messages"))]
        if moved:
            span["attributes"] = [a for a in span["attributes"] if a not in moved]
            span["events"] = [{"name": "gen_ai.client.inference.operation.details",
                               "timeUnixNano": span["startTimeUnixNano"], "attributes": moved}]
    path = tmp_path / "events.json"
    path.write_text(json.dumps(doc))
    assert _shape(load_session(path).session) == _shape(load_session(FIX / "otel_otlp.json").session)


def test_r_ses_4_sub_agent_calls_are_left_out(tmp_path):
    """Model calls under another invoke_agent span (a sub-agent) are not the conversation of the
    first call's agent: left out, with a warning (no spurious context rewrite)."""
    doc = json.loads((FIX / "otel_otlp.json").read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    root, first_chat = spans[0], spans[1]
    sub = {**root, "spanId": "d000000000000001", "parentSpanId": root["spanId"], "name": "invoke_agent helper",
           "startTimeUnixNano": str(int(first_chat["startTimeUnixNano"]) + 500_000_000)}
    helper = json.loads(json.dumps(first_chat))
    helper.update(spanId="d000000000000002", parentSpanId=sub["spanId"],
                  startTimeUnixNano=str(int(sub["startTimeUnixNano"]) + 1))
    for a in helper["attributes"]:
        if a["key"] == "gen_ai.input.messages":
            a["value"]["stringValue"] = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "sub task"}]}])
    spans += [sub, helper]
    path = tmp_path / "nested.json"
    path.write_text(json.dumps(doc))
    result = load_session(path)
    assert _shape(result.session) == _shape(load_session(FIX / "otel_otlp.json").session)
    assert result.session.compactions == ()
    assert any("1 model calls of other agents" in w.problem for w in result.warnings)
