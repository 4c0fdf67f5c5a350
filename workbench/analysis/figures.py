"""One figure per fact (R-TWIN-5, R-REAL-1, R-REAL-2): the figures a user compares across pages,
the report, ``--summary-json``, the notebook and the batch tables, each computed here once.

**Basis.** Every token figure a user compares is a *whole request as sent*: the replayed request's
raw local estimate × the calibration ratio known before that step + the unrecorded overhead
(system prompt, tool schemas, framing), the basis the provider counts on and the pressure line is
drawn on. For an applied compaction that is this step's request before the commit and after it
(the commit's ``sent_tokens_before → sent_tokens_after``; the after figure is the step's
``whole_request_tokens``). The untrimmed durable history the engine compacted (the commit's
``tokens_before → tokens_after``) is a detail, labelled as such (``history_tokens_*``); the raw
local estimates are details too.

**Estimate error.** :func:`estimate_error`: the as-recorded estimate (the request the agent
really sent, counted locally, calibrated with what earlier responses measured, plus the overhead:
``recorded_request_whole``) against the provider's prompt tokens for that request, in % of the
provider's count. A response counts when its usage is trusted provider usage (not missing, not a
frozen ``≈`` estimate) and something was there to compare: the first step and every step whose
response measured the overhead (the first response after a recorded compaction re-measures it)
are left out, since their estimate lacks the overhead being measured. Median (the middle value,
the mean of the two middle ones for an even count) and p90 (nearest rank: the ⌈0.9·n⌉-th
smallest), both rounded to 2 decimals.

**Calibration ratio.** The replay's ratio is the one at its end (provider tokens per local token
after the last response, :func:`replay_calibration_ratio`); each step's own ratio (known before
that step) is shown only on that step.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from iris.compaction.calibration import UNRECORDED_DROP
from iris.frozen import FrozenModel
from iris.preparation.records import CompactionApplied, ContextPreparation
from pydantic import Field

from ..records import CompactionFigures, EstimateStep, ReplayStep, TriggerFigures

__all__ = ["ERROR_BASIS", "CompactionFigures", "EstimateError", "EstimateStep", "ReplayStep",
           "TriggerFigures", "applied_compactions", "applied_of", "compaction_figures",
           "error_words", "estimate_error", "replay_calibration_ratio", "scored_errors",
           "unrecorded_drops", "unscored_steps", "whole_figures"]

ERROR_BASIS = ("as-recorded request: calibrated local estimate + unrecorded overhead, against "
               "provider prompt tokens (responses with trusted usage; the first step and the "
               "overhead-measuring responses excluded)")


def compaction_figures(step: TriggerFigures, applied: CompactionApplied | None
                       ) -> CompactionFigures:
    """One applied compaction on the one basis (:class:`CompactionFigures`) from the step's
    trigger figures and its commit decision; records older than the sent figures fall back to
    the trigger value and the step's whole request."""
    trigger = step.trigger_tokens
    sent_before = applied.sent_tokens_before if applied is not None else None
    sent_after = applied.sent_tokens_after if applied is not None else None
    return CompactionFigures(
        step=step.step_index,
        tokens_before=sent_before if sent_before is not None else trigger,
        tokens_after=sent_after if sent_after is not None else step.whole_request_tokens,
        trigger_value=trigger, trigger_basis=step.trigger_basis,
        history_tokens_before=applied.tokens_before if applied is not None else None,
        history_tokens_after=applied.tokens_after if applied is not None else None)


def whole_figures(prep: Any) -> Callable[[int], int]:
    """The whole request as sent for a raw local estimate of step ``prep``, as the engine stated
    it: the step's ``whole_request_tokens`` for its final request, the commit's
    ``sent_tokens_before``/``sent_tokens_after`` for the request its compaction stage took and
    gave; any other size by the same rule (local × the step's calibration ratio + the unrecorded
    overhead). The record keeps the ratio to six decimals, so recomputing a figure the engine
    already stated can land one token off it: a stated figure is never recomputed."""
    ratio = getattr(prep, "calibration_ratio", 1.0) or 1.0
    overhead = getattr(prep, "unrecorded_overhead_tokens", 0) or 0
    stated: dict[int, int] = {}
    for stage in getattr(prep, "stages", ()):
        for d in getattr(stage, "decisions", ()):
            if isinstance(d, CompactionApplied) and d.sent_tokens_before is not None \
                    and d.sent_tokens_after is not None:
                stated[stage.before_input_tokens] = d.sent_tokens_before
                stated[stage.after_input_tokens] = d.sent_tokens_after
    whole = getattr(prep, "whole_request_tokens", None)
    if whole is not None:
        stated[prep.final_input_tokens] = whole

    def of(local: int) -> int:
        found = stated.get(local)
        return found if found is not None else round(ratio * local) + overhead
    return of


def applied_of(step: Any) -> CompactionApplied | None:
    """The commit decision of a step's record (None for a truth row, which has no stages)."""
    if not isinstance(step, ContextPreparation):
        return None
    stage = step.stage("compaction")
    if stage is None:
        return None
    return next((d for d in stage.decisions if isinstance(d, CompactionApplied)), None)


def applied_compactions(preparations: Iterable[Any]) -> list[CompactionFigures]:
    """Every compaction a replay applied, as :func:`compaction_figures`, in step order."""
    return [compaction_figures(p, applied_of(p)) for p in preparations if p.compaction_applied]


