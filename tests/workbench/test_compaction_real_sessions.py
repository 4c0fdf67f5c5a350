"""Compaction and usage tracking over the real recorded sessions (R-CMP-8, R-TOK-3…5)."""

from __future__ import annotations

from pathlib import Path

from iris.compaction import (
    AppliedDecision,
    CompactionEnvironment,
    CompactionRequest,
    ExtractiveSummariser,
    UsageTracker,
    compact,
    context_bytes,
    read_archive,
    thresholds,
)
from iris.config import parse_config
from iris.prompts import PromptSnapshot
from iris.tokens import default_estimator

EST = default_estimator()


def _sessions(real: Path):
    from workbench.importers import load_session

    return [load_session(p).session for p in sorted(real.rglob("*.json*"))]


def test_r_cmp_8_real_sessions_compact_losslessly(real_sessions, tmp_path):
    """R-CMP-8/R-CMP-7 on every real session: a manual compaction of the whole history either
    applies (≤ line, smaller, archive == head) or reports why, never raising."""
    applied = 0
    for n, session in enumerate(_sessions(real_sessions)):
        history = list(session.messages)
        before = EST.request_tokens(history)
        cfg = parse_config({"compaction": {"input_budget_tokens": max(before, 4000)}})
        t = thresholds(cfg, session.header.limits)
        out = compact(
            CompactionRequest(history=history, request_tokens=before, trigger="manual"),
            CompactionEnvironment(config=cfg, thresholds=t, prompts=PromptSnapshot.defaults(),
                                  summariser=ExtractiveSummariser(), work_dir=tmp_path / str(n),
                                  estimator=EST))
        assert out.status in ("applied", "rejected", "no_cut")
        if out.status == "applied":
            applied += 1
            done = out.decisions[-1]
            assert isinstance(done, AppliedDecision) and out.archive_path is not None
            after = done.after_tokens
            assert after <= t.pressure_line and after < before
            assert read_archive(Path(out.archive_path)) == tuple(history[:out.cut_index])
    assert applied >= 2


def test_r_tok_4_tracker_over_real_sessions(real_sessions):
    """R-TOK-3/4: replaying real responses, trusted usage gives observed readings and missing
    usage gives ≈ estimates from the last sample (or 0 before any sample)."""
    for session in _sessions(real_sessions):
        tracker = UsageTracker(model=session.header.model)
        for i, message in enumerate(session.messages):
            if message.role != "assistant":
                continue
            tracker = tracker.observe_response(message.usage,
                                               context_bytes=context_bytes(session.messages[:i]),
                                               model=message.model)
            if message.usage is not None and message.usage.is_trusted:
                assert tracker.reading.tokens == message.usage.prompt_tokens
                assert not tracker.reading.approximate
            elif tracker.sample is None:
                assert tracker.reading.tokens == 0
            else:
                assert tracker.reading.approximate and tracker.reading.kind == "estimated"
        assert tracker.totals.main.calls == sum(m.role == "assistant" for m in session.messages)
        if any(m.usage for m in session.messages):
            assert tracker.totals.main.prompt_tokens > 0
