"""What a step's request is made of, the question Claude Code's ``/context`` answers: the unrecorded
overhead (system prompt and tool schemas the transcript does not hold), the engine's own tool
schemas and framing, context and notices, the checkpoint, user text, assistant text, tool calls,
tool results by tool, and what the step sent reduced (trimmed, folded or externalised to a file).

**Basis.** The parts add up to the step's whole request exactly as the Step-through header states it
(``whole_request_tokens``: the raw local estimate × the step's calibration ratio + the unrecorded
overhead, :mod:`workbench.analysis.figures`): the overhead is its own part, and the raw local counts of the
other parts are scaled to the rest with the largest-remainder rule, so rounding never makes the
parts disagree with the header. Pure functions of records; the page and the notebook draw them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.session import Message, ToolCallBlock, ToolResultBlock, block_text
from iris.tokens import MESSAGE_OVERHEAD, REQUEST_OVERHEAD, TOOL_CALL_OVERHEAD, TokenEstimator

from ..analysis.figures import whole_figures

__all__ = ["BREAKDOWN_COLUMNS", "OVERHEAD", "PART_COLOURS", "TOOL_COLOURS", "breakdown_figure",
           "breakdown_frame", "call_names", "part_colours", "step_breakdown", "whole_of"]

BREAKDOWN_COLUMNS = ["part", "tokens", "share"]
OVERHEAD = "system prompt & tools (unrecorded overhead)"
FRAMING = "engine tools & request framing"
CONTEXT = "context & notices"
CHECKPOINT = "checkpoint"
USER = "user text"
ASSISTANT = "assistant text"
CALLS = "tool calls"
REDUCED = "reduced / externalised outputs"
NOT_READY = "request as it stood (step not ready)"
_REDUCING = frozenset({"reduced", "trimmed", "folded"})
OTHER_TOOLS = "tool results: other"
#: One colour per part, none shared (plotly's default cycle has ten, so a chart of more parts
#: gave three pairs of them one colour): the fixed parts keep theirs, the tools named on their
#: own take :data:`TOOL_COLOURS` in the chart's order (at most :data:`TOP_TOOLS`).
PART_COLOURS: dict[str, str] = {
    OVERHEAD: "#778AAE", FRAMING: "#B2828D", CONTEXT: "#6C7C32", CHECKPOINT: "#A777F1",
    USER: "#2E91E5", ASSISTANT: "#1CA71C", CALLS: "#B68100", REDUCED: "#EB663B",
    NOT_READY: "#862A16", OTHER_TOOLS: "#DA60CA"}
TOOL_COLOURS = ("#E15F99", "#00A08B", "#DA16FF", "#511CFB", "#FC0080", "#6C4516", "#AF0038")
#: Tools named on their own in the chart over all steps; the others are "tool results: other".
TOP_TOOLS = 6


def whole_of(prep: ContextPreparation) -> int:
    """The step's whole request as the header states it."""
    return whole_figures(prep)(prep.final_input_tokens)


def call_names(messages: Iterable[Message]) -> dict[str, str]:
    """Tool-call id → tool name over ``messages``."""
    return {b.id: b.name for m in messages for b in m.content if isinstance(b, ToolCallBlock)}


def _message_parts(message: Message, origin: str, marks: Sequence[str], names: Mapping[str, str],
                   estimator: TokenEstimator) -> dict[str, int]:
    """Raw local counts of one request message by part (its framing goes with its first part)."""
    parts: dict[str, int] = {}
    if origin == "checkpoint" or "summarised" in marks:
        fixed = CHECKPOINT
    elif origin in ("context", "contribution", "notice") or "notice" in marks:
        fixed = CONTEXT
    elif _REDUCING & set(marks):
        fixed = REDUCED
    else:
        fixed = None
    for block in message.content:
        tokens = estimator.count(block_text(block))
        if isinstance(block, ToolCallBlock):
            part, tokens = fixed or CALLS, tokens + TOOL_CALL_OVERHEAD
        elif isinstance(block, ToolResultBlock):
            part = fixed or f"tool results: {names.get(block.call_id) or 'unknown tool'}"
        else:
            part = fixed or (USER if message.role in ("user", "system") else ASSISTANT)
        parts[part] = parts.get(part, 0) + tokens
    first = next(iter(parts), fixed or (USER if message.role == "user" else ASSISTANT))
    parts[first] = parts.get(first, 0) + MESSAGE_OVERHEAD
    return parts


def _scaled(raw: Mapping[str, int], total: int) -> dict[str, int]:
    """``raw`` scaled to sum to ``total`` exactly (largest remainder)."""
    weight = sum(raw.values())
    if weight <= 0 or total <= 0:
        return dict.fromkeys(raw, 0)
    exact = {k: v * total / weight for k, v in raw.items()}
    out = {k: math.floor(x) for k, x in exact.items()}
    for k in sorted(exact, key=lambda k: exact[k] - out[k], reverse=True)[:total - sum(out.values())]:
        out[k] += 1
    return out


