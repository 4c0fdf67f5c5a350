"""R-TRUTH-1 and R-TWIN-6: the as-recorded replay costs what the session was billed, and the
prompt-cache model prices a changed request from what the session shows: the TTL the agent wrote
at, a re-write after a pause longer than it, caches at breakpoints."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from iris.replay import ReplayOptions, replay

from workbench.importers import load_session
from workbench.pricing import replay_cost
from workbench.pricing.cache import LOOKBACK, CacheRequest, Prefix, cache_splits
from workbench.services.replay import stream_replay

pytestmark = pytest.mark.slow  # replays every real transcript

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("WORKBENCH_SHARED", ROOT.parent / "shared"))


def _transcripts() -> list[Path]:
    found: list[Path] = []
    for folder in (SHARED / "real-sessions", SHARED / "corpus"):
        found += sorted(p for p in folder.glob("*/*") if p.suffix not in (".md", ".txt"))
    return found


@pytest.mark.parametrize("path", _transcripts() or [None], ids=lambda p: p.name[:40] if p else "absent")
def test_r_truth_1_the_as_recorded_replay_costs_the_bill(path):
    """R-TRUTH-1: replaying what the agent sent (``--baseline recorded``) is priced within 1 % of
    the recorded bill on every real transcript, as ``--summary-json`` prices it (a streamed
    replay with the prefix sink)."""
    if path is None:
        pytest.skip("../shared is absent")
    session = load_session(path).session
    streamed = stream_replay(session, baseline="recorded", prefixes=True)
    cost = replay_cost(session, streamed.result, prefixes=streamed.prefixes)
    assert cost.recorded_billed_usd and cost.replay_usd is not None
    assert cost.replay_usd == pytest.approx(cost.recorded_billed_usd, rel=0.01)
    assert cost.saved_usd is not None and abs(cost.saved_usd) <= 0.01 * cost.recorded_billed_usd


def _line(kind: str, n: int, at: datetime, content: object, **extra: object) -> str:
    message = {"role": kind, "content": content, **extra}
    return json.dumps({"type": kind, "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None,
                       "sessionId": "built", "cwd": "/w", "isSidechain": False,
                       "timestamp": at.isoformat().replace("+00:00", "Z"), "message": message})


def _built(tmp_path: Path, *, ttl: str, pause: timedelta) -> Path:
    """A Claude Code transcript of 6 responses 30 s apart, with ``pause`` before the 4th; every
    response reads all of the previous request and writes its growth at ``ttl``."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    lines, prompt, n = [], 3_000, 0
    for k in range(6):
        at += pause if k == 3 else timedelta(seconds=30)
        lines.append(_line("user", n, at, f"step {k}: " + "lorem ipsum dolor sit amet " * 400))
        n += 1
        grown = prompt + 2_000
        split = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
        split[f"ephemeral_{ttl}_input_tokens"] = grown - prompt
        usage = {"input_tokens": 2, "output_tokens": 50, "cache_read_input_tokens": prompt - 2,
                 "cache_creation_input_tokens": grown - prompt, "cache_creation": split}
        lines.append(_line("assistant", n, at + timedelta(seconds=5), [{"type": "text", "text": f"done {k}"}],
                           id=f"msg_{k}", model="claude-opus-4-6", type="message", usage=usage))
        n += 1
        prompt = grown
    path = tmp_path / f"built-{ttl}-{int(pause.total_seconds())}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _engine_cost(path: Path):
    session = load_session(path).session
    return replay_cost(session, replay(session))  # the engine's own requests: the cache model


def test_r_twin_6_a_pause_longer_than_the_ttl_rewrites_the_cache(tmp_path):
    """R-TWIN-6: with 5-minute writes, a replayed request after a 10-minute pause finds the cache
    expired and writes its prefix again; with 1-hour writes the same pause reads it."""
    short, long_ = timedelta(minutes=1), timedelta(minutes=10)
    five_short, five_long = _engine_cost(_built(tmp_path, ttl="5m", pause=short)), _engine_cost(
        _built(tmp_path, ttl="5m", pause=long_))
    hour_short, hour_long = _engine_cost(_built(tmp_path, ttl="1h", pause=short)), _engine_cost(
        _built(tmp_path, ttl="1h", pause=long_))
    assert five_short.replay_cache and five_long.replay_cache
    assert five_long.replay_cache.written_tokens > five_short.replay_cache.written_tokens + 5_000
    assert (five_long.requests_usd or 0) > (five_short.requests_usd or 0)
    assert hour_long.replay_cache == hour_short.replay_cache
    assert hour_long.requests_usd == hour_short.requests_usd


