"""What the Step-through page shows around its tables (R-UI-2): the header of a step in words, the
"why" panel of each stage (a few decisions as sentences, many as a table, each linking to its
message on the Messages page), the step timeline with the current step drawn, and each message of
the final request as a box (heading, text cut to a readable length, the original on demand).

Pure functions of the stored records (``workbench.views.step_through`` builds the tables); the
page only places them in Streamlit elements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlencode

import pandas as pd
from iris.compaction.thresholds import Thresholds
from iris.frozen import FrozenModel
from iris.preparation.records import ContextPreparation, PreparedRequest
from pydantic import ConfigDict

from ..analysis.words import counted
from ..records import RecordedMark
from .colors import MARK_COLOURS, STATUS_COLOURS
from .markup import code_span, plain
from .recorded import budget_label
from .step_through import (
    STAGE_EXPLANATIONS,
    RequestMessage,
    decision_table,
    step_header,
    step_timeline_figure,
    why_reason,
)
from .usage import StepLike

__all__ = ["BADGE", "FEW", "LAST", "LONG", "MARKS_CSS", "PAGE_SIZE", "Badge", "HeaderText", "MessageBox",
           "StageWhy", "cut", "focus_caption", "header_text", "marked_only", "message_box",
           "message_url", "page_count", "request_caption", "stage_whys", "status_style",
           "timeline_at", "timeline_spec"]

#: Texts longer than this many characters are cut unless the user asks for full texts.
LONG = 3000
#: Up to this many decisions of a stage are sentences; more are a table.
FEW = 12
#: Messages per page in "Page by page" (also the most changed messages "This step" shows).
PAGE_SIZE = 10
#: The newest messages "This step" always shows.
LAST = 5
Badge = Literal["green", "red", "gray"]
#: Badge colour of each phase.
BADGE: Mapping[str, Badge] = {"ready": "green", "failed": "red", "cancelled": "gray"}
#: Every mark's left border colour on the message boxes (their keys carry the marks).
MARKS_CSS = "<style>" + "\n".join(
    f'[class*="st-key-wbmsg-"][class*="-{k}"] {{border-left: 5px solid {c}; '
    f'padding-left: 0.6rem;}}' for k, c in MARK_COLOURS.items()) + "</style>"


class HeaderText(FrozenModel):
    """The header of one step in words: the title, the phase badge, four cells and a caption."""

    title: str
    phase: str
    badge: Badge
    cells: tuple[str, str, str, str]
    """Final input against the budget, the lines, the trigger value, the provider's count."""
    caption: str
    error: str | None
    """Where and why the preparation failed (None for a ready step)."""


def header_text(prep: ContextPreparation, step_count: int,
                thresholds: Thresholds | None) -> HeaderText:
    """The header of ``prep`` in a replay of ``step_count`` steps with these ``thresholds``: the
    final input on the whole-request basis when recorded, coloured by pressure; the budget says
    where it came from."""
    head = step_header(prep)
    whole = head.whole_request_tokens
    final = head.final_input_tokens if whole is None else whole
    final_cell = (f"**Final input{' (whole request)' if whole else ''}** :{head.pressure}"
                  f"[{final:,}] of {head.input_budget:,} ({head.percent_of_budget}%)")
    reminder = f"{prep.reminder_line:,}" if prep.reminder_line is not None else "off"
    frozen = " (frozen estimate)" if head.provider_label.startswith("≈") else ""
    budget = (budget_label(thresholds.input_budget, thresholds.budget_source,
                           thresholds.budget_detail)
              if thresholds else budget_label(head.input_budget, None, ""))
    error = (f"This preparation is **{head.phase}** in stage {code_span(head.error_stage or '—')}: "
             f"{plain(head.error)}") if head.error else None
    return HeaderText(
        title=f"Step {head.step_index} of {step_count - 1} · response message "
              f"#{prep.response_message_index}",
        phase=head.phase, badge=BADGE[head.phase],
        cells=(final_cell, f"Pressure line {prep.pressure_line:,} · reminder {reminder}",
               f"**Trigger compared** {head.trigger_label}",
               f"**Provider usage of this response** {head.provider_label}{frozen}"),
        caption=" · ".join(filter(None, [head.whole_request_words, f"Budget {plain(budget)}"])),
        error=error)


def timeline_spec(steps: Sequence[StepLike], marks: Sequence[RecordedMark]) -> dict[str, Any]:
    """The step timeline as a Plotly spec without a current step (the same at every step)."""
    return step_timeline_figure(steps, recorded=marks).to_plotly_json()


def timeline_at(spec: Mapping[str, Any], current: int) -> dict[str, Any]:
    """The timeline ``spec`` with the current step drawn as a line (a new layout, shared data)."""
    line = {"type": "line", "xref": "x", "yref": "paper", "x0": current, "x1": current,
            "y0": 0, "y1": 1, "line": {"color": STATUS_COLOURS["candidate"], "width": 2}}
    shapes = [*spec["layout"].get("shapes", ()), line]
    return {"data": spec["data"], "layout": {**spec["layout"], "shapes": shapes}}


