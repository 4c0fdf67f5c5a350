"""The recorded agent next to the replay: where the agent really compacted, where the replay did,
what the compaction trigger compared, and where the budget came from.

A recorded compaction (Claude Code ``compact_boundary``, Codex ``compacted``) happened between two
model calls; it is drawn at the *step* whose request was the first one sent after it, the same
convention as a replay's own compaction (the step whose request was compacted). Its tokens before
are the provider's pre-compaction count when the transcript has one (Claude's ``preTokens``),
otherwise the provider prompt tokens of the step before; its tokens after are the provider prompt
tokens of that first request after it.

Every helper is a pure function of records (no store, no token counting), so the Usage,
Step-through, Compare and Compaction pages, the notebook and the HTML report draw the same marks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from ..analysis.figures import applied_compactions
from ..records import RecordedMark
from .colors import SERIES_COLOURS
from .markup import code_span

__all__ = ["BUDGET_SOURCES", "TRIGGER_BASES", "add_recorded_marks",
           "add_trigger_trace", "budget_label", "budget_source_words", "compaction_answer",
           "compaction_answer_text", "replay_compaction_steps", "step_compactions",
           "trigger_points", "whole_tokens", "y_range"]

RECORDED = "agent compacted (recorded)"
TRIGGER = "trigger value"

#: What each budget source means, in the words the pages show next to a budget.
BUDGET_SOURCES: Mapping[str, str] = {
    "config": "compaction.input_budget_tokens in the configuration",
    "model_config": "model.limit in the configuration",
    "session": "limits recorded in the session",
    "catalogue": "the model catalogue",
    "default": "the built-in default: no window known for this model",
}


#: What each trigger basis means, in the words the header, the hovers and the tables show.
TRIGGER_BASES: Mapping[str, str] = {
    "provider": "provider usage of the recorded request",
    "agent_count": "the agent's own count, recorded with its compaction",
    "provider_estimate": "frozen ≈ estimate of the provider usage",
    "calibrated_local": "calibrated local estimate + unrecorded overhead",
    "disabled": "automatic compaction disabled",
    "none": "no reading yet",
}


def whole_tokens(step: Any) -> int:
    """A step's final request on the whole-request basis (calibrated estimate + unrecorded
    overhead), the basis the lines are compared on; the raw local estimate for older records."""
    whole = getattr(step, "whole_request_tokens", None)
    return step.final_input_tokens if whole is None else int(whole)


def replay_compaction_steps(steps: Iterable[Any]) -> tuple[int, ...]:
    """Steps where the replay applied a compaction of its own."""
    return tuple(sorted(s.step_index for s in steps if s.compaction_applied))


def step_compactions(steps: Iterable[Any]) -> list[dict[str, Any]]:
    """The replay's own compactions from its step records, on the one basis of
    :mod:`workbench.analysis.figures` (this request as sent before and after, whole; the untrimmed durable
    history as a detail when the records carry their decisions)."""
    return [c.model_dump() for c in applied_compactions(steps)]


def budget_source_words(source: str | None, detail: str = "") -> str:
    """Where a budget came from, in words: the thresholds' ``budget_detail`` when there is one
    (it names the catalogue entry or the limits used), else the source's meaning."""
    return detail or BUDGET_SOURCES.get(str(source), str(source or "unknown"))


def budget_label(budget: int | None, source: str | None, detail: str = "") -> str:
    """``96,000 (source: the built-in default …)``: a budget always says where it came from."""
    if budget is None:
        return "—"
    return f"{int(budget):,} (source: {budget_source_words(source, detail)})"


def _steps_text(steps: Sequence[int | None]) -> str:
    known = [str(s) for s in steps if s is not None]
    return ", ".join(known) if known else "none"


def _compacted_at(steps: Sequence[int | None]) -> str:
    """``compacted at step 11`` / ``compacted at steps 11, 40`` / ``never compacted``."""
    known = [s for s in steps if s is not None]
    if not known:
        return "never compacted"
    return f"compacted at step{'s' if len(known) > 1 else ''} {_steps_text(known)}"


def compaction_answer_text(label: str, replay_steps: Sequence[int],
                           recorded: Sequence[RecordedMark]) -> str:
    """``replay `default` compacted at step 11; the agent compacted at steps 40, 102`` (and
    ``; the user cleared the conversation at step 35`` for a recorded ``/clear``, which is no
    compaction)."""
    clears = [m.step for m in recorded if m.trigger == "clear" and m.step is not None]
    compacted = [m.step for m in recorded if m.trigger != "clear"]
    cleared = (f"; the user cleared the conversation at step{'s' if len(clears) > 1 else ''} "
               f"{_steps_text(clears)}" if clears else "")
    return (f"replay {code_span(label)} {_compacted_at(replay_steps)}; "
            f"the agent {_compacted_at(compacted)}{cleared}")


def _offset(step: int, recorded: Sequence[RecordedMark]) -> str:
    known = [m.step for m in recorded if m.step is not None]
    if not known:
        return "—"
    nearest = min(known, key=lambda r: abs(step - r))
    delta = step - nearest
    return ("same step as the agent" if delta == 0 else
            f"{abs(delta)} steps {'before' if delta < 0 else 'after'} the agent (step {nearest})")


