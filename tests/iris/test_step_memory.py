"""The preparation stages' step memory is keyed by values, never by object identity.

Each step below is prepared from parts made anew from deep copies of the session's messages (equal
content, new objects), once with one step memory carried from step to step and once with a fresh
memory per step. The records must be the same, and the carried memory must still reuse what it
made at the previous step (a rewritten part is the same object again), which a cache keyed by
object identity could not do with new objects.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from iris.compaction.thresholds import thresholds
from iris.config import default_config
from iris.preparation.memory import StepMemory, starts_with
from iris.preparation.pipeline import PreparationOutcome, StepMeta, prepare
from iris.preparation.state import Part, PipelineSettings, PreparationState
from iris.session import Session
from iris.tokens import TokenEstimator

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synth import synth_session


@pytest.fixture(scope="module")
def session() -> Session:
    return synth_session(responses=40, seed=3)


def _settings(session: Session, memory: StepMemory, tmp: Path) -> PipelineSettings:
    config = default_config()
    t = thresholds(config, session.header.limits, session.header.model)
    return PipelineSettings(config=config, thresholds=t, memory=memory, work_dir=tmp)


def _parts(session: Session, upto: int, memory: StepMemory) -> tuple[Part, ...]:
    """Parts of messages ``[0, upto)`` made from deep copies: equal content, new objects."""
    copies = [m.model_copy(deep=True) for m in session.messages[:upto]]
    return tuple(Part(m, memory.tokens.message(m), "history", i) for i, m in enumerate(copies))


def _step(session: Session, k: int, carry: PreparationState, memory: StepMemory,
          tmp: Path) -> PreparationOutcome:
    upto = session.index.batches[k].assistant_message
    parts = _parts(session, upto, memory)
    tokens = sum(p.tokens for p in parts)
    state = PreparationState(step_index=k, history=parts, durable=parts, durable_tokens=tokens,
                             history_tokens=tokens, reduction_state=carry.reduction_state,
                             seen=carry.seen)
    meta = StepMeta(configuration_snapshot_id="c", run_id="r", session_id="s", step_index=k,
                    response_message_index=upto)
    return prepare(state, _settings(session, memory, tmp), meta)


def test_r_prep_6_step_memory_reuses_by_content_and_changes_no_record(session, tmp_path):
    """R-PREP-6: with new but equal part objects at every step, a carried step memory gives the
    records of a fresh memory per step, and still hands back the rewritten (trimmed, reduced or
    folded) parts it made at the previous step."""
    carried = StepMemory.start(TokenEstimator())
    carry = scratch_carry = PreparationState(step_index=0)
    reused = rewritten = 0
    previous: tuple[Part, ...] = ()
    for k in range(len(session.index.batches)):
        outcome = _step(session, k, carry, carried, tmp_path / "a")
        scratch = _step(session, k, scratch_carry, StepMemory.start(TokenEstimator()),
                        tmp_path / "b")
        assert outcome.preparation == scratch.preparation, k
        assert outcome.request == scratch.request, k
        history = outcome.state.history
        for i, part in enumerate(history[:len(previous)]):
            if part.marks:
                rewritten += 1
                reused += part is previous[i]
        previous = history
        carry, scratch_carry = outcome.state, scratch.state
    assert rewritten > 50
    assert reused / rewritten > 0.9
    assert carried.trim.shortened and carried.trim.previous is not None


def test_starts_with_accepts_equal_parts_and_rejects_changed_ones(session):
    """A memory entry is reused for the same parts or equal ones, never for changed content."""
    memory = StepMemory.start(TokenEstimator())
    old, new = _parts(session, 12, memory), _parts(session, 15, memory)
    assert old[0] is not new[0] and starts_with(new, old) and starts_with(old, old)
    assert not starts_with(old, new)  # longer than the history
    changed = list(new)
    first = changed[3]
    changed[3] = Part(first.message.model_copy(update={"id": "other"}), first.tokens, "history", 3)
    assert not starts_with(tuple(changed), old)
