"""Usage views (R-UI-5, R-TOK-6): the local estimate of each replayed request next to what the
provider reported, summary (compaction) usage apart, and a chart with the pressure lines.

Inputs are the per-step scalars (:class:`workbench.records.StepRow` or
:class:`ContextPreparation`: both carry the same field names), so the chart of a 2,000-step replay
needs no JSON parsing. Stage tokens are never drawn as a pie: they are whole-request estimates,
not costs that add up (R-TOK-2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import pandas as pd
import plotly.graph_objects as go
from iris.compaction.thresholds import Thresholds
from iris.compaction.usage import RunUsage

from ..analysis import figures
from ..records import RecordedMark
from .colors import SERIES_COLOURS
from .markup import plain
from .recorded import (
    TRIGGER_BASES,
    add_recorded_marks,
    add_trigger_trace,
    budget_label,
    whole_tokens,
    y_range,
)

__all__ = ["AS_RECORDED", "REPLAYED", "Metric", "StepLike", "estimate_error",
           "summary_usage_table", "usage_budget_caption", "usage_figure", "usage_metrics",
           "usage_table"]

AS_RECORDED = "as-recorded estimate"
REPLAYED = "replayed request"


class StepLike(figures.ReplayStep, Protocol):
    """What the usage views read of a step: its :class:`~workbench.analysis.figures.ReplayStep`
    figures and its lines; read-only, so a frozen ContextPreparation (its phase and usage kind
    are Literal strings) is one, and so is a stored replay's truth row."""

    @property
    def pressure_line(self) -> int: ...

    @property
    def reminder_line(self) -> int | None: ...


USAGE_COLUMNS = ["step", "phase", "local_estimate", "provider_tokens", "estimated", "difference",
                 "ratio", "compaction_applied", "pressure_line", "reminder_line", "as_recorded_estimate",
                 "error_pct", "replayed_request", "trigger_tokens", "trigger_basis"]


def _provider(step: StepLike) -> int | None:
    if step.provider_usage_kind == "missing" or step.provider_prompt_tokens is None:
        return None
    return step.provider_prompt_tokens


def usage_table(steps: Sequence[StepLike]) -> pd.DataFrame:
    """Per step: local estimate, provider prompt tokens (``estimated`` when frozen; shown as one
    ``≈`` label by :func:`workbench.views.display.display_frame`), difference, ratio
    (provider vs the raw local estimate of the replayed request); the as-recorded estimate of
    the request the agent sent and its error in % of the provider's count (like with like); the
    replayed request on the whole-request basis; the trigger value and its basis."""
    rows = []
    for s in steps:
        provider = _provider(s)
        recorded = s.recorded_request_whole
        estimated = s.provider_usage_kind == "estimated"
        rows.append({
            "step": s.step_index, "phase": s.phase, "local_estimate": s.final_input_tokens,
            "provider_tokens": provider, "estimated": estimated,
            "difference": None if provider is None else provider - s.final_input_tokens,
            "ratio": (round(provider / s.final_input_tokens, 3)
                      if provider is not None and s.final_input_tokens else None),
            "compaction_applied": bool(s.compaction_applied), "pressure_line": s.pressure_line,
            "reminder_line": s.reminder_line, "as_recorded_estimate": recorded,
            "error_pct": (round(100 * (recorded - provider) / provider, 1)
                          if recorded is not None and provider else None),
            "replayed_request": whole_tokens(s), "trigger_tokens": s.trigger_tokens,
            "trigger_basis": TRIGGER_BASES.get(basis, basis) if (
                basis := s.trigger_basis) else None,
        })
    frame = pd.DataFrame(rows, columns=USAGE_COLUMNS)
    return frame.astype({"provider_tokens": "Int64", "difference": "Int64", "ratio": "Float64",
                         "reminder_line": "Int64", "as_recorded_estimate": "Int64",
                         "error_pct": "Float64", "trigger_tokens": "Int64",
                         "compaction_applied": bool})


