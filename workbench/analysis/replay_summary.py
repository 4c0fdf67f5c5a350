"""The one-object summary of a replay (``workbench replay --summary-json``) and the estimate error.

Every figure is the one :mod:`workbench.analysis.figures` defines (the whole request as sent; the estimate
error over the responses it counts; the calibration ratio at the end of the replay), so the
summary states the same numbers as the pages, the report, the notebook and the batch tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iris.frozen import FrozenModel
from iris.preparation.records import CompactionPlan, ContextPreparation
from iris.replay import Replay
from iris.session import Session

from . import figures
from .fidelity import with_fidelity
from .redaction import redaction_of
from .replay_reader import applied_compactions

__all__ = ["ErrorMeaning", "applied_compactions", "error_meaning", "estimate_error", "replay_summary",
           "replay_trigger"]


class ErrorMeaning(FrozenModel):
    """Whether a session's estimate error means anything: not when a notable share of its text is
    redaction placeholders (docs/compaction.md). Written into ``--summary-json`` as three keys."""

    meaningful: bool = True
    text_redacted: dict[str, Any] | None = None
    """The redaction's extent (``placeholders``, ``messages``, ``hidden_chars``, ``visible_chars``,
    ``share_pct``); None when the session's text is not redacted."""
    note: str = ""


def estimate_error(preparations: Sequence[ContextPreparation], replay: Replay | None = None
                   ) -> dict[str, Any]:
    """``{"median_abs_pct", "p90_abs_pct", "basis", "responses"}`` as
    :func:`workbench.analysis.figures.estimate_error` defines it (the agent's recorded compactions of
    ``replay`` are left out with the overhead they re-measure)."""
    recorded = [m.step for m in replay.recorded_compactions] if replay is not None else []
    return figures.estimate_error(preparations, recorded)


def _cost(session: Session, replay: Replay) -> dict[str, Any]:
    try:
        from ..pricing import replay_cost
    except ImportError:  # pricing not installed: the placeholder the interface allows
        return {"note": "no price known"}
    return replay_cost(session, replay)


def replay_summary(session: Session, replay: Replay) -> dict[str, Any]:
    """The ``--summary-json`` object (keys as docs/cli.md lists them)."""
    t = replay.thresholds
    compactions = [c | {"trigger": replay_trigger(replay, c["step"])}
                   for c in applied_compactions(replay)]
    return with_fidelity({
        "session_id": replay.session_id,
        "model": session.header.model,
        "steps": len(replay.preparations),
        "input_budget": t.input_budget,
        "input_budget_source": t.budget_source,
        "input_budget_detail": t.budget_detail,
        "pressure_line": t.pressure_line,
        "baseline": replay.baseline,
        "unrecorded_overhead_tokens": replay.calibration.overhead,
        "overhead_measured_at": replay.calibration.overhead_step,
        "calibration_ratio": figures.replay_calibration_ratio(replay.calibration,
                                                              replay.preparations),
        "compactions": compactions,
        "recorded_compactions": [{"step": m.step, "tokens_before": m.tokens_before,
                                  "tokens_after": m.tokens_after, "trigger": m.trigger}
                                 for m in replay.recorded_compactions],
        "estimate_error": (estimate_error(replay.preparations, replay)
                           | error_meaning(session).model_dump()),
        "cost": _cost(session, replay),
    }, session, replay)


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
    return ErrorMeaning(meaningful=redaction.meaningful, text_redacted=redaction.as_json(),
                        note=redaction.note())
