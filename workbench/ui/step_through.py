"""The Step-through page's parts (R-UI-2): the step timeline that opens a clicked step, the header,
the stage table, the "why" panel, the final request's overview and its messages as boxes.

The words, tables and figures come from ``workbench.views.step_page`` and
``workbench.views.step_through``; the selected step moves through ``workbench.ui.state``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from workbench.ui import state
from workbench.ui.tables import draw, drawer
from workbench.views import step_page as view
from workbench.views import subagents as subagents_view
from workbench.views.display import display_frame
from workbench.views.step_through import RequestMessage, message_overview, page_of

__all__ = ["message_controls", "page_by_page", "show_header", "show_messages", "show_overview",
           "show_stages", "show_why", "timeline_map"]

_NUMBER = st.column_config.NumberColumn
#: Pixels of a token column: "−1,234,567" in the table's font with room for the sort arrow.
_FIGURE = 110


@st.fragment
def timeline_map(spec: Callable[[], Mapping[str, Any]], step: int) -> None:
    """The step timeline in an expander; a clicked bar opens its step. The timeline of a long
    replay is 2,000 bars, so ``spec()`` is asked for and drawn only while the expander is open
    (the open state is kept across steps): drawing it on every step made "next step" slow. A
    fragment: opening or closing the expander reruns this part only, not the whole step (a click
    on a bar reruns the app)."""
    timeline = st.expander("Step timeline: every step's final request (click a bar to open that "
                           "step)", key="st_timeline_open", on_change="rerun")
    clicked = drawer(timeline).plotly_chart(
        view.timeline_at(spec(), step), key="st_timeline", on_select="rerun",
        selection_mode="points") if timeline.open else None
    state.follow_timeline_click(clicked.selection.points if clicked else [], step)


def show_header(head: view.HeaderText) -> None:
    """The step's title, phase badge, four figures, caption and (for a failed step) its error."""
    st.subheader(head.title)
    cols = st.columns([1, 3, 2, 3, 2])
    cols[0].badge(head.phase, color=head.badge)
    for col, text in zip(cols[1:], head.cells, strict=True):
        col.markdown(text)
    st.caption(head.caption)
    if head.error:
        st.error(head.error)


def show_stages(stages: pd.DataFrame) -> None:
    """The stage table (a ``stage_table`` frame), each status in its colour."""
    st.markdown("#### Stages")
    st.caption("Before → after are whole requests at each stage boundary (raw local estimate × "
               "this step's calibration ratio + the unrecorded overhead), the basis of the "
               "header and the lines; not costs that add up. The raw local estimates are the "
               "two detail columns; each stage's note comes last.")
    shown = display_frame(stages)
    # The long note last: before it, it pushed the raw local estimates the caption points at off
    # the table's right edge.
    order = [c for c in shown.columns if c != "note"] + (["note"] if "note" in shown.columns else [])
    draw.dataframe(
        shown.style.map(view.status_style, subset=["status"]),
        hide_index=True, key="st_stage_table", column_order=order,
        # widths fit a seven-digit figure with its separators and the kinds' words: the
        # automatic width cut "167,064" to ".67,064" and "decision kinds" to its first word
        column_config={"before_tokens": _NUMBER("before", format="localized", width=_FIGURE),
                         "after_tokens": _NUMBER("after", format="localized", width=_FIGURE),
                         "change": _NUMBER("change", format="localized", width=_FIGURE),
                         "decisions": _NUMBER("decisions", width=80),
                         "decision_kinds": st.column_config.TextColumn("decision kinds",
                                                                       width="large"),
                         "local_before_tokens": _NUMBER("detail: raw local before",
                                                        format="localized"),
                         "local_after_tokens": _NUMBER("detail: raw local after",
                                                       format="localized")})


def show_why(whys: Sequence[view.StageWhy], session_id: str) -> None:
    """One expander per stage: its explanation, note and decisions (sentences or a table whose
    links open each decision's message in a new tab; a selected row opens it in this one)."""
    st.markdown("#### Why")
    for why in whys:
        with st.expander(why.label, expanded=why.expanded):
            st.caption(why.explanation)
            if why.note:
                st.text(why.note)
            if why.lines:
                st.markdown(why.lines)
                message_links(why.messages, session_id)
            elif why.table is not None:
                picked = draw.dataframe(
                    why.table, hide_index=True, key=f"st_decisions_{why.stage}",
                    on_select="rerun", selection_mode="single-row",
                    column_config={"open": st.column_config.LinkColumn(
                        "message", display_text="open message",
                        help="on the Messages page, in a new tab (select the row to open it here)")})
                open_selected_message(why.table, picked.selection.rows, session_id)


