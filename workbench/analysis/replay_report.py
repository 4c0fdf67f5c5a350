"""The one-object report of a replay (:class:`ReplayReport`, what ``workbench replay --summary-json``
writes) and the estimate error.

Every figure is the one :mod:`workbench.analysis.figures` defines (the whole request as sent; the estimate
error over the responses it counts; the calibration ratio at the end of the replay), so the
report states the same numbers as the pages, the report, the notebook and the batch tables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from iris.compaction.thresholds import BudgetSource
from iris.fidelity import KindRecall, LossRecord
from iris.frozen import FrozenModel
from iris.preparation.records import CompactionPlan, ContextPreparation
from iris.replay import Replay
from iris.session import Session
from pydantic import Field

from ..pricing import ReplayCost, replay_cost
from ..pricing.subagents import with_subagents
from . import figures
from .fidelity import replay_losses
from .redaction import RedactionExtent, redaction_of
from .replay_reader import applied_compactions
from .summariser_info import SummariserInfo, summariser_info

__all__ = ["AgentCompaction", "CompactionLoss", "ErrorMeaning", "EstimateErrorReport", "FailedStep",
           "ReplayReport", "ReplayedCompaction", "applied_compactions", "error_meaning",
           "estimate_error", "failed_steps", "replay_report", "replay_trigger"]


class ErrorMeaning(FrozenModel):
    """Whether a session's estimate error means anything: not when a notable share of its text is
    redaction placeholders (docs/compaction.md). Written into ``--summary-json`` as three keys."""

    meaningful: bool = True
    text_redacted: RedactionExtent | None = None
    """The redaction's extent; None when the session's text is not redacted."""
    note: str = ""


def estimate_error(preparations: Sequence[ContextPreparation], replay: Replay | None = None
                   ) -> figures.EstimateError:
    """The estimate error as :func:`workbench.analysis.figures.estimate_error` defines it (the agent's recorded compactions of
    ``replay`` are left out with the overhead they re-measure)."""
    recorded = [m.step for m in replay.recorded_compactions] if replay is not None else []
    return figures.estimate_error(preparations, recorded)


class CompactionLoss(FrozenModel):
    """What one compaction lost, as ``--summary-json`` writes it (:meth:`iris.fidelity.LossRecord.as_json`,
    docs/fidelity.md)."""

    kinds: dict[str, KindRecall]
    needed_later: int
    needed_later_kept: int
    recall_needed_later: float | None


class ReplayedCompaction(figures.CompactionFigures):
    """One compaction the replay applied: its :class:`~workbench.analysis.figures.CompactionFigures`
    (the one basis, keys first and in that order) and how it was triggered."""

    trigger: str
    """``manual`` (a recorded ``/compact`` applied at its step) or ``auto``."""
    fidelity: CompactionLoss | None = None


class AgentCompaction(FrozenModel):
    """One of the agent's recorded compactions."""

    step: int
    tokens_before: int | None
    tokens_after: int | None
    trigger: str
    fidelity: CompactionLoss | None = None


