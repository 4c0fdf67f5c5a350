"""Compaction views (R-UI-3): where each cut fell on the message timeline, what was kept raw,
archived, summarised or retained verbatim, every candidate and rejected attempt, and the archives.

A message's fate is read from records, not recomputed: messages the applied step's final request
still carries from the history are *kept raw*; head messages whose body the preparation before had
already reduced, trimmed or folded (their marks) reached the summariser only as a preview, so their
full text lives only in ``history-N.md``: *archived*; a head user message quoted in the
checkpoint's "Retained Recent Messages" is *retained verbatim*; every other head message is
*summarised* (its text went into the summary request; it is archived too, since the archive is
always the lossless original).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from iris.compaction.thresholds import Thresholds
from iris.frozen import FrozenModel
from iris.preparation.records import (
    CompactionApplied,
    CompactionCandidate,
    CompactionPlan,
    CompactionRejected,
    Decision,
    PreparedRequest,
)
from iris.session import Message

from ..analysis.figures import compaction_figures
from ..records import CompactionFacts
from .colors import FATE_COLOURS, PHASE_COLOURS, SERIES_COLOURS
from .failures import step_link
from .markup import plain
from .recorded import budget_label
from .step_through import describe

__all__ = ["ARCHIVE_PREVIEW", "FATES", "CompactionBand", "archive_preview", "attempts_table",
           "compaction_band", "compaction_budget_caption", "compactions_table", "replay_bands",
           "retained_texts", "timeline_figure", "with_step_links"]

FATES: tuple[str, ...] = ("archived", "summarised", "retained verbatim", "kept raw")
_ARCHIVED_MARKS = {"reduced", "trimmed", "folded"}
CUT_COLOUR = PHASE_COLOURS["failed"]
ARCHIVE_PREVIEW = 6000
"""Characters of an archive shown before "Show the whole archive" is switched on."""
COMPACTION_KINDS = ("compaction-plan", "compaction-candidate", "compaction-rejected",
                    "compaction-applied")


class CompactionBand(FrozenModel):
    """One compaction's message timeline: session message indices and their fates."""

    n: int
    step_index: int
    first_index: int
    """Session index of the first message in the band (the previous cut, or 0)."""
    fates: tuple[str, ...]
    """Fate of messages ``first_index``, ``first_index + 1``, … in order."""
    cut_index: int
    """Session index of the first message kept raw (the cut point)."""


def retained_texts(checkpoint_text: str) -> tuple[str, ...]:
    """User messages quoted in a checkpoint's ``## Retained Recent Messages`` section."""
    if "## Retained Recent Messages" not in checkpoint_text:
        return ()
    section = checkpoint_text.split("## Retained Recent Messages", 1)[1].split("\n## ", 1)[0]
    texts: list[list[str]] = []
    for line in section.splitlines():
        if line.startswith("User:"):
            texts.append([])
        elif line.startswith(">") and texts and line != "> [truncated]":
            texts[-1].append(line[2:] if line.startswith("> ") else line[1:])
    return tuple("\n".join(t).strip() for t in texts)


def compaction_band(n: int, step_index: int, *, archived: Sequence[int],
                    applied_request: PreparedRequest | None,
                    previous_request: PreparedRequest | None, session_messages: Sequence[Message],
                    checkpoint_text: str, first_kept: int | None = None) -> CompactionBand:
    """The fates of the messages one compaction saw, from the records around it.

    ``archived`` are the session indices the engine moved into the archive; the kept raw tail is
    read from the applied step's final request (its history messages).
    """
    kept = sorted(m.history_index for m in (applied_request.marks if applied_request else ())
                  if m.origin == "history" and m.history_index is not None)
    head = sorted(archived)
    cut = first_kept if first_kept is not None else (kept[0] if kept else (head[-1] + 1 if head else 0))
    first = head[0] if head else cut
    last = max([cut - 1, *head, *kept])
    reduced = {m.history_index for m in (previous_request.marks if previous_request else ())
               if m.history_index is not None and _ARCHIVED_MARKS & set(m.marks)}
    retained = set(retained_texts(checkpoint_text))
    fates = []
    for index in range(first, last + 1):
        message = session_messages[index] if index < len(session_messages) else None
        if index >= cut:
            fates.append("kept raw")
        elif message is not None and message.role == "user" and message.text.strip() in retained:
            fates.append("retained verbatim")
        elif index in reduced:
            fates.append("archived")
        else:
            fates.append("summarised")
    return CompactionBand(n=n, step_index=step_index, first_index=first, fates=tuple(fates),
                          cut_index=cut)


