"""A/B comparison of replays of one session (R-UI-6, UX.md "A/B comparison").

Two (or more) replays of the same session under different configurations or template snapshots
are reduced to a :class:`~workbench.analysis.compared_run.ComparedRun` each (re-exported here): per-step
whole-request tokens, the tokens the reduction and fold stages saved, every applied compaction
with its cut point, and the summary (compaction) usage. The compared runs come from an in-memory
:class:`iris.replay.Replay` or from a replay reopened from the store, so the Configuration page,
the Templates page and notebooks draw the same chart and the same totals. Savings are stage ``before − after`` differences of whole-request estimates:
they say how much smaller the request got at that stage, not a per-block cost (R-TOK-2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from ..analysis.compared_run import CompactionPoint, ComparedRun, StepPoint, compared_run
from ..records import RecordedMark
from .colors import SERIES_COLOURS, STATUS_COLOURS
from .recorded import (
    add_recorded_marks,
    add_trigger_trace,
    budget_source_words,
    y_range,
)

__all__ = ["RUN_COLOURS", "CompactionPoint", "ComparedRun", "StepPoint", "answer_runs",
           "compactions_table",
           "compare_figure", "compared_run", "steps_table", "totals_table"]

#: One colour per compared run (A, B, C), each readable on light and dark backgrounds.
RUN_COLOURS: tuple[str, ...] = (SERIES_COLOURS["local estimate"], SERIES_COLOURS["summary usage"],
                                STATUS_COLOURS["candidate"])


def _plotted(step: StepPoint) -> int:
    return step.final_input_tokens if step.whole_request_tokens is None else step.whole_request_tokens


TOTALS_COLUMNS = ["configuration", "steps", "failed_steps", "tokens_sent", "compactions",
                  "cut_points", "reduction_saved", "fold_saved", "summary_calls",
                  "summary_input_tokens", "summary_output_tokens", "input_budget",
                  "budget_source", "pressure_line"]


def totals_table(runs: Sequence[ComparedRun]) -> pd.DataFrame:
    """One row per run: tokens sent over all steps, compactions, savings and summary usage
    (``cut_points`` is a list of ``{"step", "cut_index"}`` dicts; :func:`workbench.views.display.
    cut_points_text` words it)."""
    rows = []
    for run in runs:
        rows.append({
            "configuration": run.label, "steps": len(run.steps),
            "failed_steps": sum(1 for s in run.steps if s.phase != "ready"),
            "tokens_sent": sum(_plotted(s) for s in run.steps),
            "compactions": len(run.compactions),
            "cut_points": [{"step": c.step, "cut_index": c.cut_index} for c in run.compactions],
            "reduction_saved": sum(s.reduction_saved for s in run.steps),
            "fold_saved": sum(s.fold_saved for s in run.steps),
            "summary_calls": run.summary_calls, "summary_input_tokens": run.summary_input_tokens,
            "summary_output_tokens": run.summary_output_tokens,
            "input_budget": run.input_budget,
            "budget_source": budget_source_words(run.budget_source, run.budget_detail),
            "pressure_line": run.pressure_line})
    return pd.DataFrame(rows, columns=TOTALS_COLUMNS)


COMPACTION_COLUMNS = ["configuration", "n", "step", "tokens_before", "tokens_after", "cut_index",
                      "first_kept_message", "archived_messages", "summary_input_tokens",
                      "summary_output_tokens"]


def compactions_table(runs: Sequence[ComparedRun]) -> pd.DataFrame:
    """Every applied compaction of every run: tokens before → after (this request as sent, whole
    request, :mod:`workbench.analysis.figures`) and its cut point."""
    rows = [{"configuration": run.label, **c.model_dump(exclude={"step"}), "step": c.step}
            for run in runs for c in run.compactions]
    frame = pd.DataFrame(rows, columns=COMPACTION_COLUMNS)
    return frame.astype({"first_kept_message": "Int64", "tokens_before": "Int64",
                         "tokens_after": "Int64"})


def steps_table(runs: Sequence[ComparedRun]) -> pd.DataFrame:
    """Wide per-step table: ``tokens · <label>`` per run (and the difference for two runs), on
    the whole-request basis of the charts (the raw local estimate where a step has none)."""
    steps = sorted({s.step for run in runs for s in run.steps})
    frame = pd.DataFrame({"step": steps})
    for run in runs:
        tokens = {s.step: _plotted(s) for s in run.steps}
        frame[f"tokens · {run.label}"] = pd.Series(steps).map(tokens).astype("Int64")
    if len(runs) == 2:
        frame["difference (B − A)"] = frame.iloc[:, 2] - frame.iloc[:, 1]
    return frame


def _run_traces(fig: go.Figure, i: int, run: ComparedRun) -> list[int]:
    """One run's tokens, trigger value, pressure line and compactions; returns the values drawn."""
    colour = RUN_COLOURS[i % len(RUN_COLOURS)]
    hover = "step %{x}<br>%{y:,} tokens<extra>%{fullData.name}</extra>"
    steps = [s.step for s in run.steps]
    drawn = [_plotted(s) for s in run.steps]
    fig.add_trace(go.Scatter(
        x=steps, y=drawn, name=run.label, mode="lines+markers", marker={"size": 5},
        line={"color": colour, "width": 3 if i == 0 else 2, "dash": "solid" if i == 0 else "dot"},
        hovertemplate=hover, legendgroup=run.label))
    drawn += add_trigger_trace(fig, [_AsStep(s) for s in run.steps],
                               name=f"trigger value · {run.label}", colour=colour)
    if steps:
        drawn.append(run.pressure_line)
        fig.add_trace(go.Scatter(
            x=[min(steps), max(steps)], y=[run.pressure_line] * 2,
            name=f"pressure line · {run.label} ({run.pressure_line:,})", mode="lines",
            hoverinfo="skip", line={"color": colour, "dash": "dash", "width": 1},
            legendgroup=run.label))
    applied = [s for s in run.steps if s.compaction_applied]
    fig.add_trace(go.Scatter(
        x=[s.step for s in applied], y=[_plotted(s) for s in applied],
        name=f"compaction · {run.label}", mode="markers", hovertemplate=hover,
        marker={"symbol": "diamond", "size": 12, "color": colour,
                "line": {"width": 1, "color": SERIES_COLOURS["compaction"]}},
        legendgroup=run.label))
    return drawn


