"""The replay's per-step work follows what changes, with the same records.

The stages keep what they derived at the previous step (the reduction engine's tracker, the fold
index, the trim stage's previous output, the final request's per-part views and hashes) and look
again only at what changed. These tests show that (a) a replay whose caches are dropped at every
step gives the very same records, (b) the reduction work per step does not grow with the history,
(c) the request hash built from cached pieces is the full-form hash, and (d) consecutive final
requests share their unchanged message objects.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest
from iris.preparation import trim
from iris.preparation.records import content_hash
from iris.preparation.state import Marks
from iris.reduction.engine import classified_count
from iris.replay import ReplayEnvironment, ReplayOptions, replay
from iris.tokens import TokenEstimator

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synth import synth_session


@pytest.fixture(scope="module")
def session():
    return synth_session(responses=200, seed=5)


@pytest.fixture(scope="module")
def incremental(session):
    return replay(session, environment=ReplayEnvironment(estimator=TokenEstimator()))


def _dump(result) -> str:
    return json.dumps(result.model_dump(mode="json"), sort_keys=True)


def test_r_prep_6_replay_without_step_caches_gives_identical_records(session, incremental):
    """R-PREP-6: the incremental stages change no record. The same replay with every step decided
    from scratch (``incremental=False``: reduction without its tracker and caches, fold index,
    trim-stage continuation and request views dropped before each step) gives byte-identical
    JSON, compactions included."""
    scratch = replay(session, environment=ReplayEnvironment(estimator=TokenEstimator()),
                     options=ReplayOptions(incremental=False))
    assert incremental.checkpoints  # the walk compacted at least once
    assert _dump(scratch) == _dump(incremental)


def test_r_prep_6_a_fresh_step_memory_keeps_only_the_token_counts(session):
    """R-PREP-6: what ``incremental=False`` gives each step: a fresh step memory (fold index, trim
    run and shortened parts, request views, marks, reduction memory all empty) sharing only the
    message token counts of the replay's memory."""
    from iris.preparation.memory import StepMemory
    from iris.reduction import ReductionMemory

    memory = StepMemory.start(TokenEstimator())
    message = session.messages[1]
    tokens = memory.tokens.message(message)
    memory.marks.get("history", 1, None, ())
    fresh = memory.fresh()
    assert fresh.tokens is memory.tokens and fresh.tokens.message(message) == tokens
    assert fresh.marks.by_value == {} and memory.marks.by_value
    assert fresh.fold.index.parts == [] and fresh.fold.folded == {}
    assert fresh.trim.previous is None and fresh.trim.shortened == {}
    assert fresh.views.parts == () and isinstance(fresh.reduction, ReductionMemory)
    assert fresh.reduction is not memory.reduction


def test_reduction_work_per_step_does_not_grow_with_history(session, monkeypatch):
    """The results the reduction engine classifies per step stay
    bounded while the number of tool results in each request grows."""
    real_reduce = trim.reduce_request
    work, sizes = [], []

    def counting(messages, *, memory, **kw):
        before = classified_count(memory)
        result = real_reduce(messages, memory=memory, **kw)
        work.append(classified_count(memory) - before)
        sizes.append(len(result.decisions))
        return result

    monkeypatch.setattr(trim, "reduce_request", counting)
    replay(session, environment=ReplayEnvironment(estimator=TokenEstimator()))
    steady = work[10:]
    assert max(sizes) > 100
    assert sum(steady) / len(steady) < 20
    assert sum(work) * 5 < sum(sizes)


def test_r_prep_1_request_ref_from_cached_pieces_is_the_full_hash(incremental):
    """R-PREP-1: the request hash built from per-message hashes and mark JSON cached across
    steps (what the evidence store files the request under) equals the hash of the whole request
    serialised at once; the engine's record has no ``final_request_ref`` (no sink)."""
    for p in incremental.preparations[::7]:
        request = incremental.request(p)
        full = content_hash({"messages": [content_hash(m) for m in request.messages],
                             "marks": [m.model_dump(mode="json") for m in request.marks],
                             "tools": list(request.tools), "dropped": list(request.dropped)})
        assert p.final_request_ref is None and full == request.ref


def test_consecutive_requests_share_unchanged_messages(incremental):
    """Unchanged history messages are the same objects from one final request to
    the next (nothing is copied or rebuilt for them), so caches keyed by message hold."""
    shared = []
    preps = [p for p in incremental.preparations if p.phase == "ready" and not p.compaction_applied]
    for a, b in itertools.pairwise(preps):
        ra, rb = incremental.request(a), incremental.request(b)
        if len(rb.messages) < len(ra.messages):
            continue  # a compaction happened between them
        same = sum(1 for x, y in zip(ra.messages, rb.messages) if x is y)
        shared.append(same / len(ra.messages))
    assert len(shared) > 100
    assert sorted(shared)[len(shared) // 2] > 0.8


def test_marks_grow_without_copying_and_keep_old_values():
    """The fold/trim marks are a persistent set: adding keeps the earlier value
    unchanged (a failed step keeps its own), and the levels stay logarithmic in the size."""
    marks, history = Marks(), []
    for step in range(500):
        history.append(marks)
        marks = marks.with_added({f"kept result:{step}:0 rule", f"fold result:{step}:1->x"})
    assert len(marks) == 1000 and "kept result:499:0 rule" in marks
    assert "kept result:300:0 rule" not in history[300] and "kept result:299:0 rule" in history[300]
    assert len(marks._levels) <= 12
    assert marks.with_added({"kept result:1:0 rule"}) is marks
    assert Marks.of(frozenset({"a"})) == {"a"}