def step_breakdown(prep: ContextPreparation, request: PreparedRequest | None,
                   estimator: TokenEstimator, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The parts of one step's request (``part, tokens, share``), largest first after the overhead;
    ``tokens`` sums to :func:`whole_of` the step."""
    whole, overhead = whole_of(prep), prep.unrecorded_overhead_tokens
    raw: dict[str, int] = {}
    if request is None:
        raw[NOT_READY] = 1
    else:
        names = {**(names or {}), **call_names(request.messages)}
        raw[FRAMING] = REQUEST_OVERHEAD + sum(estimator.tool_schema_tokens(t) for t in request.tools)
        for pos, message in enumerate(request.messages):
            mark = request.marks[pos] if pos < len(request.marks) else None
            for part, n in _message_parts(message, mark.origin if mark else "history",
                                          mark.marks if mark else (), names, estimator).items():
                raw[part] = raw.get(part, 0) + n
    parts = {OVERHEAD: overhead, **_scaled(raw, whole - overhead)}
    rows = [(OVERHEAD, parts.pop(OVERHEAD))]
    rows += sorted(((k, v) for k, v in parts.items() if v), key=lambda kv: (-kv[1], kv[0]))
    frame = pd.DataFrame(rows, columns=["part", "tokens"])
    frame["share"] = frame["tokens"] / whole if whole else 0.0
    return frame


def breakdown_frame(steps: Iterable[tuple[ContextPreparation, PreparedRequest | None]],
                    estimator: TokenEstimator, names: Mapping[str, str] | None = None,
                    top_tools: int = TOP_TOOLS) -> pd.DataFrame:
    """Every step's breakdown as one long frame (``step, part, tokens``); tool results of tools
    outside the ``top_tools`` largest (over all steps) are summed as "tool results: other"."""
    rows: list[dict[str, Any]] = []
    for prep, request in steps:
        for part, tokens in step_breakdown(prep, request, estimator, names)[["part", "tokens"]].itertuples(
                index=False):
            rows.append({"step": prep.step_index, "part": part, "tokens": int(tokens)})
    tools: dict[str, int] = {}
    for row in rows:
        if row["part"].startswith("tool results: "):
            tools[row["part"]] = tools.get(row["part"], 0) + row["tokens"]
    keep = set(sorted(tools, key=lambda t: -tools[t])[:top_tools])
    summed: dict[tuple[int, str], int] = {}
    for row in rows:
        part = row["part"]
        if part.startswith("tool results: ") and part not in keep:
            part = OTHER_TOOLS
        summed[(row["step"], part)] = summed.get((row["step"], part), 0) + row["tokens"]
    return pd.DataFrame([{"step": k[0], "part": k[1], "tokens": n} for k, n in summed.items()],
                        columns=["step", "part", "tokens"])


def part_colours(parts: Sequence[str]) -> dict[str, str]:
    """A distinct colour for each of ``parts`` (:data:`PART_COLOURS`; each tool named on its own
    the next of :data:`TOOL_COLOURS`, then any further part the next unused one of plotly's
    24-colour Dark24)."""
    import plotly.colors

    spare = [c for c in (*TOOL_COLOURS, *plotly.colors.qualitative.Dark24)
             if c not in PART_COLOURS.values()]
    out: dict[str, str] = {}
    for part in parts:
        fixed = PART_COLOURS.get(part)
        out[part] = fixed if fixed is not None else (spare.pop(0) if spare else "#64748B")
    return out


def breakdown_figure(frame: pd.DataFrame, *, selected: int | None = None,
                     colors: Mapping[str, str] | None = None) -> go.Figure:
    """A stacked bar per step of :func:`breakdown_frame` (the overhead at the bottom), the selected
    step outlined."""
    totals: dict[str, int] = {}
    for part, tokens in zip(frame["part"], frame["tokens"], strict=True):
        totals[str(part)] = totals.get(str(part), 0) + int(tokens)
    order = [OVERHEAD, *sorted((p for p in totals if p != OVERHEAD), key=lambda p: -totals[p])]
    colours = {**part_colours(order), **(colors or {})}
    fig = go.Figure()
    for part in order:
        rows = frame[frame["part"] == part]
        fig.add_bar(x=rows["step"], y=rows["tokens"], name=part,
                    marker_color=colours[part],
                    hovertemplate=f"step %{{x}}<br>{part}: %{{y:,}} tokens<extra></extra>")
    if selected is not None:
        fig.add_vline(x=selected, line_dash="dot", line_color="#2563EB")
    fig.update_layout(barmode="stack", bargap=0.05, height=380, xaxis_title="step",
                      yaxis_title="tokens (whole request)", legend={"orientation": "h", "y": -0.25},
                      margin={"t": 30, "b": 10, "l": 10, "r": 10},
                      title="What each request is made of")
    return fig