def timeline_figure(bands: Sequence[CompactionBand],
                    recorded_at: Sequence[int | None] = ()) -> go.Figure:
    """One horizontal band per compaction, coloured by fate, with the cut point as a line; the
    agent's recorded compactions (``recorded_at``: the session index where its new context
    starts) as dash-dot lines across every band."""
    fig = go.Figure()
    labels = [f"#{b.n} · step {b.step_index}" for b in bands]
    for fate in FATES:
        xs, ys = [], []
        for band, label in zip(bands, labels):
            for offset, f in enumerate(band.fates):
                if f == fate:
                    xs.append(band.first_index + offset)
                    ys.append(label)
        fig.add_trace(go.Bar(x=[1] * len(xs), base=[x - 0.5 for x in xs], y=ys, orientation="h",
                             name=fate, marker={"color": FATE_COLOURS[fate]},
                             customdata=xs, hovertemplate=f"message %{{customdata}}: {fate}"
                                                          "<extra>%{y}</extra>"))
    for row, band in enumerate(bands):
        x = band.cut_index - 0.5
        fig.add_shape(type="line", x0=x, x1=x, y0=row - 0.45, y1=row + 0.45,
                      line={"color": CUT_COLOUR, "width": 3})
    fig.add_trace(go.Scatter(x=[b.cut_index - 0.5 for b in bands], y=labels, mode="markers",
                             name="cut point", marker={"symbol": "line-ns-open", "size": 24,
                                                       "color": CUT_COLOUR},
                             hovertemplate="cut before message %{x:.0f}<extra>%{y}</extra>"))
    for at in recorded_at:
        if at is not None:
            fig.add_vline(x=at - 0.5, line={"color": SERIES_COLOURS["recorded compaction"],
                                            "dash": "dashdot", "width": 2},
                          annotation_text="agent compacted", annotation_position="top")
    fig.update_layout(barmode="overlay", xaxis_title="session message", bargap=0.3,
                      yaxis={"autorange": "reversed", "type": "category"},
                      height=160 + 60 * len(bands),
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
                      margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig


class _Row:
    """A step known only by its index (no trigger value or whole request recorded)."""

    trigger_tokens: int | None = None
    trigger_basis: str | None = None
    whole_request_tokens: int | None = None

    def __init__(self, step_index: int) -> None:
        self.step_index = step_index


COMPACTION_COLUMNS = ["n", "step", "cut_index", "tokens_before", "tokens_after", "trigger_value",
                      "trigger_basis", "history_tokens_before", "history_tokens_after",
                      "checkpoint_tokens", "archive", "reason"]


def compactions_table(decisions: Sequence[tuple[int, str, Decision]],
                      steps: Iterable[Any] = ()) -> pd.DataFrame:
    """One row per applied compaction (``n`` counts from 1 in step order) on the one basis of
    :mod:`workbench.analysis.figures`: ``tokens_before → tokens_after`` is this request as sent (whole
    request), with the trigger value and basis of the step (from ``steps``, its records or truth
    rows); ``history_tokens_*`` is the labelled detail (the untrimmed durable history the engine
    compacted)."""
    rows_by_step = {s.step_index: s for s in steps}
    applied = [(s, d) for s, _, d in decisions if isinstance(d, CompactionApplied)]
    rows = [{"n": n, "cut_index": d.cut_index,
             **compaction_figures(rows_by_step.get(step) or _Row(step), d).model_dump(),
             "checkpoint_tokens": d.checkpoint_tokens, "archive": d.archive_path or "—",
             "reason": d.reason}
            for n, (step, d) in enumerate(applied, start=1)]
    return pd.DataFrame(rows, columns=COMPACTION_COLUMNS).astype(
        {"tokens_before": "Int64", "tokens_after": "Int64", "trigger_value": "Int64"})


def attempts_table(decisions: Sequence[tuple[int, str, Decision]]) -> pd.DataFrame:
    """Every plan, candidate, rejected and applied attempt with its reason, in step order."""
    outcome = {CompactionPlan: "candidate (plan)", CompactionCandidate: "candidate",
               CompactionRejected: "rejected", CompactionApplied: "applied"}
    rows = [{"step": step, "outcome": outcome[type(d)], "attempt": getattr(d, "attempt", None),
             "what": describe(d), "reason": d.reason}
            for step, _, d in decisions if type(d) in outcome]
    frame = pd.DataFrame(rows, columns=["step", "outcome", "attempt", "what", "reason"])
    return frame.astype({"attempt": "Int64"})


def with_step_links(frame: pd.DataFrame, session_id: str, replay_id: str) -> pd.DataFrame:
    """``frame`` (a table with a ``step`` column) with a ``link`` column opening each row's step on
    the Step-through page, so a compaction in a table is one click from its Why panel."""
    shown = frame.copy()
    shown["link"] = pd.Series([step_link(session_id, replay_id, int(s)) for s in shown["step"]],
                              index=shown.index, dtype="str")
    return shown


def replay_bands(compactions: Sequence[CompactionFacts], *,
                 request_at: Callable[[int], PreparedRequest | None],
                 session_messages: Sequence[Message],
                 checkpoints: Mapping[int, str]) -> tuple[CompactionBand, ...]:
    """Bands for every compaction of a replay.

    ``compactions`` are the replay's per-compaction facts; ``request_at(step)`` gives a step's final
    request; ``checkpoints`` maps ``n`` to the checkpoint text.
    """
    bands = []
    for c in compactions:
        step = c.step_index
        bands.append(compaction_band(
            c.n, step, archived=c.archived_messages, applied_request=request_at(step),
            previous_request=request_at(step - 1) if step > 0 else None,
            session_messages=session_messages, checkpoint_text=checkpoints.get(c.n, ""),
            first_kept=c.first_kept_message))
    return tuple(bands)


def compaction_budget_caption(thresholds: Thresholds | None, summariser: str) -> str | None:
    """The budget with its source, the pressure line and the summariser that wrote the
    checkpoints (None when the replay saved no thresholds)."""
    if not thresholds:
        return None
    budget = budget_label(thresholds.input_budget, thresholds.budget_source,
                          thresholds.budget_detail)
    return (f"Budget {plain(budget)} · pressure line {thresholds.pressure_line:,} · summariser "
            f"**{plain(summariser)}**" + (" (offline extractive: no model wrote these checkpoints)"
                                   if summariser == "extractive" else ""))


def archive_preview(text: str, *, whole: bool, limit: int = ARCHIVE_PREVIEW) -> str:
    """``text`` whole, or its first ``limit`` characters with how many more there are."""
    if whole or len(text) <= limit:
        return text
    return (text[:limit] + f"\n… [{len(text) - limit:,} more characters: switch on “Show the "
            "whole archive”]")
