"""`workbench export --otlp-endpoint`: the replay's spans sent as OTLP protobuf over HTTP to a real
local receiver, which decodes them with ``opentelemetry-proto`` and checks the GenAI message schema
as a tracing tool does (R-UI-9, R-SES-4)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.importers import load_session
from workbench.notebook import replay, sample_path

trace_service_pb2 = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

ROLES = {"system", "user", "assistant", "tool"}
PART_FIELDS = {"text": {"content"}, "reasoning": {"content"}, "tool_call": {"id", "name"},
               "tool_call_response": {"id", "response"}, "uri": {"modality", "uri"}}
FINISH_REASONS = {"stop", "length", "content_filter", "tool_call", "error"}
REQUIRED = ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model")
REAL = Path(__file__).resolve().parents[3] / "shared" / "real-sessions" / "claude_code"


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP traces endpoint on 127.0.0.1: protobuf only (JSON gets 415, as Phoenix answers),
    an optional fixed refusal, every decoded request kept."""

    def __init__(self, refuse: int | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.refuse = refuse
        self.requests: list = []
        self.headers_seen: list = []  # http.client.HTTPMessage: names case-insensitive

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        self.server.headers_seen.append(self.headers)
        if self.path != "/v1/traces":
            return self._answer(404)
        if self.headers.get("Content-Type") != "application/x-protobuf":
            return self._answer(415)
        if self.server.refuse:
            return self._answer(self.server.refuse)
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append(request)
        self._answer(200, trace_service_pb2.ExportTraceServiceResponse().SerializeToString())

    def _answer(self, status: int, body: bytes = b"") -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver():
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def _spans(server: Receiver) -> list:
    return [span for request in server.requests for rs in request.resource_spans
            for ss in rs.scope_spans for span in ss.spans]


def _attrs(span) -> dict:
    return {kv.key: _value(kv.value) for kv in span.attributes}


def check_genai_schema(span) -> dict:
    """What a GenAI-aware tool requires of a chat span: the required attributes, messages as
    ``[{role, parts}]`` with typed parts, and a finish reason on every output message."""
    attrs = _attrs(span)
    for key in REQUIRED:
        assert attrs.get(key), f"{span.name}: {key} missing"
    for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
        for message in json.loads(attrs.get(key, "[]")):
            assert message["role"] in ROLES, message["role"]
            for part in message["parts"]:
                assert PART_FIELDS[part["type"]] <= part.keys(), part
            if key == "gen_ai.output.messages":
                assert message["finish_reason"] in FINISH_REASONS, message
    return attrs


def _export(*args: str, home: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "workbench.cli", "export", *args], input=stdin,
                          capture_output=True, env=env, timeout=120, check=False)


