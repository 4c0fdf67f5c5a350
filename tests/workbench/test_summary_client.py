"""The OpenAI-compatible summary client (R-PREP-7) against a real local HTTP server scripted per
scenario: retries with backoff and Retry-After, the circuit breaker, counted attempts and tokens,
reasoning blocks, the token parameter, and the request cache."""

from __future__ import annotations

import time
from typing import SupportsFloat, SupportsIndex

import pytest
from iris.compaction import (
    OpenAICompatibleSummariser,
    RetryPolicy,
    SummaryCallFailed,
    SummaryRequest,
    SummaryTimeout,
    validate_summary,
)
from iris.compaction.remote import parse_retry_after, uses_max_completion_tokens
from iris.compaction.summary_cache import SummaryCache
from iris.errors import SummariserError
from iris.session import Message, TextBlock
from record_access import stage_of
from summary_server import GOOD, ScriptedServer, Step, answer

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

FAST = RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.05, jitter=0.01)


def _request(text: str = "input") -> SummaryRequest:
    head = (Message(role="user", content=(TextBlock(text="Fix the parser."),)),)
    return SummaryRequest(system_prompt="sys", input_text=text, head=head, max_tokens=500)


def _client(srv: ScriptedServer, model: str = "m", **kw) -> OpenAICompatibleSummariser:
    kw.setdefault("policy", FAST)
    kw.setdefault("use_cache", False)
    return OpenAICompatibleSummariser(srv.url, model, **kw)


def test_r_prep_7_http_500_is_retried_with_backoff_then_fails_counted():
    """R-PREP-7: HTTP 500 is retried up to max_attempts with a growing backoff; the call then
    fails, and every attempt is counted."""
    with ScriptedServer([Step(500, "boom")]) as srv:
        client = _client(srv)
        with pytest.raises(SummaryCallFailed, match=r"HTTP 500.*gave up after 3 attempt"):
            client.summarise(_request(), timeout_seconds=5)
        assert srv.calls == 3
        gaps = [b - a for a, b in zip(srv.times, srv.times[1:])]
        assert gaps[0] >= 0.01 and gaps[1] >= 0.02  # exponential: 0.01, then 0.02 (+ jitter)
    s = client.stats
    assert (s.calls, s.attempts, s.retries, s.failures) == (1, 3, 2, 1)


def test_r_prep_7_429_retry_after_is_honoured():
    """R-PREP-7: a 429 with Retry-After waits that long (not the backoff), then succeeds; the
    answer's usage is counted."""
    script = [Step(429, "slow down", headers=(("Retry-After", "0.2"),)), Step(200, answer())]
    with ScriptedServer(script) as srv:
        client = _client(srv)
        slept: list[float] = []

        def sleep(seconds: SupportsFloat | SupportsIndex, /) -> None:  # time.sleep's signature
            slept.append(float(seconds))
            time.sleep(float(seconds))

        client.sleep = sleep
        result = client.summarise(_request(), timeout_seconds=5)
        assert srv.calls == 2 and srv.times[1] - srv.times[0] >= 0.2
    assert slept == [0.2]
    assert result.text == GOOD and result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (1200, 80)
    s = client.stats
    assert (s.attempts, s.retries, s.failures, s.input_tokens, s.output_tokens) == (2, 1, 0, 1200, 80)


def test_r_prep_7_retry_after_beyond_the_timeout_gives_up_at_once():
    """R-PREP-7: a Retry-After that does not fit in timeout_seconds ends the call without waiting."""
    with ScriptedServer([Step(429, "later", headers=(("Retry-After", "30"),))]) as srv:
        started = time.monotonic()
        with pytest.raises(SummaryCallFailed, match=r"HTTP 429.*gave up after 1 attempt\(s\); "
                                                     r"Retry-After 30 s is longer than this call"):
            _client(srv).summarise(_request(), timeout_seconds=2)
        assert srv.calls == 1 and time.monotonic() - started < 1.5


