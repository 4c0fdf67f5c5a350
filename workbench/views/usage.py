"""Usage views (R-UI-5, R-TOK-6): the local estimate of each replayed request next to what the
provider reported, summary (compaction) usage apart, and a chart with the pressure lines.

Inputs are the per-step scalars (:class:`workbench.evidence.StepRow` or
:class:`ContextPreparation`: both carry the same field names), so the chart of a 2,000-step replay
needs no JSON parsing. Stage tokens are never drawn as a pie: they are whole-request estimates,
not costs that add up (R-TOK-2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import pandas as pd
import plotly.graph_objects as go

from .colors import SERIES_COLOURS

__all__ = ["StepLike", "summary_usage_table", "usage_figure", "usage_table"]


class StepLike(Protocol):
    step_index: int
    phase: str
    final_input_tokens: int
    provider_prompt_tokens: int | None
    provider_usage_kind: str
    compaction_applied: bool
    pressure_line: int
    reminder_line: int | None


USAGE_COLUMNS = ["step", "phase", "local_estimate", "provider_tokens", "provider_label", "estimated",
                 "difference", "ratio", "compaction_applied", "pressure_line", "reminder_line"]


def _provider(step: StepLike) -> int | None:
    if step.provider_usage_kind == "missing" or step.provider_prompt_tokens is None:
        return None
    return step.provider_prompt_tokens


def usage_table(steps: Sequence[StepLike]) -> pd.DataFrame:
    """Per step: local estimate, provider prompt tokens (``≈`` when frozen), difference, ratio."""
    rows = []
    for s in steps:
        provider = _provider(s)
        estimated = s.provider_usage_kind == "estimated"
        label = "—" if provider is None else ("≈" if estimated else "") + f"{provider:,}"
        rows.append({
            "step": s.step_index, "phase": s.phase, "local_estimate": s.final_input_tokens,
            "provider_tokens": provider, "provider_label": label, "estimated": estimated,
            "difference": None if provider is None else provider - s.final_input_tokens,
            "ratio": (round(provider / s.final_input_tokens, 3)
                      if provider is not None and s.final_input_tokens else None),
            "compaction_applied": bool(s.compaction_applied), "pressure_line": s.pressure_line,
            "reminder_line": s.reminder_line,
        })
    frame = pd.DataFrame(rows, columns=USAGE_COLUMNS)
    return frame.astype({"provider_tokens": "Int64", "difference": "Int64", "ratio": "Float64",
                         "reminder_line": "Int64"})


def summary_usage_table(run_usage: Mapping[str, Any] | None) -> pd.DataFrame:
    """Main-model and summary (compaction) usage as two separate rows (R-TOK-6)."""
    columns = ["kind", "calls", "prompt_tokens", "input_tokens", "output_tokens"]
    rows = []
    for kind in ("main", "compaction"):
        totals = (run_usage or {}).get(kind) or {}
        rows.append({"kind": "summary (compaction)" if kind == "compaction" else "main model",
                     **{c: int(totals.get(c, 0)) for c in columns[1:]}})
    return pd.DataFrame(rows, columns=columns)


def usage_figure(steps: Sequence[StepLike]) -> go.Figure:
    """Usage over steps: estimate and provider lines, pressure/reminder lines, compaction markers.

    Frozen ``≈`` estimates are hollow markers; hover shows the numbers and the step's phase.
    """
    table = usage_table(steps)
    fig = go.Figure()
    hover = "step %{x}<br>%{y:,} tokens<br>phase %{customdata}<extra>%{fullData.name}</extra>"
    fig.add_trace(go.Scatter(
        x=table["step"], y=table["local_estimate"], name="local estimate", mode="lines+markers",
        line={"color": SERIES_COLOURS["local estimate"]}, customdata=table["phase"],
        hovertemplate=hover))
    for estimated, name, symbol in ((False, "provider", "circle"), (True, "provider ≈", "circle-open")):
        part = table[(table["estimated"] == estimated) & table["provider_tokens"].notna()]
        fig.add_trace(go.Scatter(
            x=part["step"], y=part["provider_tokens"].astype("float"), name=name,
            mode="lines+markers" if not estimated else "markers",
            marker={"symbol": symbol, "size": 8, "color": SERIES_COLOURS["provider"]},
            line={"color": SERIES_COLOURS["provider"]}, customdata=part["phase"],
            hovertemplate=hover))
    for column, name in (("pressure_line", "pressure line"), ("reminder_line", "reminder line")):
        values = table[column].astype("float")
        if values.notna().any():
            fig.add_trace(go.Scatter(
                x=table["step"], y=values, name=name, mode="lines", hoverinfo="skip",
                line={"color": SERIES_COLOURS[name], "dash": "dash", "shape": "hv"}))
    applied = table[table["compaction_applied"]]
    for step in applied["step"]:
        fig.add_vline(x=int(step), line={"color": SERIES_COLOURS["compaction"], "dash": "dot"})
    fig.add_trace(go.Scatter(
        x=applied["step"], y=applied["local_estimate"], name="compaction applied", mode="markers",
        marker={"symbol": "diamond", "size": 11, "color": SERIES_COLOURS["compaction"]},
        customdata=applied["phase"], hovertemplate=hover))
    fig.update_layout(xaxis_title="step", yaxis_title="prompt tokens (whole request)",
                      hovermode="closest", legend={"orientation": "h", "y": -0.2},
                      margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig
