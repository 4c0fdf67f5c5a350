"""The six stages in order, and the one place where a stage failure becomes a record.

``prepare`` runs assembly → fold repeats → drop optional → trim old bodies → compaction → final
selection (R-PREP-2) and always returns a :class:`ContextPreparation`: ``ready`` with its request,
``failed`` with the stage and the error (a stage that raised, a rejected or timed-out compaction),
or ``cancelled`` when the cancel callable says so before a stage starts. Stages after the one
that stopped are recorded as ``skipped`` (not entered), so every record has the six stages.
Nothing raises out of ``prepare`` except a programming error in this module itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypedDict, get_args

from ..compaction.calibration import Calibration
from . import assembly, compaction, drop, final, fold, trim
from .carry import StepCarry
from .records import (
    STAGE_NAMES,
    ContextPreparation,
    Phase,
    PreparationFailure,
    PreparedRequest,
    StageName,
    StageRecord,
    TriggerBasis,
    UsageKind,
)
from .state import PipelineSettings, PreparationState, StageFailed

__all__ = ["STAGES", "PreparationOutcome", "StepMeta", "prepare"]

Stage = Callable[[PreparationState, PipelineSettings], tuple[PreparationState, StageRecord]]

#: The pipeline, in R-PREP-2 order.
STAGES: tuple[tuple[StageName, Stage], ...] = (
    ("assembly", assembly.apply), ("fold_repeats", fold.apply), ("drop_optional", drop.apply),
    ("trim_old_bodies", trim.apply), ("compaction", compaction.apply),
    ("final_selection", final.apply))
assert tuple(name for name, _ in STAGES) == STAGE_NAMES


@dataclass(frozen=True)
class StepMeta:
    """Identity and metering of one step that the stages do not decide."""

    configuration_snapshot_id: str
    run_id: str
    session_id: str
    step_index: int
    response_message_index: int
    activation: str = "replay"
    provider_prompt_tokens: int | None = None
    provider_usage_kind: UsageKind = "missing"
    provider_usage_note: str | None = None
    recorded_request_tokens: int | None = None
    """Local estimate of the request the recorded agent sent (see ``ContextPreparation``)."""
    recorded_window: bool = False
    """True for the as-recorded baseline: whole-request figures use the recorded window's
    overhead (re-measured after a recorded compaction)."""


@dataclass(frozen=True)
class PreparationOutcome:
    preparation: ContextPreparation
    request: PreparedRequest | None
    """The final request (None unless ready)."""
    state: PreparationState
    """The state after the pipeline; for a failed or cancelled step, the state it started from."""

    @property
    def carry(self) -> StepCarry:
        """What this step hands to the next one when it is ready (see :mod:`iris.preparation.carry`)."""
        return StepCarry.after(self.state)


def _not_entered(name: StageName, tokens: int, why: str) -> StageRecord:
    return StageRecord(name=name, status="skipped", before_input_tokens=tokens,
                       after_input_tokens=tokens, note=f"not entered: {why}")


def _stopped(records: list[StageRecord], at: int, state: PreparationState, why: str
             ) -> tuple[StageRecord, ...]:
    tokens = state.input_tokens if state.history or state.context else 0
    return tuple(records) + tuple(_not_entered(name, tokens, why) for name, _ in STAGES[at:])


def prepare(state: PreparationState, settings: PipelineSettings, meta: StepMeta, *,
            stages: Sequence[tuple[StageName, Stage]] = STAGES) -> PreparationOutcome:
    """Run every stage; return the record, the request and the state to carry forward."""
    start, records = state, list[StageRecord]()
    failure: PreparationFailure | None = None
    phase = "ready"
    for at, (name, stage) in enumerate(stages):
        if settings.cancel is not None and settings.cancel():
            phase = "cancelled"
            failure = PreparationFailure(stage=name, kind="cancelled",
                                         message=f"cancelled before stage {name!r}")
            records = list(_stopped(records, at, state, "the preparation was cancelled"))
            break
        try:
            state, record = stage(state, settings)
        except StageFailed as exc:
            phase, failure = "failed", exc.failure
            if exc.trigger_reading is not None:
                state = replace(state, trigger_reading=exc.trigger_reading)
            records.append(exc.record)
            records = list(_stopped(records, at + 1, state, f"stage {name!r} failed"))
            break
        except Exception as exc:  # noqa: BLE001 -- any stage error becomes a failed record, never an exception
            phase = "failed"
            failure = PreparationFailure(stage=name, message=str(exc) or type(exc).__name__,
                                         kind="error", error_type=type(exc).__name__)
            tokens = state.input_tokens
            records.append(StageRecord(name=name, status="entered", before_input_tokens=tokens,
                                       after_input_tokens=tokens,
                                       note=f"failed: {type(exc).__name__}: {exc}"))
            records = list(_stopped(records, at + 1, state, f"stage {name!r} failed"))
            break
        records.append(record)
    return _finish(start, state, settings, meta, tuple(records), phase, failure)


class _Truth(TypedDict):
    trigger_tokens: int | None
    trigger_basis: TriggerBasis
    unrecorded_overhead_tokens: int
    overhead_measured_at: int | None
    calibration_ratio: float
    whole_request_tokens: int | None
    recorded_request_tokens: int | None
    recorded_request_whole: int | None


_BASES: dict[str, TriggerBasis] = {basis: basis for basis in get_args(TriggerBasis)}


def _truth(state: PreparationState, meta: StepMeta, sized: bool) -> _Truth:
    """Trigger value and basis, overhead, calibration and whole-request figures of one step
    (``sized``: the step has a request to state, i.e. it is ready or failed in a stage)."""
    cal = state.calibration if state.calibration is not None else Calibration()
    value, basis = state.trigger_reading or (None, "none")
    recorded = meta.recorded_request_tokens
    return _Truth(
        trigger_tokens=value, trigger_basis=_BASES[basis],
        unrecorded_overhead_tokens=cal.window_overhead if meta.recorded_window else cal.overhead,
        overhead_measured_at=cal.window_step if meta.recorded_window else cal.overhead_step,
        calibration_ratio=round(cal.ratio, 6),
        whole_request_tokens=(cal.whole(state.input_tokens, window=meta.recorded_window)
                              if sized else None),
        recorded_request_tokens=recorded,
        recorded_request_whole=(cal.whole(recorded, window=True) if recorded is not None
                                else None))


def _finish(start: PreparationState, state: PreparationState, settings: PipelineSettings,
            meta: StepMeta, records: tuple[StageRecord, ...], phase: Phase,
            failure: PreparationFailure | None) -> PreparationOutcome:
    request = state.request if phase == "ready" else None
    if request is not None and state.request_ref is not None:
        request = request.with_ref(state.request_ref)
    protected = tuple(f"context:{p.key}" for p in state.context) + tuple(
        f"contribution:{p.key}" for p in state.contributions if p.required)
    preparation = ContextPreparation(
        configuration_snapshot_id=meta.configuration_snapshot_id, run_id=meta.run_id,
        session_id=meta.session_id, activation=meta.activation, step_index=meta.step_index,
        response_message_index=meta.response_message_index, input_budget=settings.input_budget,
        pressure_line=settings.pressure_line, reminder_line=settings.reminder_line,
        stages=records, final_tools=tuple(t.name for t in state.tools),
        final_contribution_keys=tuple(p.key or "" for p in state.contributions),
        protected_sources=protected, final_input_tokens=state.input_tokens if records else 0,
        final_request_ref=None, message_count=len(request.messages) if request else 0,
        compaction_applied=phase == "ready" and state.compaction is not None,
        provider_prompt_tokens=meta.provider_prompt_tokens,
        provider_usage_kind=meta.provider_usage_kind, phase=phase, error=failure,
        provider_usage_note=meta.provider_usage_note,
        **_truth(state, meta, request is not None or phase == "failed")).with_id()
    return PreparationOutcome(preparation=preparation, request=request,
                              state=state if phase == "ready" else start)
