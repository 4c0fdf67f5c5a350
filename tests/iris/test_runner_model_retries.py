"""The live runner's model client retries (R-RUN-1): a real local HTTP server answers a scripted
sequence; an answer worth repeating (HTTP 503, 429) is tried again after the backoff or the
server's Retry-After, within the call's deadline; one no retry changes (HTTP 400) is not."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from iris.runner.config import EndpointConfig
from iris.runner.model import ModelCallFailed, OpenAIChatModel

OK = {"id": "c1", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
      "message": {"role": "assistant", "content": "done"}}],
      "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}


@pytest.fixture
def scripted() -> Iterator[tuple[str, list[tuple[int, dict[str, str]]], list[int]]]:
    """(url, answers to give in order as (status, headers), statuses given)."""
    answers: list[tuple[int, dict[str, str]]] = []
    given: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status, headers = answers.pop(0) if answers else (200, {})
            given.append(status)
            payload = json.dumps(OK if status == 200 else {"error": "busy"}).encode()
            self.send_response(status)
            for key, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1", answers, given
    finally:
        server.shutdown()
        server.server_close()


def _model(url: str, **endpoint: object) -> OpenAIChatModel:
    settings = {"base_url": url, "model": "m", "initial_backoff": 0.01, "timeout_seconds": 30,
                **endpoint}
    return OpenAIChatModel(EndpointConfig.model_validate(settings))


def test_r_run_1_a_busy_answer_is_tried_again_and_the_reply_returned(scripted):
    url, answers, given = scripted
    answers += [(503, {}), (429, {"Retry-After": "0"})]
    model = _model(url)
    reply = model.complete([{"role": "user", "content": "hi"}], [])
    assert reply.message.text == "done" and given == [503, 429, 200]
    assert (model.calls, model.attempts) == (1, 3)


def test_r_run_1_attempts_run_out_with_the_last_reason(scripted):
    url, answers, given = scripted
    answers += [(502, {})] * 5
    model = _model(url, max_attempts=2)
    with pytest.raises(ModelCallFailed, match=r"answered HTTP 502.*\(after 2 attempt\(s\)\)"):
        model.complete([{"role": "user", "content": "hi"}], [])
    assert given == [502, 502] and model.attempts == 2


def test_r_run_1_a_retry_after_past_the_deadline_fails_at_once(scripted):
    url, answers, given = scripted
    answers += [(429, {"Retry-After": "3600"})]
    model = _model(url, timeout_seconds=5)
    with pytest.raises(ModelCallFailed, match=r"HTTP 429.*no time left for another attempt within 5 s"):
        model.complete([{"role": "user", "content": "hi"}], [])
    assert given == [429]


def test_r_run_1_an_answer_no_retry_changes_is_not_repeated(scripted):
    url, answers, given = scripted
    answers += [(400, {})]
    with pytest.raises(ModelCallFailed, match="answered HTTP 400"):
        _model(url).complete([{"role": "user", "content": "hi"}], [])
    assert given == [400]