def test_retry_after_parses_seconds_and_http_dates():
    assert parse_retry_after("0.05") == 0.05
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_r_prep_7_non_json_answer_fails_without_retry():
    """R-PREP-7: a 200 whose body is not JSON is a failed call (not retried: it is not transient)."""
    with ScriptedServer([Step(200, "<html>gateway</html>")]) as srv:
        client = _client(srv)
        with pytest.raises(SummaryCallFailed, match="not JSON"):
            client.summarise(_request(), timeout_seconds=5)
        assert srv.calls == 1
    assert client.stats.failures == 1


def test_r_prep_7_reasoning_block_is_stripped_before_validation():
    """R-PREP-7/R-CMP-7: a `<think>…</think>` prefix is removed; the summary then validates. An
    answer that is only reasoning is a failed call whose usage is still counted."""
    content = "<think>\nLet me plan the sections.\n</think>\n\n" + GOOD
    with ScriptedServer([Step(200, answer(content))]) as srv:
        result = _client(srv).summarise(_request(), timeout_seconds=5)
    assert result.text == GOOD and "<think>" not in result.text
    validate_summary(result.text)
    with ScriptedServer([Step(200, answer("<think>only thoughts, never closed",
                                          prompt_tokens=900, completion_tokens=40))]) as srv:
        client = _client(srv)
        with pytest.raises(SummaryCallFailed, match="only a reasoning block") as info:
            client.summarise(_request(), timeout_seconds=5)
    usage = info.value.usage
    assert usage is not None and usage.input_tokens == 900 and client.stats.output_tokens == 40


def test_r_prep_7_slow_answer_times_out_once():
    """R-PREP-7: an answer slower than timeout_seconds is a timeout, not retried."""
    with ScriptedServer([Step(200, answer(), delay=3.0)]) as srv:
        client = _client(srv)
        started = time.monotonic()
        with pytest.raises(SummaryTimeout, match="timeout after 0.3 s"):
            client.summarise(_request(), timeout_seconds=0.3)
        assert time.monotonic() - started < 1.0 and srv.calls == 1
    assert client.stats.failures == 1


def test_r_prep_7_breaker_opens_and_refuses_later_calls_until_a_new_run():
    """R-PREP-7: after failure_threshold failed calls in a row the endpoint is not called again;
    later requests fail at once with "circuit open" naming the last error; start_run closes it."""
    with ScriptedServer([Step(503, "down")]) as srv:
        client = _client(srv)
        for _ in range(2):
            with pytest.raises(SummaryCallFailed):
                client.summarise(_request(), timeout_seconds=5)
        assert srv.calls == 6 and client.stats.breaker_open
        started = time.monotonic()
        for _ in range(5):
            with pytest.raises(SummariserError, match=r"circuit open: 2 failed summary calls in a "
                                                      r"row \(last: .*HTTP 503"):
                client.summarise(_request(), timeout_seconds=5)
        assert srv.calls == 6 and time.monotonic() - started < 0.1
        assert client.stats.refused == 5
        client.start_run()
        with pytest.raises(SummaryCallFailed):
            client.summarise(_request(), timeout_seconds=5)
        assert srv.calls == 9


def test_r_prep_7_unauthorised_opens_the_breaker_at_once():
    """R-PREP-7: HTTP 401 will not change on retry: one attempt, and the breaker opens."""
    with ScriptedServer([Step(401, "bad key")]) as srv:
        client = _client(srv)
        with pytest.raises(SummaryCallFailed, match="HTTP 401"):
            client.summarise(_request(), timeout_seconds=5)
        with pytest.raises(SummariserError, match="circuit open: a permanent error"):
            client.summarise(_request(), timeout_seconds=5)
        assert srv.calls == 1