@pytest.mark.slow
def test_r_ui_9_export_pushes_protobuf_that_a_receiver_decodes_and_validates(receiver, tmp_path):
    """The real CLI sends a replay to a local OTLP/HTTP receiver as protobuf: one trace, a root
    ``invoke_agent`` span and one chat span per step, each passing the GenAI message schema (every
    output message has a finish reason); the spans last from request to response time as recorded;
    the ids are those of the JSON file written in the same run."""
    out = tmp_path / "trace.json"
    done = _export(str(sample_path("bugfix")), "--otlp-endpoint", receiver.url, "--otlp", str(out),
                   "--otlp-header", "Authorization=Bearer test-token", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr.decode()
    assert b"sent " in done.stdout and b"/v1/traces (OTLP protobuf)" in done.stdout
    assert receiver.headers_seen[0].get("Authorization") == "Bearer test-token"
    spans = _spans(receiver)
    root, chats = spans[0], spans[1:]
    session = load_session(sample_path("bugfix")).session
    steps = replay(session, "default").preparations
    assert root.name.startswith("invoke_agent") and len(chats) == len(steps)
    assert {s.trace_id for s in spans} == {root.trace_id}
    assert all(s.parent_span_id == root.span_id and s.kind == s.SPAN_KIND_CLIENT for s in chats)
    for span, prep in zip(chats, steps, strict=True):
        attrs = check_genai_schema(span)
        assert attrs["gen_ai.provider.name"] == "anthropic" and attrs["gen_ai.operation.name"] == "chat"
        outputs = json.loads(attrs["gen_ai.output.messages"])
        calls = session.messages[prep.response_message_index].tool_calls
        assert outputs[0]["finish_reason"] == ("tool_call" if calls else "stop")
        response = session.messages[prep.response_message_index]
        previous = session.messages[prep.response_message_index - 1]
        assert response.timestamp and previous.timestamp
        assert span.end_time_unix_nano - span.start_time_unix_nano == round(
            (response.timestamp - previous.timestamp).total_seconds() * 1e9)
    assert root.start_time_unix_nano == chats[0].start_time_unix_nano
    assert root.end_time_unix_nano == chats[-1].end_time_unix_nano
    written = json.loads(out.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [s["spanId"] for s in written] == [s.span_id.hex() for s in spans]
    assert load_session(out).format == "otel"


@pytest.mark.slow
def test_r_ui_9_shift_to_now_moves_the_trace_to_end_now_with_the_same_durations(receiver, tmp_path):
    """--shift-to-now: the trace ends at the moment of export; every span keeps its duration and
    its distance to the others."""
    sample = str(sample_path("bugfix"))
    assert _export(sample, "--otlp-endpoint", receiver.url, home=tmp_path / "h").returncode == 0
    before = time.time_ns()
    assert _export(sample, "--otlp-endpoint", receiver.url, "--shift-to-now",
                   home=tmp_path / "h").returncode == 0
    spans = _spans(receiver)
    recorded, shifted = spans[:len(spans) // 2], spans[len(spans) // 2:]
    assert before - 5e9 < shifted[0].end_time_unix_nano <= time.time_ns()
    offset = shifted[0].start_time_unix_nano - recorded[0].start_time_unix_nano
    assert offset > 0
    for a, b in zip(recorded, shifted, strict=True):
        assert b.start_time_unix_nano - a.start_time_unix_nano == offset
        assert b.end_time_unix_nano - a.end_time_unix_nano == offset


@pytest.mark.slow
def test_r_ui_9_a_refusing_or_absent_receiver_is_a_one_line_error(tmp_path):
    """A receiver that answers 401 (a missing key) or nothing listening: exit 1 and one line
    naming the URL and the reason, no traceback."""
    server = Receiver(refuse=401)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = _export(str(sample_path("bugfix")), "--otlp-endpoint", server.url, home=tmp_path / "h")
    finally:
        server.shutdown()
        server.server_close()
    err = done.stderr.decode()
    assert done.returncode == 1 and err.count("\n") == 1, err
    assert f"{server.url}/v1/traces: the OTLP receiver did not take the spans" in err and "401" in err
    assert "Traceback" not in err
    started = time.monotonic()
    absent = _export(str(sample_path("bugfix")), "--otlp-endpoint", server.url, home=tmp_path / "h")
    err = absent.stderr.decode()
    assert absent.returncode == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "the OTLP receiver did not take the spans" in err
    assert time.monotonic() - started < 60  # retried within the exporter's timeout, then given up
    assert main(["export", "bugfix", "--otlp-header", "no-equals", "--otlp-endpoint", server.url]) == 1


@pytest.mark.slow
def test_r_ui_9_export_reads_a_transcript_on_standard_input(receiver, tmp_path):
    """``-`` as TARGET reads the transcript from standard input."""
    data = Path(sample_path("bugfix")).read_bytes()
    done = _export("-", "--otlp-endpoint", receiver.url, home=tmp_path / "h", stdin=data)
    assert done.returncode == 0, done.stderr.decode()
    assert len(_spans(receiver)) > 1


@pytest.mark.slow
@pytest.mark.skipif(not REAL.is_dir(), reason="real transcripts not available")
def test_r_real_1_real_claude_code_session_spans_last_as_the_model_calls_did(tmp_path):
    """On a real Claude Code session every chat span passes the GenAI schema and lasts from its
    request to its response (seconds, as the recorded times say), none the 1 ms placeholder."""
    from workbench.views.otlp_export import otlp_spans, spans_document

    session = load_session(REAL / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl.gz").session
    result = replay(session, "default")
    spans = otlp_spans(result.session, result.preparations, result.result.request)
    request = trace_service_pb2.ExportTraceServiceRequest()
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request.ParseFromString(encode_spans(spans).SerializeToString())
    chats = request.resource_spans[0].scope_spans[0].spans[1:]
    durations = [(s.end_time_unix_nano - s.start_time_unix_nano) / 1e9 for s in chats]
    for span in chats:
        check_genai_schema(span)
    assert len(chats) == len(result.preparations) and min(durations) > 0.5
    assert json.dumps(spans_document(spans))  # the JSON encoding of the same spans


def test_r_ui_9_a_switched_off_sdk_is_a_clear_error(monkeypatch):
    """OTEL_SDK_DISABLED makes the SDK hand out a no-op tracer: the export says so instead of
    writing an empty trace."""
    from iris.errors import IrisError

    from workbench.views.otlp_export import otlp_spans

    result = replay(load_session(sample_path("bugfix")).session, "default")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    with pytest.raises(IrisError, match="OTEL_SDK_DISABLED"):
        otlp_spans(result.session, result.preparations, result.result.request)