def test_r_twin_6_the_replay_writes_at_the_agents_one_hour_rate(tmp_path):
    """R-TWIN-6: a session whose agent wrote 1-hour entries has its replay's writes priced at the
    1-hour rate (2 × input for Opus 4.6), above the same writes at the 5-minute rate (1.25 ×)."""
    five = _engine_cost(_built(tmp_path, ttl="5m", pause=timedelta(minutes=1)))
    hour = _engine_cost(_built(tmp_path, ttl="1h", pause=timedelta(minutes=1)))
    assert five.replay_cache == hour.replay_cache and hour.replay_cache is not None
    written = hour.replay_cache.written_tokens
    assert written > 0
    # the same tokens, only the write rate differs: 10 − 6.25 $/MTok on every written token
    assert (hour.requests_usd or 0) - (five.requests_usd or 0) == pytest.approx(
        written * (10 - 6.25) / 1e6, rel=1e-3)


def test_r_twin_6_expiry_and_breakpoints_in_the_cache_model():
    """R-TWIN-6: an entry unused for longer than its TTL has expired (the system prefix the agent's
    other requests keep warm stays); a 1-hour entry outlives a 10-minute pause; a rewrite reads
    up to the breakpoint before it, within the provider's lookback; a request the agent sent reads
    and writes what it recorded."""
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    grew = Prefix(kept_all=True)

    def chain(ttl, gap):
        return [CacheRequest("m", 10_000, Prefix(kept_all=False, tail=10_000), recorded_read=2_000,
                             when=t0, ttl=ttl),
                CacheRequest("m", 12_000, grew, recorded_read=9_000, when=t0 + gap, ttl=ttl)]

    assert cache_splits(chain("5m", timedelta(minutes=10)))[1].read == 2_000  # warm system prefix
    assert cache_splits(chain("5m", timedelta(minutes=4)))[1].read == 10_000
    assert cache_splits(chain("1h", timedelta(minutes=10)))[1].read == 10_000
    assert cache_splits(chain("1h", timedelta(minutes=61)))[1].read == 2_000
    sent = cache_splits([chain("5m", timedelta(0))[0],
                         CacheRequest("m", 12_000, grew, recorded_read=4_321, recorded_written=77,
                                      recorded_prompt=12_500, as_recorded=True)])
    assert (sent[1].read, sent[1].written) == (4_321, 77)
    # the recorded request found the cache broken although its history grew: read no more
    broken = cache_splits([CacheRequest("m", 10_000, Prefix(kept_all=False, tail=10_000),
                                        recorded_read=2_000, recorded_written=8_000,
                                        recorded_prompt=10_000),
                           CacheRequest("m", 12_000, grew, recorded_read=2_000,
                                        recorded_written=10_000, recorded_prompt=12_000)])
    assert broken[1].read == 2_000
    # a rewrite older than the provider's lookback finds only the warm system prefix
    history = [CacheRequest("m", 3_000 + 1_000 * k, grew if k else Prefix(kept_all=False, tail=3_000),
                          recorded_read=2_000) for k in range(LOOKBACK + 5)]
    whole = history[-1].whole + 1_000
    near = CacheRequest("m", whole, Prefix(kept_all=False, tail=whole - history[-3].whole))
    far = CacheRequest("m", whole, Prefix(kept_all=False, tail=whole - history[2].whole))
    assert cache_splits([*history, near])[-1].read == history[-3].whole
    assert cache_splits([*history, far])[-1].read == 2_000


def test_r_twin_6_the_batch_sink_prices_like_the_summary(real_sessions):
    """R-TWIN-6: the as-recorded replay priced from a replay that kept its request bodies and one
    that kept only the prefix sink give the same cost."""
    session = load_session(real_sessions / "claude_code" / "spotter_subagent_session.jsonl").session
    full = replay_cost(session, replay(session, options=ReplayOptions(baseline="recorded")))
    streamed = stream_replay(session, baseline="recorded", prefixes=True)
    lean = replay_cost(session, streamed.result, prefixes=streamed.prefixes)
    assert full.replay_usd == lean.replay_usd == full.recorded_billed_usd


def test_r_truth_1_steps_before_the_first_change_cost_what_they_were_billed(real_sessions):
    """R-TRUTH-1: a replay's steps up to its first change send what the agent sent, so each costs
    exactly its recorded bill (the saving is only what the change saved); from the first change
    on, the cache model prices them."""
    from iris.compaction.summarisers import RecordedSummariser

    from workbench.pricing import priced_steps
    from workbench.pricing.billing import billed
    from workbench.services.presets import resolve_config

    session = load_session(real_sessions / "claude_code" /
                           "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz").session
    result = replay(session, resolve_config("claude-code"), summariser=RecordedSummariser(session))
    steps = [priced_steps(session, result.preparations, result.request)[p.step_index]
             for p in result.preparations if p.phase == "ready"]
    sent = [s for s, _ in steps if s.as_recorded]
    assert len(sent) >= 70  # the profile replays the agent's requests up to its compaction
    assert [s.step_index for s in sent] == [s.step_index for s, _ in steps[:len(sent)]]
    for step, usd in steps[:len(sent)]:
        assert step.recorded is not None
        assert usd == billed(step.recorded, step.model, step.when).usd
    assert not any(s.as_recorded for s, _ in steps[len(sent):])
