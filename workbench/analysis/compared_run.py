"""What a comparison keeps of one replay (:class:`ComparedRun`): per-step whole-request tokens,
the tokens the reduction and fold stages saved, every applied compaction with its cut point, and
the summary (compaction) usage, from an in-memory :class:`iris.replay.Replay` or a replay reopened
from the store. A record, not a view: the re-run service builds it and the comparison views
(``workbench.views.compare``) draw it. Savings are stage ``before − after`` differences of
whole-request estimates: how much smaller the request got at that stage, not a per-block cost
(R-TOK-2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from iris.fidelity import LossRecord
from iris.frozen import FrozenModel
from iris.replay import Replay

from ..records import CompactionFacts, CompactionFigures
from .figures import compaction_figures
from .replay_reader import ReplayReader, as_reader

__all__ = ["CompactionPoint", "ComparedRun", "StepPoint", "compared_run"]

_SAVING_STAGES = {"trim_old_bodies": "reduction_saved", "fold_repeats": "fold_saved"}


_Frozen = FrozenModel


class StepPoint(_Frozen):
    """One step of one run."""

    step: int
    phase: str
    final_input_tokens: int
    compaction_applied: bool = False
    reduction_saved: int = 0
    """Tokens the trim-old-bodies stage (reduction, §8) took off this request (whole-request
    basis: the raw local difference × the step's calibration ratio)."""
    fold_saved: int = 0
    """Tokens the fold-repeated-observations stage took off this request (same basis)."""
    trigger_tokens: int | None = None
    """The whole-request figure the compaction trigger compared (when the replay recorded it)."""
    whole_request_tokens: int | None = None
    """The final request on the whole-request basis (calibrated estimate + unrecorded overhead)."""
    trigger_basis: str | None = None

    @property
    def step_index(self) -> int:
        """The step under the name the trigger figures read (:class:`~workbench.analysis.figures.TriggerFigures`)."""
        return self.step


class CompactionPoint(CompactionFigures):
    """One applied compaction of one run: its :class:`~workbench.records.CompactionFigures`
    (``tokens_*``: this request as sent before and after the commit, whole request; the trigger
    value and basis; ``history_tokens_*``: the untrimmed durable history, a detail, None for
    older replays) and where it cut."""

    n: int
    cut_index: int | None
    """Index in the replay's durable history where the raw tail starts (None when the saved
    replay's facts do not record it)."""
    first_kept_message: int | None = None
    """Session index of the first message kept raw (None: no raw tail)."""
    archived_messages: int = 0
    summary_input_tokens: int = 0
    summary_output_tokens: int = 0


class ComparedRun(_Frozen):
    """What the comparison needs of one replay."""

    label: str
    input_budget: int
    pressure_line: int
    reminder_line: int | None = None
    budget_source: str | None = None
    budget_detail: str = ""
    steps: tuple[StepPoint, ...] = ()
    compactions: tuple[CompactionPoint, ...] = ()
    summary_calls: int = 0
    summary_input_tokens: int = 0
    summary_output_tokens: int = 0
    configuration_hash: str | None = None
    template_snapshot_id: str | None = None
    fidelity: tuple[LossRecord, ...] = ()
    """What each of the run's own compactions lost (docs/fidelity.md), when the builder scored
    them against the session (the comparison service does)."""


def _compaction_points(items: Sequence[CompactionFacts], steps: Mapping[int, StepPoint]
                       ) -> tuple[CompactionPoint, ...]:
    """From the compactions a replay's facts keep; replays saved before the durable-history
    detail existed state the trigger value and the step's whole request."""
    def figures(c: CompactionFacts) -> dict[str, Any]:
        if c.history_tokens_before is not None:
            return c.figures.fields()
        point = steps.get(c.step_index)
        return compaction_figures(point, None).fields() if point else {}

    return tuple(CompactionPoint(
        n=c.n, step=c.step_index, cut_index=c.cut_index,
        first_kept_message=c.first_kept_message, archived_messages=len(c.archived_messages),
        summary_input_tokens=c.summary_usage.input_tokens if c.summary_usage else 0,
        summary_output_tokens=c.summary_usage.output_tokens if c.summary_usage else 0,
        **figures(c)) for c in items)


_TRIGGER_FIELDS = ("trigger_tokens", "trigger_basis", "whole_request_tokens", "calibration_ratio")


def _whole_saving(local: int, figures: Mapping[str, Any]) -> int:
    """Tokens a stage took off, on the whole-request basis: the raw local difference × the
    step's calibration ratio (the overhead is in both sides and cancels)."""
    return round((figures.get("calibration_ratio") or 1.0) * local)


def _trigger(figures: Mapping[str, Any]) -> dict[str, Any]:
    value, whole = figures.get("trigger_tokens"), figures.get("whole_request_tokens")
    out: dict[str, Any] = {} if whole is None else {"whole_request_tokens": int(whole)}
    if value is not None:
        out |= {"trigger_tokens": int(value), "trigger_basis": figures.get("trigger_basis")}
    return out


def compared_run(label: str, replay: ReplayReader | Replay, *,
                configuration_hash: str | None = None,
                template_snapshot_id: str | None = None) -> ComparedRun:
    """A :class:`ComparedRun` of a replay, in memory or reopened from the store."""
    reader = as_reader(replay)
    figures = reader.step_figures(_TRIGGER_FIELDS)
    saved = reader.stage_savings(tuple(_SAVING_STAGES))
    steps = tuple(StepPoint(
        step=s.step_index, phase=s.phase, final_input_tokens=s.final_input_tokens,
        compaction_applied=s.compaction_applied, **_trigger(figures.get(s.step_index, {})),
        reduction_saved=_whole_saving(saved.get(s.step_index, {}).get("trim_old_bodies", 0),
                                      figures.get(s.step_index, {})),
        fold_saved=_whole_saving(saved.get(s.step_index, {}).get("fold_repeats", 0),
                                 figures.get(s.step_index, {})))
        for s in reader.steps)
    t, first = reader.thresholds, reader.steps[0] if reader.steps else None
    summary = reader.facts.run_usage.compaction
    return ComparedRun(
        label=label,
        input_budget=t.input_budget if t else (first.input_budget if first else 0),
        pressure_line=t.pressure_line if t else (first.pressure_line if first else 0),
        reminder_line=t.reminder_line if t else (first.reminder_line if first else None),
        budget_source=t.budget_source if t else None, budget_detail=t.budget_detail if t else "",
        steps=steps, compactions=_compaction_points(reader.checkpoints,
                                                    {s.step: s for s in steps}),
        summary_calls=summary.calls, summary_input_tokens=summary.input_tokens,
        summary_output_tokens=summary.output_tokens, configuration_hash=configuration_hash,
        template_snapshot_id=template_snapshot_id)