def summary_usage_table(run_usage: RunUsage | None) -> pd.DataFrame:
    """Main-model and summary (compaction) usage as two separate rows (R-TOK-6); a counting
    summary client adds its HTTP attempts, failed calls, calls refused by its open circuit breaker
    and cache hits (0 for the main model and for offline summarisers)."""
    columns = ["kind", "calls", "prompt_tokens", "input_tokens", "output_tokens", "attempts",
               "failures", "refused", "cache_hits"]
    rows = []
    for kind in ("main", "compaction"):
        totals = getattr(run_usage or RunUsage(), kind)
        rows.append({"kind": "summary (compaction)" if kind == "compaction" else "main model",
                     **{c: int(getattr(totals, c)) for c in columns[1:]}})
    return pd.DataFrame(rows, columns=columns)


def estimate_error(steps: Sequence[StepLike], recorded: Sequence[RecordedMark] = ()
                   ) -> figures.EstimateError:
    """The estimate error as :func:`workbench.analysis.figures.estimate_error` defines it (the agent's
    recorded compactions ``recorded`` re-measure the overhead: their steps are left out)."""
    return figures.estimate_error(steps, [m.step for m in recorded])


class Metric(NamedTuple):
    """One figure at the top of the Usage page."""

    label: str
    value: str
    help: str | None = None


def usage_metrics(steps: Sequence[StepLike], recorded: Sequence[RecordedMark] = (),
                  calibration: Any = None, *, compaction_request: bool = False) -> tuple[Metric, ...]:
    """The estimate error (median, p90), the unrecorded overhead and the replay's calibration
    ratio at its end (``calibration``: the replay's saved calibration), in words; ``steps`` is
    not empty. ``compaction_request``: the session is an agent's recorded compaction call, whose
    unheld prompt is the parent's conversation, so that figure is named as the compaction's input."""
    error, last = estimate_error(steps, recorded), steps[-1]
    measured = last.overhead_measured_at
    gap = f"{last.unrecorded_overhead_tokens or 0:,}"
    gap_metric = (compaction_input_metric(steps, calibration) if compaction_request else
                  Metric("Unrecorded overhead", gap,
                         "System prompt, tool schemas and framing the transcript does not contain, "
                         "carried in every whole-request figure"
                         + (f" (measured at step {measured})" if measured is not None else "")))
    return (
        Metric("Estimate error, median", "—" if error.median_abs_pct is None
               else f"{error.median_abs_pct:.2f}%",
               f"{error.basis}; {figures.error_words(error)}"),
        Metric("Estimate error, p90", "—" if error.p90_abs_pct is None
               else f"{error.p90_abs_pct:.2f}%"),
        gap_metric,
        Metric("Calibration ratio", f"{figures.replay_calibration_ratio(calibration, steps):.3f}",
               "Provider tokens per local token at the end of the replay (each step uses the "
               "ratio known before it, shown on Step-through)"))


def compaction_input_metric(steps: Sequence[StepLike], calibration: Any = None) -> Metric:
    """The input of an agent's recorded compaction call: the prompt tokens the provider counted
    for it (the figure the parent session states for that compaction), with the part of them
    the transcript does not hold (the parent's conversation, measured after its response)."""
    prompt = next((p for s in reversed(steps)
                   if (p := s.provider_prompt_tokens)), None)
    unheld = getattr(calibration, "overhead", None) if calibration is not None else None
    held = (f"; {unheld:,} of them are the parent's conversation, which this transcript does not "
            "hold" if unheld else "")
    return Metric("Compaction input (parent's conversation)",
                  "—" if prompt is None else f"{prompt:,}",
                  "The prompt tokens the provider counted for this compaction call, as the parent "
                  "session states them: its prompt is the parent session's whole conversation, "
                  f"the compaction's real input, not system prompt or tool schemas{held}")


def usage_budget_caption(thresholds: Thresholds | None, pressure_line: int) -> str:
    """The budget with its source and the pressure line (``pressure_line``, the last step's,
    when the replay saved no thresholds)."""
    budget = (budget_label(thresholds.input_budget, thresholds.budget_source,
                           thresholds.budget_detail)
              if thresholds else budget_label(None, None, ""))
    return (f"Budget {plain(budget)} · pressure line "
            f"{(thresholds.pressure_line if thresholds else pressure_line):,}")


