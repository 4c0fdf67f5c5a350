"""Summarisers (R-PREP-7): extractive, recorded, and an OpenAI-compatible client tested against a
real local HTTP server that answers, errors, returns junk and hangs."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from iris.compaction import (
    REQUIRED_SECTIONS,
    ExtractiveSummariser,
    OpenAICompatibleSummariser,
    RecordedSummariser,
    SummaryRequest,
    SummaryTimeout,
    validate_summary,
)
from iris.errors import SummariserError
from iris.session import (
    Message,
    RecordedCompaction,
    Session,
    SessionHeader,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

GOOD = "\n\n".join(f"## {s}\nConcrete content for {s.lower()} with enough detail."
                   for s in REQUIRED_SECTIONS)


def _head():
    return (
        Message(role="user", content=(TextBlock(text="Fix the parser bug. Never touch the API."),)),
        Message(role="assistant", content=(TextBlock(text="I will read the parser first."),
                                           ToolCallBlock(id="c1", name="read",
                                                         arguments={"path": "src/parser.py"}))),
        Message(role="tool", content=(ToolResultBlock(call_id="c1", text="def parse(): ..."),)),
        Message(role="assistant", content=(ToolCallBlock(id="c2", name="edit",
                                                         arguments={"file_path": "src/parser.py"}),
                                           ToolCallBlock(id="c3", name="bash",
                                                         arguments={"command": "pytest -q"}))),
        Message(role="tool", content=(ToolResultBlock(call_id="c2", text="ok"),
                                      ToolResultBlock(call_id="c3", text="Error: 1 failed",
                                                      is_error=True))),
        Message(role="assistant", content=(TextBlock(
            text="The test still fails. Next I will fix the tokenizer edge case in lexer.py."),)),
    )


def _request(head=None, **kw):
    return SummaryRequest(system_prompt="sys", input_text="input", head=head or _head(),
                          max_tokens=500, **kw)


def test_r_prep_7_extractive_fills_every_section_and_labels_itself():
    """R-PREP-7: the extractive summariser is deterministic, fills every section from the head
    (request, files read and edited, commands and outcomes, errors, last intent), and says so."""
    s = ExtractiveSummariser()
    r1 = s.summarise(_request(current_request="Fix the parser bug."), timeout_seconds=1)
    r2 = s.summarise(_request(current_request="Fix the parser bug."), timeout_seconds=1)
    assert r1 == r2 and r1.kind == "extractive" and r1.usage is None
    sections = {x.title: x.body for x in validate_summary(r1.text)}
    assert sections["Current User Request"] == "Fix the parser bug."
    evidence = sections["Files and Evidence"]
    assert "- Edited:\n  - `src/parser.py`" in evidence
    assert evidence.count("src/parser.py") == 1  # read, then edited: once
    assert "`pytest -q` → failed" in evidence
    assert "`pytest -q` failed: Error: 1 failed" in sections["Open Problems"]
    assert "tokenizer edge case" in sections["Next Step"]
    assert "Extractive summary" in sections["Progress"]


def test_r_prep_7_recorded_picks_summary_nearest_to_cut():
    """R-PREP-7: the recorded summariser reuses the recorded summary nearest to the cut."""
    head = _head()
    msgs = head + tuple(Message(role="user", content=(TextBlock(text=f"more {i}"),))
                        for i in range(10))
    session = Session(header=SessionHeader(session_id="s"), messages=msgs, compactions=(
        RecordedCompaction(at_message=5, summary="Early recorded summary text."),
        RecordedCompaction(at_message=15, summary=GOOD)))
    near_early = RecordedSummariser(session).summarise(_request(head=head), timeout_seconds=1)
    assert near_early.kind == "recorded" and "Early recorded summary text." in near_early.text
    validate_summary(near_early.text)  # wrapped into the required structure
    late = RecordedSummariser(session).summarise(_request(head=msgs), timeout_seconds=1)
    assert late.text == GOOD  # already structured: used verbatim
    inline = Session(header=SessionHeader(session_id="i"), messages=(
        *head, Message(role="user", content=(TextBlock(text=GOOD),), is_compaction_summary=True)))
    assert RecordedSummariser(inline).summarise(_request(head=head), timeout_seconds=1).text == GOOD
    with pytest.raises(SummariserError, match="no recorded"):
        RecordedSummariser(Session(header=SessionHeader(session_id="e"))).summarise(
            _request(), timeout_seconds=1)


class _Handler(BaseHTTPRequestHandler):
    mode = "ok"
    seen: ClassVar[list] = []

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((self.path, self.headers.get("Authorization"), body))
        mode = type(self).mode
        if mode == "hang":
            time.sleep(3)
            return
        if mode == "error":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"boom")
            return
        payload = (b"<html>not json" if mode == "junk" else json.dumps({
            "model": "served-model", "choices": [{"message": {"content": GOOD}}],
            "usage": {"prompt_tokens": 321, "completion_tokens": 54}}).encode())
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    _Handler.seen = []
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1", _Handler
    srv.shutdown()
    srv.server_close()


def test_r_prep_7_remote_answers(server):
    """R-PREP-7: a real chat-completions call: model, messages, key, usage mapped."""
    url, handler = server
    handler.mode = "ok"
    result = OpenAICompatibleSummariser(url, "m1", "secret").summarise(
        _request(), timeout_seconds=5)
    assert result.kind == "remote" and result.text == GOOD and result.model == "served-model"
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (321, 54)
    path, auth, body = handler.seen[0]
    assert path == "/v1/chat/completions" and auth == "Bearer secret"
    assert body["model"] == "m1" and body["max_tokens"] == 500
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_r_prep_7_remote_http_error_and_junk(server):
    """R-PREP-7: HTTP 500 and a junk body are SummariserErrors."""
    url, handler = server
    handler.mode = "error"
    with pytest.raises(SummariserError, match="HTTP 500"):
        OpenAICompatibleSummariser(url, "m").summarise(_request(), timeout_seconds=5)
    handler.mode = "junk"
    with pytest.raises(SummariserError, match="junk answer"):
        OpenAICompatibleSummariser(url, "m").summarise(_request(), timeout_seconds=5)


def test_r_prep_7_remote_timeout_fires_on_hanging_server(server):
    """R-PREP-7: timeout_seconds is honoured against a server that never answers."""
    url, handler = server
    handler.mode = "hang"
    started = time.monotonic()
    with pytest.raises(SummaryTimeout, match="timeout after 0.5 s"):
        OpenAICompatibleSummariser(url, "m").summarise(_request(), timeout_seconds=0.5)
    assert time.monotonic() - started < 2.5


def test_r_prep_7_unreachable_endpoint_is_summariser_error():
    with pytest.raises(SummariserError, match="cannot reach"):
        OpenAICompatibleSummariser("http://127.0.0.1:9", "m").summarise(_request(),
                                                                         timeout_seconds=1)


def test_r_prep_7_from_env(monkeypatch):
    """R-PREP-7: base URL, model and key come from the environment; None when not configured."""
    for name in OpenAICompatibleSummariser.ENV:
        monkeypatch.delenv(name, raising=False)
    assert OpenAICompatibleSummariser.from_env() is None
    monkeypatch.setenv("WORKBENCH_SUMMARY_BASE_URL", "http://h/v1/")
    monkeypatch.setenv("WORKBENCH_SUMMARY_MODEL", "mini")
    s = OpenAICompatibleSummariser.from_env()
    assert s is not None
    assert (s.base_url, s.model, s.api_key) == ("http://h/v1", "mini", None)
