"""The one-object summary of a replay (``workbench replay --summary-json``) and the estimate error.

:func:`estimate_error` compares the as-recorded calibrated estimate (each preparation's
``recorded_request_whole``: the request the agent really sent, counted locally, calibrated with
what earlier responses measured, plus the unrecorded overhead) with the provider's prompt tokens
over the responses that have trusted usage. The first response of the session and the first after
each recorded compaction measure the overhead itself, so they are not scored.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from iris.preparation.records import ContextPreparation
from iris.replay import Replay
from iris.session import Session

from .redaction import redaction_of
from .replay_reader import applied_compactions

__all__ = ["applied_compactions", "error_meaning", "estimate_error", "replay_summary"]

ERROR_BASIS = ("as-recorded request: calibrated local estimate + unrecorded overhead, against "
               "provider prompt tokens (responses with trusted usage; overhead-measuring "
               "responses excluded)")


def _p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(0.9 * len(ordered)) - 1, 0)]


def estimate_error(preparations: Sequence[ContextPreparation], replay: Replay | None = None
                   ) -> dict[str, Any]:
    """``{"median_abs_pct", "p90_abs_pct", "basis", "responses"}`` (None figures without data)."""
    skip = {0}
    if replay is not None:
        skip = {replay.calibration.overhead_step or 0} | {m.step for m in replay.recorded_compactions}
    errors = []
    for p in preparations:
        provider, whole = p.provider_prompt_tokens, p.recorded_request_whole
        if (p.provider_usage_kind != "trusted" or not provider or whole is None
                or p.step_index in skip):
            continue
        errors.append(abs(whole - provider) / provider * 100)
    if not errors:
        return {"median_abs_pct": None, "p90_abs_pct": None, "basis": ERROR_BASIS, "responses": 0}
    return {"median_abs_pct": round(statistics.median(errors), 2),
            "p90_abs_pct": round(_p90(errors), 2), "basis": ERROR_BASIS,
            "responses": len(errors)}


def _cost(session: Session, replay: Replay) -> dict[str, Any]:
    try:
        from .pricing import replay_cost
    except ImportError:  # pricing not installed: the placeholder the interface allows
        return {"note": "no price known"}
    return replay_cost(session, replay)


def replay_summary(session: Session, replay: Replay) -> dict[str, Any]:
    """The ``--summary-json`` object (keys as docs/cli.md lists them)."""
    t = replay.thresholds
    compactions = applied_compactions(replay)
    return {
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
        "calibration_ratio": round(replay.calibration.ratio, 6),
        "compactions": compactions,
        "recorded_compactions": [{"step": m.step, "tokens_before": m.tokens_before,
                                  "tokens_after": m.tokens_after}
                                 for m in replay.recorded_compactions],
        "estimate_error": estimate_error(replay.preparations, replay) | error_meaning(session),
        "cost": _cost(session, replay),
    }


def error_meaning(session: Session) -> dict[str, Any]:
    """``{"meaningful", "text_redacted", "note"}`` for the estimate error of ``session``: not
    meaningful when a notable share of its text is redaction placeholders (docs/compaction.md)."""
    redaction = redaction_of(session)
    if redaction is None:
        return {"meaningful": True, "text_redacted": None, "note": ""}
    return {"meaningful": redaction.meaningful, "text_redacted": redaction.as_json(),
            "note": redaction.note()}