def compare_figure(runs: Sequence[ComparedRun], *,
                   recorded: Sequence[RecordedMark] = ()) -> go.Figure:
    """Per-step whole-request tokens of every run on one chart, each run's pressure line dashed
    in its colour (its value in the legend), a diamond where that run applied a compaction, the
    value each run's trigger compared (thin line, when recorded) and the agent's recorded
    compactions (dash-dot lines and stars).

    The second run's line is dotted so identical runs still show both. The y axis always covers
    every pressure line, so a compaction is seen against the line that triggered it.
    """
    fig = go.Figure()
    tops: list[int | None] = []
    for i, run in enumerate(runs):
        tops += _run_traces(fig, i, run)
    add_recorded_marks(fig, recorded)
    top = y_range(tops, [m.tokens_before for m in recorded])
    fig.update_layout(xaxis_title="step", yaxis_title="prompt tokens (whole request)",
                      hovermode="closest", legend={"orientation": "h", "y": -0.2},
                      margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      yaxis={"range": top} if top else {})
    return fig


def answer_runs(runs: Sequence[ComparedRun]) -> list[dict[str, Any]]:
    """The compared runs as rows of :func:`workbench.views.recorded.compaction_answer`: each
    compaction on the one basis of :mod:`workbench.analysis.figures` (this request as sent before and
    after the commit, the trigger value and its basis)."""
    return [{"label": run.label, "input_budget": run.input_budget,
             "budget_source": run.budget_source, "budget_detail": run.budget_detail,
             "compactions": [c.model_dump(include={"step", "tokens_before", "tokens_after",
                                                   "trigger_value", "trigger_basis"})
                             for c in run.compactions]}
            for run in runs]


class _AsStep:
    """A :class:`StepPoint` under the field names the shared trigger trace reads."""

    def __init__(self, point: StepPoint) -> None:
        self.step_index, self.trigger_tokens = point.step, point.trigger_tokens
        self.trigger_basis = point.trigger_basis
