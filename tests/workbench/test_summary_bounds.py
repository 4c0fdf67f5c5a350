"""The summariser call is bounded (R-BOUND-1): ``timeout_seconds`` is a deadline over connect,
headers and body, and the answer's size is capped, against a real local HTTP server that trickles
its answer a byte at a time or sends a huge one."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from iris.compaction import OpenAICompatibleSummariser, RetryPolicy, SummaryRequest, SummaryTimeout
from iris.compaction.remote import SummaryTooLarge
from iris.errors import SummariserError
from iris.session import Message, TextBlock
from summary_server import ScriptedServer, Step, answer

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

FAST = RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.05, jitter=0.01)


def _request() -> SummaryRequest:
    head = (Message(role="user", content=(TextBlock(text="Fix the parser."),)),)
    return SummaryRequest(system_prompt="sys", input_text="input", head=head, max_tokens=500)


def _client(srv: ScriptedServer, **kw) -> OpenAICompatibleSummariser:
    return OpenAICompatibleSummariser(srv.url, "m", policy=FAST, use_cache=False, **kw)


@pytest.mark.parametrize("headers", [True, False], ids=["headers", "body"])
def test_r_bound_1_a_trickling_answer_ends_at_the_deadline(headers):
    """R-BOUND-1: an endpoint sending its headers (or its body) one byte every 0.1 s — always
    within a per-read timeout — fails with SummaryTimeout when timeout_seconds (0.8 s) is spent,
    not after the whole answer (about 30 s), and is not retried."""
    with ScriptedServer([Step(200, answer(), trickle=0.1, trickle_headers=headers)]) as srv:
        client = _client(srv)
        started = time.monotonic()
        with pytest.raises(SummaryTimeout, match=r"timeout after 0.8 s .*whole body"):
            client.summarise(_request(), timeout_seconds=0.8)
        elapsed = time.monotonic() - started
        assert 0.7 < elapsed < 2.0, elapsed
        assert srv.calls == 1
    assert client.stats.failures == 1


def test_r_bound_1_a_fast_answer_still_arrives_whole():
    """R-BOUND-1: the deadline and the cap leave an ordinary answer alone."""
    with ScriptedServer([Step()]) as srv:
        result = _client(srv, max_body_bytes=10_000).summarise(_request(), timeout_seconds=5)
        assert result.text.startswith("## ") and result.model == "served-model"
        assert result.usage is not None and result.usage.input_tokens == 1200


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_r_bound_1_a_huge_answer_is_refused_without_reading_it(chunked):
    """R-BOUND-1: a 64 MB answer against a 1 MB cap fails with SummaryTooLarge naming the limit,
    at once (Content-Length) or as soon as the cap is passed (chunked, no length): the client
    stops reading, so the server cannot write the whole answer."""
    size = 64 * 1024 * 1024
    with ScriptedServer([Step(200, huge=size, chunked=chunked)]) as srv:
        client = _client(srv, max_body_bytes=1024 * 1024)
        started = time.monotonic()
        with pytest.raises(SummaryTooLarge, match=r"too large .*max_body_bytes=1048576"):
            client.summarise(_request(), timeout_seconds=20)
        assert time.monotonic() - started < 5
        assert srv.calls == 1
        assert srv.sent_bytes < size // 2
    assert client.stats.failures == 1


def test_r_bound_1_body_cap_from_the_environment(monkeypatch):
    """R-BOUND-1: WORKBENCH_SUMMARY_MAX_BODY_BYTES sets the cap of a client made from the
    environment; a value that is not a positive whole number is refused by name."""
    monkeypatch.setenv("WORKBENCH_SUMMARY_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("WORKBENCH_SUMMARY_MODEL", "m")
    default = OpenAICompatibleSummariser.from_env()
    assert default is not None and default.max_body_bytes == 4 * 1024 * 1024
    monkeypatch.setenv("WORKBENCH_SUMMARY_MAX_BODY_BYTES", "2048")
    capped = OpenAICompatibleSummariser.from_env()
    assert capped is not None and capped.max_body_bytes == 2048
    monkeypatch.setenv("WORKBENCH_SUMMARY_MAX_BODY_BYTES", "2e9")
    with pytest.raises(SummariserError, match="WORKBENCH_SUMMARY_MAX_BODY_BYTES"):
        OpenAICompatibleSummariser.from_env()


def test_r_bound_1_a_replay_against_a_trickling_endpoint_ends_in_bounded_time():
    """R-BOUND-1: a whole replay with timeout_seconds 0.5 against an endpoint that trickles every
    answer: two calls time out, the breaker opens, every later step is refused at once."""
    from iris.config import parse_config
    from iris.replay import replay

    from workbench.importers import load_session

    path = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl"
    session = load_session(path).session
    cfg = parse_config({"compaction": {"input_budget_tokens": 96000, "timeout_seconds": 0.5}})
    with ScriptedServer([Step(200, answer(), trickle=0.05)]) as srv:
        client = _client(srv)
        started = time.monotonic()
        r = replay(session, cfg, summariser=client)
        assert time.monotonic() - started < 10
        assert srv.calls == 2 and client.stats.breaker_open
        assert "timeout after 0.5 s" in (client.stats.breaker_reason or "")
    assert r.run_usage.compaction.refused > 0