@pytest.mark.parametrize(("model", "expected"), [
    ("o3-mini", True), ("o1", True), ("openai/o4-mini", True), ("gpt-5.1", True), ("gpt-5", True),
    ("gpt-4o-mini", False), ("gpt-4.1", False), ("qwen2.5-coder", False), ("llama3", False)])
def test_max_completion_tokens_models(model, expected):
    assert uses_max_completion_tokens(model) is expected


def test_r_prep_7_token_parameter_follows_the_model_and_the_endpoint():
    """R-PREP-7: o-series/gpt-5 get max_completion_tokens and no temperature; an endpoint that
    asks for max_completion_tokens with a 400 gets the request again with it."""
    with ScriptedServer([Step(200, answer())]) as srv:
        _client(srv, "gpt-5.1").summarise(_request(), timeout_seconds=5)
        _client(srv, "gpt-4o").summarise(_request(), timeout_seconds=5)
        first, second = srv.bodies
    assert first["max_completion_tokens"] == 500 and "max_tokens" not in first
    assert "temperature" not in first
    assert second["max_tokens"] == 500 and second["temperature"] == 0
    refusal = {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with "
                                    "this model. Use 'max_completion_tokens' instead."}}
    with ScriptedServer([Step(400, refusal), Step(200, answer())]) as srv:
        client = _client(srv, "custom-reasoner")
        assert client.summarise(_request(), timeout_seconds=5).text == GOOD
        assert "max_tokens" in srv.bodies[0] and srv.bodies[1]["max_completion_tokens"] == 500
        assert client.token_parameter == "max_completion_tokens"


def test_r_prep_7_cache_answers_an_unchanged_request_without_a_call(tmp_path):
    """R-PREP-7: the same request (same endpoint, model and body) is answered from the cache: no
    call, no tokens; a changed request is sent. With cache_dir the answer survives the process's
    memory (a new client after the in-process cache is cleared)."""
    SummaryCache.clear_memory()
    with ScriptedServer([Step(200, answer())]) as srv:
        client = _client(srv, use_cache=True, cache_dir=tmp_path / "summaries")
        first = client.summarise(_request("same"), timeout_seconds=5)
        again = client.summarise(_request("same"), timeout_seconds=5)
        client.summarise(_request("edited template"), timeout_seconds=5)
        assert srv.calls == 2
        assert again.text == first.text and again.usage is None and first.usage is not None
        assert (client.stats.cache_hits, client.stats.calls, client.stats.input_tokens) == (1, 2, 2400)
        assert len(list((tmp_path / "summaries").glob("*.json"))) == 2
        SummaryCache.clear_memory()
        fresh = _client(srv, use_cache=True, cache_dir=tmp_path / "summaries")
        assert fresh.summarise(_request("same"), timeout_seconds=5).text == GOOD
        assert srv.calls == 2 and fresh.stats.cache_hits == 1
    SummaryCache.clear_memory()


def test_r_prep_7_failures_are_not_cached():
    """R-PREP-7: only accepted answers are cached: a failed request is sent again next time."""
    SummaryCache.clear_memory()
    with ScriptedServer([Step(200, "not json"), Step(200, answer())]) as srv:
        client = _client(srv, use_cache=True, policy=RetryPolicy(failure_threshold=5))
        with pytest.raises(SummaryCallFailed):
            client.summarise(_request("x"), timeout_seconds=5)
        assert client.summarise(_request("x"), timeout_seconds=5).text == GOOD
        assert srv.calls == 2
    SummaryCache.clear_memory()