def _line(fig: go.Figure, xs: Any, ys: Any, name: str, colour: str, **style: Any) -> None:
    fig.add_trace(go.Scatter(
        x=xs, y=ys, name=name, mode=style.pop("mode", "lines+markers"),
        line={"color": colour, **style.pop("line", {})}, marker={"size": 5, "color": colour},
        hovertemplate="step %{x}<br>%{y:,} tokens<extra>%{fullData.name}</extra>", **style))


_HOVER = "step %{x}<br>%{y:,} tokens<br>phase %{customdata}<extra>%{fullData.name}</extra>"


def _provider_traces(fig: go.Figure, table: pd.DataFrame) -> None:
    """The provider's counts: trusted as a line, frozen ``≈`` estimates as hollow markers."""
    for estimated, name, symbol in ((False, "provider", "circle"), (True, "provider ≈", "circle-open")):
        part = table[(table["estimated"] == estimated) & table["provider_tokens"].notna()]
        fig.add_trace(go.Scatter(
            x=part["step"], y=part["provider_tokens"].astype("float"), name=name,
            mode="lines+markers" if not estimated else "markers",
            marker={"symbol": symbol, "size": 8, "color": SERIES_COLOURS["provider"]},
            line={"color": SERIES_COLOURS["provider"]}, customdata=part["phase"],
            hovertemplate=_HOVER))


def _line_traces(fig: go.Figure, table: pd.DataFrame) -> list[float]:
    """Dashed pressure and reminder lines; returns their values (for the y range)."""
    values_all: list[float] = []
    for column, name in (("pressure_line", "pressure line"), ("reminder_line", "reminder line")):
        values = table.loc[:, column].astype("float")
        if values.notna().any():
            values_all += list(values.dropna())
            fig.add_trace(go.Scatter(
                x=table["step"], y=values, name=name, mode="lines", hoverinfo="skip",
                line={"color": SERIES_COLOURS[name], "dash": "dash", "shape": "hv"}))
    return values_all


def usage_figure(steps: Sequence[StepLike], *, recorded: Sequence[RecordedMark] = ()) -> go.Figure:
    """Usage over steps: the provider's count of what the agent sent, the as-recorded estimate of
    that same request (when the records carry it), and the replayed request (whole-request basis:
    calibrated estimate + unrecorded overhead, or the raw local estimate for older records); the
    value the trigger compared, pressure/reminder lines, the replay's compactions (diamonds) and
    the agent's recorded compactions (stars on a dash-dot line). The y axis covers every line.

    Frozen ``≈`` estimates are hollow markers; hover shows the numbers and the step's phase.
    """
    table = usage_table(steps)
    fig = go.Figure()
    _provider_traces(fig, table)
    replayed = [whole_tokens(s) for s in steps]
    tops: list[Any] = replayed + list(table["provider_tokens"].dropna())
    as_recorded = [(s.step_index, v) for s in steps
                   if (v := s.recorded_request_whole) is not None]
    if as_recorded:
        _line(fig, [x for x, _ in as_recorded], [y for _, y in as_recorded], AS_RECORDED,
              SERIES_COLOURS["as-recorded estimate"], line={"dash": "dot"})
        tops += [y for _, y in as_recorded]
    _line(fig, table["step"], replayed, REPLAYED, SERIES_COLOURS["local estimate"])
    tops += add_trigger_trace(fig, steps) + _line_traces(fig, table)
    applied = table[table["compaction_applied"]]
    for step in applied["step"]:
        fig.add_vline(x=int(step), line={"color": SERIES_COLOURS["compaction"], "dash": "dot"})
    fig.add_trace(go.Scatter(
        x=applied["step"], y=[replayed[i] for i in applied.index], name="compaction applied",
        mode="markers", customdata=applied["phase"], hovertemplate=_HOVER,
        marker={"symbol": "diamond", "size": 11, "color": SERIES_COLOURS["compaction"]}))
    add_recorded_marks(fig, recorded)
    top = y_range(tops, [m.tokens_before for m in recorded])
    fig.update_layout(xaxis_title="step", yaxis_title="prompt tokens (whole request)",
                      hovermode="closest", legend={"orientation": "h", "y": -0.2},
                      margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      yaxis={"range": top} if top else {})
    return fig