def unrecorded_drops(steps: Sequence[EstimateStep], recorded_steps: Iterable[int | None] = ()
                     ) -> dict[int, int]:
    """Drop step → the steps from it up to the next recorded compaction whose as-recorded
    request is not what the agent sent: the provider's count fell below
    :data:`~iris.compaction.calibration.UNRECORDED_DROP` of the previous one while the
    as-recorded request did not shrink (the agent cleared context without recording it, as
    Claude Code's microcompaction before 2.1.21 did)."""
    recorded = {r for r in recorded_steps if r is not None}
    drops: dict[int, int] = {}
    last: tuple[int, int] | None = None  # (provider, as-recorded whole) of the last response
    start: int | None = None
    for s in steps:
        if s.step_index in recorded:
            last, start = None, None
        provider, whole = s.provider_prompt_tokens, s.recorded_request_whole
        if s.provider_usage_kind != "trusted" or not provider or whole is None:
            continue
        if (start is None and last is not None and provider < UNRECORDED_DROP * last[0]
                and whole >= last[1]):
            start = s.step_index
        if start is not None:
            drops[start] = drops.get(start, 0) + 1
        last = (provider, whole)
    return drops


def unscored_steps(steps: Sequence[EstimateStep], recorded_steps: Iterable[int | None] = (),
                   drops: dict[int, int] | None = None) -> set[int]:
    """Steps whose response the estimate error leaves out: the first step, each step whose
    response measured the overhead, the first step after each recorded compaction, and the
    steps after a drop of the agent's context the transcript does not record
    (:func:`unrecorded_drops`; ``drops`` when the caller has them already)."""
    recorded = [r for r in recorded_steps if r is not None]
    out = {s.step_index for s in steps[:1]}
    out |= {m for s in steps if (m := s.overhead_measured_at) is not None}
    out |= set(recorded)
    drops = unrecorded_drops(steps, recorded) if drops is None else drops
    if drops:
        starts = sorted(drops)
        ends = sorted(recorded)
        for first in starts:
            end = next((r for r in ends if r > first), None)
            out |= {s.step_index for s in steps
                    if s.step_index >= first and (end is None or s.step_index < end)}
    return out


def scored_errors(steps: Sequence[EstimateStep], recorded_steps: Iterable[int | None] = (),
                  drops: dict[int, int] | None = None) -> dict[int, float]:
    """Step → absolute error of the as-recorded estimate in % of the provider's count, for the
    responses :func:`estimate_error` counts."""
    skip = unscored_steps(steps, recorded_steps, drops)
    out: dict[int, float] = {}
    for s in steps:
        provider, whole = s.provider_prompt_tokens, s.recorded_request_whole
        if (s.provider_usage_kind != "trusted" or not provider
                or whole is None or s.step_index in skip):
            continue
        out[s.step_index] = abs(whole - provider) / provider * 100
    return out


class EstimateError(FrozenModel):
    """The local estimate's error against the provider over the responses that count
    (:func:`scored_errors`): absolute percentages, ``None`` when no response counts."""

    median_abs_pct: float | None
    p90_abs_pct: float | None
    responses: int
    basis: str
    unrecorded_drops: tuple[int, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Steps where the agent's count fell without a record (:func:`unrecorded_drops`); the
    responses from there to the next recorded compaction are left out."""
    left_out: int = Field(default=0, exclude_if=lambda v: not v)
    """Responses left out after those drops."""


def estimate_error(steps: Sequence[EstimateStep], recorded_steps: Iterable[int | None] = ()
                   ) -> EstimateError:
    """The :class:`EstimateError` over :func:`scored_errors`. ``steps`` are preparations or truth
    rows in step order; ``recorded_steps`` the steps of the agent's recorded compactions."""
    recorded = list(recorded_steps)
    drops = unrecorded_drops(steps, recorded)
    errors = sorted(scored_errors(steps, recorded, drops).values())
    starts, left_out = tuple(sorted(drops)), sum(drops.values())
    if not errors:
        return EstimateError(median_abs_pct=None, p90_abs_pct=None, responses=0, basis=ERROR_BASIS,
                             unrecorded_drops=starts, left_out=left_out)
    p90 = errors[max(math.ceil(0.9 * len(errors)) - 1, 0)]
    return EstimateError(median_abs_pct=round(statistics.median(errors), 2),
                         p90_abs_pct=round(p90, 2), responses=len(errors), basis=ERROR_BASIS,
                         unrecorded_drops=starts, left_out=left_out)


def error_words(error: EstimateError) -> str:
    """``median 0.08 %, p90 1.12 % over 141 responses`` (``—`` without data)."""
    dropped = (f"; {error.left_out} responses left out after the agent's context fell without "
               f"a record (from step {', '.join(str(s) for s in error.unrecorded_drops)})"
               if error.unrecorded_drops else "")
    if error.median_abs_pct is None or error.p90_abs_pct is None:
        return "— (no response with provider usage to compare)" + dropped
    return (f"median {error.median_abs_pct:.2f} %, p90 {error.p90_abs_pct:.2f} % over "
            f"{error.responses} responses{dropped}")


def replay_calibration_ratio(calibration: Any, steps: Sequence[Any]) -> float:
    """The replay's calibration ratio at its end (``calibration.ratio`` when it has samples); for
    replays saved without it, the ratio the last step used."""
    if calibration is not None and getattr(calibration, "samples", 0):
        return round(float(calibration.ratio), 6)
    last = getattr(steps[-1], "calibration_ratio", None) if steps else None
    return round(float(last or 1.0), 6)