ANSWER_COLUMNS = ["who", "compacted at steps", "vs the agent", "tokens before → after", "trigger",
                  "budget"]


def _trigger_words(item: Mapping[str, Any]) -> str:
    value, basis = item.get("trigger_value"), item.get("trigger_basis")
    if value is None:
        return "—"
    return f"{int(value):,} ({TRIGGER_BASES.get(str(basis), basis or 'basis not recorded')})"


def compaction_answer(runs: Sequence[Mapping[str, Any]],
                      recorded: Sequence[RecordedMark]) -> pd.DataFrame:
    """One table: each replay's compaction steps next to the agent's recorded ones.

    ``runs`` are mappings with ``label``, ``compactions`` (each with ``step`` and optional
    ``tokens_before``/``tokens_after``/``trigger_value``/``trigger_basis``), and optional
    ``input_budget``/``budget_source``/``budget_detail``. The agent's trigger is the kind its
    transcript recorded (``auto`` or ``manual``).
    """
    def pair(before: Any, after: Any) -> str:
        return f"{before:,} → {after:,}" if before is not None and after is not None else (
            f"{before:,} → ?" if before is not None else "—")

    rows = []
    for run in runs:
        items = list(run.get("compactions") or ())
        rows.append({
            # A compared saved replay is labelled "replay <name>" already: never "replay replay".
            "who": (label if (label := str(run["label"])).startswith("replay ")
                    else f"replay {label}"),
            "compacted at steps": _steps_text([int(c["step"]) for c in items]),
            "tokens before → after": "; ".join(pair(c.get("tokens_before"), c.get("tokens_after"))
                                               for c in items) or "—",
            "trigger": "; ".join(_trigger_words(c) for c in items) or "—",
            "vs the agent": ("; ".join(_offset(int(c["step"]), recorded) for c in items)
                             if items and recorded else "—"),
            "budget": budget_label(run.get("input_budget"), run.get("budget_source"),
                                   run.get("budget_detail") or "")})
    rows.append({"who": "the agent (recorded)",
                 "compacted at steps": _steps_text([m.step for m in recorded]),
                 "tokens before → after": "; ".join(pair(m.tokens_before, m.tokens_after)
                                                    for m in recorded) or "—",
                 "trigger": "; ".join(m.trigger for m in recorded) or "—",
                 "vs the agent": "—", "budget": "—"})
    return pd.DataFrame(rows, columns=ANSWER_COLUMNS)


def y_range(values: Iterable[float | int | None], lines: Iterable[float | int | None],
            pad: float = 1.08) -> list[float] | None:
    """``[0, top]`` covering every value and every line (pressure, reminder, trigger)."""
    known = [float(v) for v in (*values, *lines) if v is not None and not pd.isna(v)]
    return [0.0, max(known) * pad] if known and max(known) > 0 else None


def add_recorded_marks(fig: go.Figure, marks: Sequence[RecordedMark], *, row_y: bool = True) -> None:
    """A dash-dot vertical line at each recorded compaction's step and a star at its tokens
    before (the agent's pre-compaction count), named so the legend says what it is."""
    placed = [m for m in marks if m.step is not None]
    if not placed:
        return
    colour = SERIES_COLOURS["recorded compaction"]
    for m in placed:
        fig.add_vline(x=m.step, line={"color": colour, "dash": "dashdot", "width": 2})
    if not row_y:
        return
    ys = [m.tokens_before if m.tokens_before is not None else m.tokens_after for m in placed]
    text = [f"the agent compacted before step {m.step}: "
            + (f"{m.tokens_before:,}" if m.tokens_before is not None else "?") + " → "
            + (f"{m.tokens_after:,}" if m.tokens_after is not None else "?") + " tokens"
            for m in placed]
    fig.add_trace(go.Scatter(
        x=[m.step for m in placed], y=ys, name=RECORDED, mode="markers", text=text,
        marker={"symbol": "star", "size": 15, "color": colour},
        hovertemplate="%{text}<extra></extra>"))


def trigger_points(steps: Iterable[Any]) -> tuple[list[int], list[int], list[str]]:
    """Steps that recorded the value their compaction trigger compared (``trigger_tokens``),
    with its basis."""
    xs, ys, basis = [], [], []
    for s in steps:
        value = getattr(s, "trigger_tokens", None)
        if value is not None:
            xs.append(s.step_index)
            ys.append(int(value))
            code = str(getattr(s, "trigger_basis", None) or "none")
            basis.append(TRIGGER_BASES.get(code, code))
    return xs, ys, basis


def add_trigger_trace(fig: go.Figure, steps: Iterable[Any], *, name: str = TRIGGER,
                      colour: str | None = None) -> list[int]:
    """The value the trigger compared at each step (its basis in the hover); returns the values."""
    xs, ys, basis = trigger_points(steps)
    if xs:
        fig.add_trace(go.Scatter(
            x=xs, y=ys, name=name, mode="lines", customdata=basis,
            line={"color": colour or SERIES_COLOURS["trigger value"], "width": 1.5, "shape": "hv"},
            hovertemplate="step %{x}<br>trigger compared %{y:,} tokens<br>basis %{customdata}"
                          "<extra></extra>"))
    return ys