class EstimateErrorReport(FrozenModel):
    """The estimate error (:func:`workbench.analysis.figures.estimate_error`) and whether it means
    anything for the session (:class:`ErrorMeaning`)."""

    median_abs_pct: float | None
    p90_abs_pct: float | None
    responses: int
    basis: str
    meaningful: bool
    text_redacted: RedactionExtent | None
    note: str
    unrecorded_drops: tuple[int, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Steps where the agent's count fell without a record; the responses from each to the next
    recorded compaction are left out (``left_out``). Both keys only when there is such a drop."""
    left_out: int = Field(default=0, exclude_if=lambda v: not v)


class FailedStep(FrozenModel):
    """A step whose preparation failed: which stage and why (R-TWIN-9)."""

    step: int
    stage: str | None
    reason: str


class ReplayReport(FrozenModel):
    """The one-object report of a replay: ``workbench replay --summary-json`` writes
    ``model_dump()`` (keys in field order, as docs/cli.md lists them)."""

    session_id: str
    model: str | None
    steps: int
    failed_steps: int
    """Steps whose preparation failed (``failures`` says where and why); a replay with any makes
    ``workbench replay`` exit 2 unless ``--allow-failed`` is given."""
    failures: tuple[FailedStep, ...]
    input_budget: int
    input_budget_source: BudgetSource
    input_budget_detail: str
    pressure_line: int
    baseline: Literal["engine", "recorded"]
    unrecorded_overhead_tokens: int
    overhead_measured_at: int | None
    calibration_ratio: float
    compactions: tuple[ReplayedCompaction, ...]
    recorded_compactions: tuple[AgentCompaction, ...]
    estimate_error: EstimateErrorReport
    cost: ReplayCost
    summariser: SummariserInfo
    """Who wrote the replay's checkpoints and whether they depend on the templates (R-FID-6)."""
    template_snapshot_id: str | None
    """The prompt template snapshot the replay rendered with (None: not known)."""

    def json_text(self) -> str:
        """The text ``--summary-json`` writes: indented JSON, non-ASCII kept, one final newline."""
        return json.dumps(self.model_dump(), indent=2, ensure_ascii=False) + "\n"


def _loss(record: LossRecord | None) -> CompactionLoss | None:
    return None if record is None else CompactionLoss.model_validate(record.as_json())


def replay_report(session: Session, replay: Replay, *,
                   prefixes: Mapping[int, Any] | None = None,
                   subagents: Sequence[Session] = (), summariser: Any = None,
                   template_snapshot_id: str | None = None) -> ReplayReport:
    """The ``--summary-json`` object (keys as docs/cli.md lists them), with what each compaction
    lost matched by step (docs/fidelity.md). ``prefixes``: each step's cache prefix, collected
    while a replay that kept no request bodies ran (:func:`workbench.pricing.replay_cost`);
    ``subagents``: the session's sub-agents, billed beside it (``cost.subagents_billed_usd``);
    ``summariser`` (an object or its name; None: the offline default) and
    ``template_snapshot_id`` say what wrote the checkpoints (:mod:`.summariser_info`)."""
    t = replay.thresholds
    losses = replay_losses(session, replay)
    own = {r.step: r for r in losses.replay}
    recorded = {r.step: r for r in losses.recorded}
    error = estimate_error(replay.preparations, replay)
    meaning = error_meaning(session)
    return ReplayReport(
        session_id=replay.session_id,
        model=session.header.model,
        steps=len(replay.preparations),
        failed_steps=len(failures := failed_steps(replay)),
        failures=failures,
        input_budget=t.input_budget,
        input_budget_source=t.budget_source,
        input_budget_detail=t.budget_detail,
        pressure_line=t.pressure_line,
        baseline=replay.baseline,
        unrecorded_overhead_tokens=replay.calibration.overhead,
        overhead_measured_at=replay.calibration.overhead_step,
        calibration_ratio=figures.replay_calibration_ratio(replay.calibration,
                                                           replay.preparations),
        compactions=tuple(ReplayedCompaction(**dict(c), trigger=replay_trigger(replay, c.step),
                                            fidelity=_loss(own.get(c.step)))
                          for c in applied_compactions(replay)),
        recorded_compactions=tuple(
            AgentCompaction(step=m.step, tokens_before=m.tokens_before,
                            tokens_after=m.tokens_after, trigger=m.trigger,
                            fidelity=_loss(recorded.get(m.step)))
            for m in replay.recorded_compactions),
        estimate_error=EstimateErrorReport(
            median_abs_pct=error.median_abs_pct, p90_abs_pct=error.p90_abs_pct,
            responses=error.responses, basis=error.basis, meaningful=meaning.meaningful,
            text_redacted=meaning.text_redacted, note=meaning.note,
            unrecorded_drops=error.unrecorded_drops, left_out=error.left_out),
        cost=with_subagents(replay_cost(session, replay, prefixes=prefixes), subagents),
        summariser=summariser_info(summariser),
        template_snapshot_id=template_snapshot_id,
    )


def failed_steps(replay: Replay) -> tuple[FailedStep, ...]:
    """The steps of ``replay`` whose preparation failed, in step order, each with its reason."""
    return tuple(FailedStep(step=p.step_index, stage=p.error.stage if p.error else None,
                            reason=p.error.message if p.error else "failed")
                 for p in replay.preparations if p.phase == "failed")


def replay_trigger(replay: Replay, step: int) -> str:
    """How the replay's compaction at ``step`` started: ``manual`` (a recorded ``/compact`` the
    configuration applies at its step) or ``auto`` (the trigger value reached the line)."""
    prep = next((p for p in replay.preparations if p.step_index == step), None)
    stage = prep.stage("compaction") if prep is not None else None
    plan = next((d for d in stage.decisions if isinstance(d, CompactionPlan)),
                None) if stage is not None else None
    return plan.trigger if plan is not None else "auto"


def error_meaning(session: Session) -> ErrorMeaning:
    """Whether the estimate error of ``session`` means anything (see :class:`ErrorMeaning`)."""
    redaction = redaction_of(session)
    if redaction is None:
        return ErrorMeaning()
    return ErrorMeaning(meaningful=redaction.meaningful, text_redacted=redaction.extent(),
                        note=redaction.note())