def message_links(messages: Sequence[int], session_id: str) -> None:
    """A row of links that open each message on the Messages page in this document (the
    sentences' links open a new tab at the page's address)."""
    if not messages:
        return
    row = st.container(horizontal=True, gap="small")
    row.caption("Open here:")
    for index in messages:
        row.page_link(state.app_page("messages.py"), label=f"message #{index}",
                      query_params={"session": session_id, "message": str(index)})


def open_selected_message(table: pd.DataFrame, rows: Sequence[int], session_id: str) -> None:
    """Open the Messages page at the message of the selected decision row, in the same document
    (nothing when no row with a message is selected)."""
    if not rows or pd.isna(index := table["message"].iloc[rows[0]]):
        return
    state.switch_to("messages.py", session=session_id, message=int(index))


def show_overview(caption: str, shown: Sequence[RequestMessage]) -> None:
    """Every message of the final request in one table under ``caption``."""
    st.caption(caption)
    draw.dataframe(message_overview(shown), hide_index=True, key="st_request_overview", height=240,
                   column_config={"characters": _NUMBER(format="localized"),
                                  "original": st.column_config.CheckboxColumn("original kept"),
                                  "start": st.column_config.TextColumn("start of the text")})


def message_controls() -> tuple[str, bool, bool]:
    """(mode, only marked, full texts): which messages are shown in full, and how."""
    controls = st.columns([3, 2, 2])
    mode: str = controls[0].radio(
        "Messages in full", ["This step", "Page by page"], horizontal=True, key="st_message_mode",
        help="This step: the checkpoint, the messages this step's decisions changed and the last "
             f"{view.LAST}. Page by page: every message, {view.PAGE_SIZE} per page.")
    only_changed = controls[1].toggle("Only marked messages", key="st_only_changed",
                                      disabled=mode != "Page by page")
    full = controls[2].toggle("Show full texts", key="st_full_texts",
                              help=f"Texts over {view.LONG:,} characters are cut unless this is on.")
    return mode, only_changed, full


def page_by_page(shown: Sequence[RequestMessage], step: int, only_changed: bool
                 ) -> tuple[RequestMessage, ...]:
    """The page of messages the page box picks: one box per step and filter, opening on the
    newest page (the end of a request is what the model answers)."""
    pool = view.marked_only(shown, only_changed)
    pages = view.page_count(len(pool))
    page = st.number_input(f"Page (of {pages}, {view.PAGE_SIZE} messages each)", 1, pages, pages,
                           key=f"st_message_page_{step}_{only_changed}")
    return page_of(pool, int(page), view.PAGE_SIZE)


def show_messages(messages: Sequence[RequestMessage], step: int, *, full: bool,
                  subagents: Mapping[int, Sequence[Mapping[str, Any]]] | None = None) -> None:
    """Each message as text in a bordered box (left border coloured by its marks); an original
    is sent only while its expander is open, so closed ones cost nothing. The text is ``st.text``:
    a first ``st.code`` makes the browser load and run Streamlit's syntax highlighter (1.5 MB of
    script), a fifth of the page's first render; an opened original is still a code block."""
    st.html(view.MARKS_CSS)
    for message in messages:
        box = view.message_box(message, step, full=full)
        with st.container(border=True, key=box.key):
            st.markdown(box.heading)
            st.text(box.text)
            # a tool call that ran a sub-agent: the sub-agent on the card, linked to its session
            for run in (subagents or {}).get(-1 if message.history_index is None
                                              else message.history_index, ()):
                st.markdown(subagents_view.subagent_card(run))
            if box.original_label is not None:
                original = st.expander(box.original_label, key=box.original_key,
                                       on_change="rerun")
                if original.open:
                    original.code(box.original_text, language=None, wrap_lines=True)