def _long_session():
    from pathlib import Path

    from workbench.importers import load_session

    return load_session(Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl").session


def test_r_prep_7_replay_with_a_dead_endpoint_records_each_failed_step_and_counts_the_calls():
    """R-PREP-7/R-TOK-6: in a replay the breaker stops the calls after two failures; each later
    step that needed a summary is failed with "circuit open" (no request rendered or sent); the
    replay's summary usage holds the client's calls, attempts, failures and refusals; the next
    replay with the same client starts with the breaker closed."""
    from iris.config import parse_config
    from iris.replay import replay

    session = _long_session()
    cfg = parse_config({"compaction": {"input_budget_tokens": 96000, "timeout_seconds": 2}})
    with ScriptedServer([Step(502, "bad gateway")]) as srv:
        client = _client(srv)
        started = time.monotonic()
        r = replay(session, cfg, summariser=client)
        assert time.monotonic() - started < 30 and srv.calls == 6
        failed = [p for p in r.preparations if p.phase == "failed"]
        assert len(failed) > 2
        reasons = [stage_of(p, "compaction").decisions[-1].reason for p in failed]
        assert all("HTTP 502" in x for x in reasons[:2])
        assert all(x.startswith("summariser error: circuit open") for x in reasons[2:])
        c = r.run_usage.compaction
        assert (c.calls, c.attempts, c.failures, c.refused) == (2, 6, 2, len(failed) - 2)
        again = replay(session, cfg, summariser=client)
        assert srv.calls == 12 and again.run_usage.compaction.attempts == 6


def test_r_prep_7_replay_usage_counts_every_summary_call_and_cache_hits():
    """R-PREP-7/R-TOK-6: a working endpoint: calls and tokens counted per replay; the same replay
    again is answered from the in-process cache (no request reaches the server)."""
    from iris.config import parse_config
    from iris.replay import replay

    SummaryCache.clear_memory()
    session = _long_session()
    cfg = parse_config({"compaction": {"input_budget_tokens": 96000, "timeout_seconds": 5}})
    with ScriptedServer([Step(200, answer("<think>x</think>" + GOOD))]) as srv:
        first = replay(session, cfg, summariser=_client(srv, use_cache=True))
        sent = srv.calls
        second = replay(session, cfg, summariser=_client(srv, use_cache=True))
        assert srv.calls == sent >= 1
    a, b = first.run_usage.compaction, second.run_usage.compaction
    assert (a.calls, a.input_tokens, a.output_tokens) == (sent, 1200 * sent, 80 * sent)
    assert (b.calls, b.cache_hits, b.input_tokens) == (0, sent, 0)
    assert [c.step_index for c in first.checkpoints] == [c.step_index for c in second.checkpoints]
    assert first.checkpoints and "<think>" not in first.checkpoints[0].checkpoint_text
    SummaryCache.clear_memory()


def test_r_prep_7_endpoint_refusing_temperature_gets_the_request_without_it():
    """R-PREP-7: a model that accepts only the default temperature answers 400 naming it; the
    request is sent again without ``temperature``, and later requests leave it out."""
    refusal = {"error": {"message": "Unsupported value: 'temperature' does not support 0 with "
                                    "this model. Only the default (1) value is supported."}}
    with ScriptedServer([Step(400, refusal), Step(200, answer())]) as srv:
        client = _client(srv, "reasoner")
        assert client.summarise(_request("a"), timeout_seconds=5).text == GOOD
        client.summarise(_request("b"), timeout_seconds=5)
        assert [("temperature" in b) for b in srv.bodies] == [True, False, False]
        assert client.stats.failures == 0


def test_summary_cache_memory_is_bounded():
    """The in-process cache keeps the most recently used MEMORY_ENTRIES answers."""
    from iris.compaction.summary_cache import MEMORY_ENTRIES

    SummaryCache.clear_memory()
    cache = SummaryCache()
    for i in range(MEMORY_ENTRIES + 5):
        cache.put(f"k{i}", f"text {i}", None)
        if i == MEMORY_ENTRIES - 1:  # full: using k0 makes k1 the least recently used
            assert cache.get("k0") == ("text 0", None)  # used: kept
    assert cache.get("k0") == ("text 0", None) and cache.get("k1") is None
    assert cache.get(f"k{MEMORY_ENTRIES + 4}") == (f"text {MEMORY_ENTRIES + 4}", None)
    SummaryCache.clear_memory()