def status_style(status: Any) -> str:
    """The CSS of a stage status cell (its status colour)."""
    return f"color: {STATUS_COLOURS.get(status, 'inherit')}"


def message_url(session_id: str, index: Any) -> str | None:
    """A link to recorded message ``index`` on the Messages page (None for no message)."""
    if pd.isna(index):
        return None
    return f"messages?{urlencode({'session': session_id, 'message': int(index)})}"


def _link(session_id: str, index: Any) -> str:
    url = message_url(session_id, index)
    return f" · [message #{int(index)}]({url})" if url else ""


class StageWhy(FrozenModel):
    """One stage in the "why" panel: its label, whether it opens, its explanation and note, and
    its decisions as markdown sentences (``lines``) or, when there are many, a table whose
    ``open`` column links each to its message."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # frozen, extra="forbid" from FrozenModel

    stage: str
    label: str
    expanded: bool
    explanation: str
    note: str | None
    lines: str | None = None
    table: pd.DataFrame | None = None
    messages: tuple[int, ...] = ()
    """The recorded messages the decisions are about, each once, in the decisions' order."""


def stage_whys(prep: ContextPreparation, session_id: str, *, few: int = FEW
               ) -> tuple[StageWhy, ...]:
    """Every stage of ``prep`` for the "why" panel; stages that decided something open."""
    out = []
    for stage in prep.stages:
        lines, table = None, None
        if stage.decisions:
            rows = decision_table(prep, stage=stage.name)
            if len(stage.decisions) <= few:
                reasons = [why_reason(d) for d in stage.decisions]  # the order of the rows
                lines = "\n".join(
                    f"- **{plain(kind)}**: {plain(what)} — {plain(reason)}{_link(session_id, at)}"
                    for kind, what, reason, at in zip(rows["kind"], rows["what"], reasons,
                                                      rows["message"], strict=True))
            else:
                rows["open"] = [message_url(session_id, m) for m in rows["message"]]
                table = rows
        out.append(StageWhy(
            stage=stage.name, label=f"{stage.name} — {stage.status} · "
                                    f"{counted(len(stage.decisions), 'decision')}",
            expanded=stage.status in ("applied", "rejected", "candidate"),
            explanation=STAGE_EXPLANATIONS[stage.name], note=stage.note or None,
            lines=lines, table=table,
            messages=tuple(dict.fromkeys(int(m) for m in rows["message"] if not pd.isna(m))
                           ) if stage.decisions else ()))
    return tuple(out)


def request_caption(prep: ContextPreparation, request: PreparedRequest,
                    shown: Sequence[RequestMessage]) -> str:
    """How many messages the final request has, its tools and what was dropped."""
    return (f"{len(shown)} messages · tools: {plain(', '.join(prep.final_tools) or 'none')} · dropped: "
            f"{plain(', '.join(request.dropped) or 'nothing')}")


def marked_only(messages: Sequence[RequestMessage], only: bool) -> tuple[RequestMessage, ...]:
    """The messages carrying a mark when ``only``, else all of them."""
    return tuple(m for m in messages if m.marks or not only)


def page_count(count: int, size: int = PAGE_SIZE) -> int:
    """Pages of ``size`` needed for ``count`` messages (at least one)."""
    return max(1, -(-count // size))


def focus_caption(shown: int, total: int, left_out: int, *, last: int = LAST) -> str | None:
    """What "This step" shows of a request of ``total`` messages (None when it shows them all)."""
    if shown >= total:
        return None
    more = f" ({left_out} more changed ones page by page)" if left_out else ""
    return (f"Showing {shown} of {total} messages: the checkpoint, what this step changed and "
            f"the last {last}{more}. Every message is in the table above and under “Page by "
            "page”.")


def cut(text: str, full: bool, long: int = LONG) -> str:
    """``text``, cut after ``long`` characters with a note unless ``full``."""
    if full or len(text) <= long:
        return text
    return text[:long] + f"\n… [{len(text) - long:,} more characters: switch on “Show full texts”]"


class MessageBox(FrozenModel):
    """One message of the final request as a box: its key (carrying its marks, for the border
    colour), heading and text, and its original when a decision changed it."""

    key: str
    heading: str
    text: str
    original_key: str
    original_label: str | None = None
    original_text: str | None = None


def message_box(message: RequestMessage, step: int, *, full: bool) -> MessageBox:
    """The box of ``message`` at ``step`` (texts cut unless ``full``)."""
    marks = " ".join(f":{'violet' if m == 'summarised' else 'orange'}-badge[{m}]"
                     for m in message.marks)
    original = message.original_text
    return MessageBox(
        key=f"wbmsg-{message.position}" + "".join(f"-{m}" for m in message.marks),
        heading=f"**{message.position} · {message.role}** · {plain(message.label)} {marks} · "
                f"{message.chars:,} characters",
        text=cut(message.text, full), original_key=f"st_original_{step}_{message.position}",
        original_label=None if original is None else f"Original ({len(original):,} characters)",
        original_text=None if original is None else cut(original, full))
