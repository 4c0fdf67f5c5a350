"""A replay's preparations as OpenTelemetry GenAI spans (OTLP JSON), and back through the OTel
importer (R-SES-4; the export is the format's round trip)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from record_access import request_of

import workbench as wb
from workbench.cli import main
from workbench.importers import load_session
from workbench.importers.otel_messages import input_turns, output_turns
from workbench.importers.otel_spans import spans_of
from workbench.notebook import replay, sample_path
from workbench.pricing import priced_steps


def _key(block) -> tuple:
    return (block.type, getattr(block, "text", None), getattr(block, "id", None),
            getattr(block, "call_id", None), getattr(block, "name", None),
            json.dumps(getattr(block, "arguments", None), sort_keys=True))


def _message_keys(messages) -> list:
    return [(m.role, [_key(b) for b in m.content]) for m in messages]


@pytest.fixture(scope="module")
def long_session():
    return load_session(sample_path("long_session")).session


def _calls(path: Path) -> list:
    spans = spans_of(json.loads(path.read_text()))
    return [s for s in spans if s.operation == "chat"]


def _check_otlp_shape(doc: dict) -> None:
    """The OTLP JSON encoding: hex ids, nanosecond strings, typed attribute values."""
    [resource] = doc["resourceSpans"]
    for span in resource["scopeSpans"][0]["spans"]:
        assert re.fullmatch(r"[0-9a-f]{32}", span["traceId"]) and re.fullmatch(r"[0-9a-f]{16}", span["spanId"])
        assert span["startTimeUnixNano"].isdigit() and int(span["endTimeUnixNano"]) > int(span["startTimeUnixNano"])
        for attr in span["attributes"]:
            [(kind, value)] = attr["value"].items()
            assert kind in ("stringValue", "intValue", "boolValue", "doubleValue", "arrayValue")
            if kind == "intValue":
                assert isinstance(value, str) and value.lstrip("-").isdigit()


def test_r_ses_4_otlp_round_trip_gives_back_requests_and_usage(long_session, tmp_path):
    """Every chat span carries the prepared request's messages and the usage (estimated input of
    the prepared request as priced, with the unrecorded overhead also on the first request;
    recorded output); importing the file gives back the conversation with the recorded
    response's usage on each response (R-TRUTH-3)."""
    result = replay(long_session, "default", label="default")
    out = result.export_otlp(tmp_path / "trace.json")
    doc = json.loads(out.read_text())
    _check_otlp_shape(doc)
    calls = _calls(out)
    assert len(calls) == len(result.preparations)
    priced = priced_steps(long_session, result.preparations, result.result.request)
    for span, prep in zip(calls, result.preparations, strict=True):
        request = request_of(result.result, prep)
        assert _message_keys(_turn_messages(input_turns(span))) == _message_keys(request.messages)
        assert span.attrs["gen_ai.usage.input_tokens"] == priced[prep.step_index][0].replay_input_tokens
        assert span.attrs["gen_ai.usage.input_tokens"] >= (prep.whole_request_tokens or 0)
        assert span.attrs["context_workbench.local.input_tokens"] == prep.final_input_tokens
        response = long_session.messages[prep.response_message_index]
        assert _message_keys(_turn_messages(output_turns(span))) == _message_keys([response])
    imported = load_session(out)
    assert imported.format == "otel" and imported.session.compactions == ()
    last = result.preparations[-1].response_message_index
    original = long_session.messages[:last + 1]
    # The same conversation: message by message the same roles, calls and results (a result's text
    # is what the first request containing it sent, e.g. folded); responses verbatim.
    assert _structure(imported.session.messages) == _structure(original)
    assert [_message_keys([m]) for m in imported.session.messages if m.role == "assistant"] == [
        _message_keys([m]) for m in original if m.role == "assistant"]
    answers = [m for m in imported.session.messages if m.role == "assistant"]
    for message, prep in zip(answers, result.preparations, strict=True):
        recorded = long_session.messages[prep.response_message_index].usage
        if recorded is None or not recorded.is_trusted:
            assert message.usage is None
            continue
        assert message.usage is not None and message.usage.prompt_tokens == recorded.prompt_tokens
        assert message.usage.output_tokens == recorded.output_tokens


