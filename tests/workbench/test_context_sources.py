"""Dynamic context: sources, snapshots and the R-DYN-4 selection order (R-DYN-1…4)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from iris.context import (
    ContextBuildScope,
    ContextContribution,
    ContextSnapshot,
    ContextSource,
    RecordedContextSource,
    StaticContextSource,
    select_contributions,
)
from iris.errors import ConfigError, PreparationError
from iris.session import RecordedContribution, Session, SessionHeader, StepSnapshot
from iris.tokens import TokenEstimator
from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[2]


class FixedEstimator(TokenEstimator):
    """Counts one token per character, so budgets in the tests are exact and readable."""

    def __init__(self) -> None:
        pass

    def count_many(self, texts):
        return [len(t) for t in texts]


def C(key, size, *, required=False, priority=100):
    return ContextContribution(key=key, text="x" * size, required=required, priority=priority)


def scope(session_id="s1", step=0):
    return ContextBuildScope(session_id=session_id, run_id="r1", step_index=step,
                             workspace_root="/w", run_input="fix it")


def session(session_id: str, steps: dict[int, list[tuple[str, str]]]) -> Session:
    return Session(header=SessionHeader(session_id=session_id), context_snapshots=tuple(
        StepSnapshot(step_index=i, contributions=tuple(
            RecordedContribution(key=k, text=t, required=False, priority=50) for k, t in items))
        for i, items in steps.items()))


def test_r_dyn_1_typed_objects_and_defaults():
    c = ContextContribution(key="git", text="clean")
    assert (c.required, c.priority) == (True, 100)
    assert ContextSnapshot().contributions == ()
    s = scope()
    assert (s.session_id, s.run_id, s.step_index, s.workspace_root, s.run_input) == (
        "s1", "r1", 0, "/w", "fix it")
    with pytest.raises(ValidationError):
        ContextBuildScope(session_id="s", run_id="r", step_index=-1)
    with pytest.raises(ValidationError):
        ContextContribution(key="", text="x")


def test_r_dyn_2_duplicate_keys_are_an_error():
    """R-DYN-2."""
    with pytest.raises(ConfigError) as err:
        ContextSnapshot(contributions=(C("a", 1), C("b", 1), C("a", 2)))
    assert err.value.field == "contributions[2].key" and "'a'" in str(err.value)
    with pytest.raises(ConfigError):
        StaticContextSource([C("k", 1), C("k", 1)])


def test_r_dyn_1_sources_satisfy_the_protocol():
    assert isinstance(StaticContextSource(), ContextSource)
    assert isinstance(RecordedContextSource(session("s", {})), ContextSource)


def test_r_dyn_1_static_source_returns_same_snapshot_each_step():
    source = StaticContextSource([C("rules", 3), C("hint", 2, priority=5)])
    a = asyncio.run(source.collect(scope(step=0)))
    b = asyncio.run(source.collect(scope(step=9)))
    assert a == b and a.keys == ("rules", "hint")


def test_r_dyn_2_recorded_snapshot_is_whole_state_not_inherited():
    """R-DYN-2."""
    source = RecordedContextSource(session("s1", {2: [("git", "dirty"), ("ci", "red")], 5: [("git", "clean")]}))
    async def run():
        return [await source.collect(scope(step=i)) for i in (0, 2, 3, 5)]
    step0, step2, step3, step5 = asyncio.run(run())
    assert step0.keys == () and step3.keys == ()  # nothing carried over from step 2
    assert step2.keys == ("git", "ci") and step5.keys == ("git",)
    assert step5.contributions[0].text == "clean" and step2.contributions[1].priority == 50


def test_r_dyn_3_concurrent_collect_for_different_sessions():
    """R-DYN-3."""
    sessions = [session(f"s{n}", {i: [(f"k{n}", f"session {n} step {i}")] for i in range(20)})
                for n in range(5)]
    source = RecordedContextSource(sessions)

    async def run():
        calls = [(f"s{n}", i) for i in range(20) for n in range(5)]
        results = await asyncio.gather(*(source.collect(scope(sid, i)) for sid, i in calls))
        return list(zip(calls, results))

    for (sid, step), snap in asyncio.run(run()):
        n = sid[1:]
        assert snap.keys == (f"k{n}",) and snap.contributions[0].text == f"session {n} step {step}"


def test_r_dyn_3_unknown_session_is_a_clear_error():
    """R-DYN-3."""
    source = RecordedContextSource(session("known", {}))
    with pytest.raises(PreparationError, match="'other'"):
        asyncio.run(source.collect(scope("other", 3)))


def test_r_dyn_2_recorded_sample_session_snapshots():
    """R-DYN-2."""
    from workbench.importers.native import load_native
    path = ROOT / "sample_sessions" / "long_session.jsonl"
    if not path.exists():
        pytest.skip("sample session not generated")
    loaded = load_native(path)
    sess = loaded if isinstance(loaded, Session) else loaded.session
    source = RecordedContextSource(sess)
    steps = source.recorded_steps(sess.header.session_id)
    assert steps
    snap = asyncio.run(source.collect(scope(sess.header.session_id, steps[0])))
    assert any(c.required for c in snap.contributions) and any(not c.required for c in snap.contributions)


def test_r_dyn_4_required_always_kept_and_optional_lowest_priority_first():
    snap = ContextSnapshot(contributions=(
        C("req", 50, required=True, priority=1), C("p10", 10, priority=10), C("p50", 10, priority=50),
        C("p5", 10, priority=5), C("p100", 10, priority=100)))
    result = select_contributions(snap, 75, estimator=FixedEstimator())
    assert [r.key for r in result.removed] == ["p5", "p10"]
    assert [k.key for k in result.kept] == ["req", "p50", "p100"]
    assert result.kept_tokens == 70 and not result.over_allowance
    assert result.removed[0].reason.startswith("optional, priority 5 (removal rank 1 of 4")
    assert "kept total 90 tokens > allowance 75" in result.removed[0].reason
    assert result.kept[0].reason == "required: never removed"


def test_r_dyn_4_equal_priority_later_entry_removed_first():
    snap = ContextSnapshot(contributions=(C("a", 10, priority=20), C("b", 10, priority=20),
                                          C("c", 10, priority=20), C("low", 10, priority=10)))
    result = select_contributions(snap, 15, estimator=FixedEstimator())
    assert [r.key for r in result.removed] == ["low", "c", "b"]
    assert [k.key for k in result.kept] == ["a"]
    assert result.kept_keys == ("a",) and result.removed_keys == ("low", "c", "b")
    assert "removed before 2 earlier entries of the same priority" in result.removed[1].reason
    assert "removed before 1 earlier entry" in result.removed[2].reason


def test_r_dyn_4_required_never_removed_even_over_allowance():
    snap = ContextSnapshot(contributions=(C("big", 100, required=True), C("opt", 5)))
    result = select_contributions(snap, 50, estimator=FixedEstimator())
    assert [k.key for k in result.kept] == ["big"] and [r.key for r in result.removed] == ["opt"]
    assert result.over_allowance and result.required_tokens == 100


def test_r_dyn_4_nothing_removed_when_it_fits_and_selection_is_deterministic():
    snap = ContextSnapshot(contributions=(C("a", 10), C("b", 10, priority=1)))
    first = select_contributions(snap, 20, estimator=FixedEstimator())
    assert first.removed == () and first.kept_snapshot == snap
    assert select_contributions(snap, 20, estimator=FixedEstimator()) == first
    with pytest.raises(ValueError):
        select_contributions(snap, -1, estimator=FixedEstimator())


def test_r_dyn_4_uses_the_real_estimator_by_default():
    snap = ContextSnapshot(contributions=(ContextContribution(key="a", text="hello world", required=False),))
    result = select_contributions(snap, 1000)
    assert result.kept[0].tokens == 2 and result.kept_tokens == 2