def test_r_ses_4_export_is_valid_otlp_for_the_official_schema(tmp_path):
    """The file parses into the OpenTelemetry protocol's own ``TracesData`` message (field names
    and value types as the collector reads them), and the parsed spans carry the attributes."""
    json_format = pytest.importorskip("google.protobuf.json_format")
    trace_pb2 = pytest.importorskip("opentelemetry.proto.trace.v1.trace_pb2")
    result = replay(load_session(sample_path("bugfix")).session, "default")
    out = result.export_otlp(tmp_path / "bugfix.json")
    data = json_format.Parse(out.read_text(), trace_pb2.TracesData())
    spans = data.resource_spans[0].scope_spans[0].spans
    assert len(spans) == len(result.preparations) + 1 and spans[0].name.startswith("invoke_agent")
    chat = {kv.key: kv.value for kv in spans[1].attributes}
    assert chat["gen_ai.operation.name"].string_value == "chat"
    first = result.preparations[0]
    assert chat["gen_ai.usage.input_tokens"].int_value == (first.whole_request_tokens or 0) + next(
        p.unrecorded_overhead_tokens for p in result.preparations if p.overhead_measured_at is not None)
    assert json.loads(chat["gen_ai.input.messages"].string_value)[0]["parts"]
    assert [v.string_value for v in chat["context_workbench.stages"].array_value.values]


def test_r_ses_4_compacting_replay_imports_with_context_rewrites(long_session, tmp_path):
    """A replay whose compaction replaces the whole context: each such request imports as a
    recorded compaction followed by the new context (compaction-provided messages)."""
    result = replay(long_session, "cost-first", label="cost-first")
    out = wb.export_otlp(result, tmp_path / "cost.json")
    calls = _calls(out)
    for span, prep in zip(calls, result.preparations, strict=True):
        assert _message_keys(_turn_messages(input_turns(span))) == _message_keys(
            request_of(result.result, prep).messages)
    session = load_session(out).session
    applied = [p for p in result.preparations if p.compaction_applied]
    assert applied and 0 < len(session.compactions) <= len(applied)
    for mark in session.compactions:
        assert session.messages[mark.at_message].compaction_provided
        assert mark.source == "otel:context_rewrite"


def _structure(messages) -> list:
    return [(m.role, [(b.type, getattr(b, "id", None), getattr(b, "call_id", None)) for b in m.content])
            for m in messages]


def _turn_messages(turns):
    from iris.session import Message

    return [Message(role=role, content=tuple(blocks)) for role, blocks in turns or []]


@pytest.mark.slow  # starts a process
def test_r_ui_9_export_command_saved_replay_and_transcript(long_session, tmp_path, capsys):
    """``workbench export`` writes a saved replay, or replays a transcript under --config first;
    without --otlp or with an unknown target it is a one-line error."""
    bugfix = str(sample_path("bugfix"))
    assert main(["replay", bugfix, "--name", "mine"]) == 0
    assert main(["replays", "--json"]) == 0
    out = capsys.readouterr().out
    replay_id = json.loads(out[out.index("["):])[0]["id"]
    target = tmp_path / "saved.json"
    assert main(["export", replay_id, "--otlp", str(target)]) == 0
    assert f"model-call spans to {target}" in capsys.readouterr().out
    assert load_session(target).format == "otel"
    again = tmp_path / "fresh.json"
    assert main(["export", bugfix, "--config", "cost-first", "--otlp", str(again)]) == 0
    assert len(_calls(again)) == len(_calls(target))
    assert main(["export", bugfix]) == 1
    assert main(["export", "no-such-thing", "--otlp", str(tmp_path / "x.json")]) == 1
    err = capsys.readouterr().err
    assert "--otlp OUT" in err and "neither a saved replay id" in err and "Traceback" not in err
