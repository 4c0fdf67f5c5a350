"""The Messages page's parts (R-SES-1, R-SES-2): the header figures, the all-messages table, the
page picker (a ``?message=N`` link opens the page holding message N) and the conversation, every
message a box whose transcript text is shown as code, never as markdown or HTML.

The words and figures come from ``workbench.views.messages``; the page number moves through
``workbench.ui.state``.

The boxes show transcript text with ``st.text``, not ``st.code``: the first code block of a
document makes the browser load and run Streamlit's syntax highlighter (1.5 MB of script with
every Prism language), a quarter of the page's first render on a real session. The full text of a
long block, sent only when its expander is opened, is still a code block.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import streamlit as st

from workbench.services.messages import OpenedSession
from workbench.ui import state
from workbench.ui.tables import dashed_table, drawer
from workbench.views import messages as view
from workbench.views import query
from workbench.views import sessions as sessions_view
from workbench.views import subagents as subagents_view
from workbench.views.markup import one_line

__all__ = ["page_picker", "request_notice", "show_conversation", "show_header", "show_subagents",
           "show_table", "unplaced_warning"]


def show_header(opened: OpenedSession) -> None:
    """The session's title and its six figures."""
    st.subheader(one_line(opened.title))
    # Two rows of three: in one row of six, "Max prompt (provider)" was cut to "Max prompt (provi…".
    metrics = view.header_metrics(opened.session, opened.estimated_tokens)
    for row in (metrics[:3], metrics[3:]):
        for col, (label, value) in zip(st.columns(3), row, strict=True):
            col.metric(label, value)
    unplaced_warning(len(opened.unplaced))
    show_subagents(opened)


def unplaced_warning(count: int) -> None:
    """The session's unplaced-lines warning (nothing when every line was placed)."""
    if (note := sessions_view.unplaced_notice(count)) is not None:
        st.warning(note, icon="⚠️")


def show_subagents(opened: OpenedSession) -> None:
    """What a sub-agent's or compaction request's session is, the sub-agents its tool calls ran
    (each call → the sub-agent's calls and tokens) and the recorded compaction requests."""
    header = opened.session.header
    if (note := subagents_view.request_session_notice(header.agent_id, header.parent_id)) is not None:
        st.info(note)
    elif header.parent_id:
        st.caption(f"Sub-agent {view.code_span(header.agent_id)} of session {view.code_span(header.parent_id)}.")
    if opened.subagents:
        st.markdown(f"**Sub-agents** ({len(opened.subagents)}): the tool calls that ran one, and what each did")
        dashed_table(subagents_view.subagent_frame(opened.subagents), key="wb_msg_subagents",
                     config={"Billed (USD)": st.column_config.NumberColumn(format="$%.4f"),
                             "Open": st.column_config.LinkColumn(
                                 "Open", display_text="open its session",
                                 help="the sub-agent's own session on the Messages page")})
    for line in subagents_view.compaction_request_lines(opened.compaction_requests):
        st.text(line)


def request_notice(agent_id: str | None, parent_id: str | None) -> None:
    """On the Usage page: what a recorded compaction request's session and its overhead figure are."""
    if (note := subagents_view.request_session_notice(agent_id, parent_id, usage_page=True)) is not None:
        st.info(note)


def show_table(opened: OpenedSession) -> None:
    """The table of every message, built and sent only while its expander is open (a closed one
    still mounted the whole table in the browser at every page flip)."""
    table = st.expander("All messages as a table", key="wb_msg_table_open", on_change="rerun")
    if table.open:
        drawer(table).dataframe(view.message_frame(opened.session, opened.estimator), hide_index=True)


def page_picker(session_id: str, n_messages: int) -> tuple[int, int | None]:
    """The page number box and the linked message. A link from another view (``?message=N``,
    e.g. a decision on the Step-through page) opens the page holding message N once; after that
    the box is the user's again. Returns (page, linked message or None)."""
    n_pages = view.page_count(n_messages)
    param = st.query_params.get("message")
    linked = view.linked_message(param)
    if param is not None and linked is None:
        st.warning(query.bad_number("message", param, "the first page"), icon="🔗")
    elif linked is not None and linked >= n_messages:
        st.warning(query.unknown_message(linked, n_messages), icon="🔗")
        linked = None
    if linked is not None and state.get("_wb_msg_linked") != (session_id, linked):
        state.put("_wb_msg_linked", (session_id, linked))
        state.put("wb_msg_page", min(linked // view.PAGE_SIZE + 1, n_pages))
    if linked is not None:
        st.caption(f"Opened from a link to message #{linked} (outlined below).")
        st.html("<style>.st-key-wb_linked_message {outline: 3px solid #2563EB; outline-offset: 2px;}"
                "</style>")
    page = st.number_input(f"Page (of {n_pages}, {view.PAGE_SIZE} messages each)", 1, n_pages,
                           key="wb_msg_page")
    return int(page), linked


def show_conversation(messages: Sequence[view.MessageView], page: int, linked: int | None,
                      subagents: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """One box per message; the lazy expanders are keyed by page and order on the page. A tool
    call that ran a sub-agent (``subagents``, by call id) shows the sub-agent on its card."""
    keys = (f"wb_msg_more_{page}_{n}" for n in itertools.count())
    for msg in messages:
        _show_message(msg, msg.index == linked, keys, subagents or {})


def _lazy_code(label: str, text: str, language: str | None, keys: Iterator[str]) -> None:
    """A collapsed expander whose text is sent to the browser only while it is open (a closed one
    still mounted the whole text: long results made every page flip take seconds)."""
    box = st.expander(label, key=next(keys), on_change="rerun")
    if box.open:
        box.code(text, language=language, wrap_lines=True)


def _show_text(block: view.BlockView, keys: Iterator[str]) -> None:
    """Transcript text as plain text (never markdown or HTML); long text collapsed; a blank block
    said in words."""
    if (blank := view.blank_note(block.text)) is not None:
        st.caption(blank)
        return
    if not block.long:
        st.text(block.text)
        return
    st.text(block.preview + "\n…")
    _lazy_code(f"Show all ({block.size})", block.text, None, keys)


def _show_call(block: view.BlockView, keys: Iterator[str],
               subagents: Mapping[str, Mapping[str, Any]]) -> None:
    st.markdown(f"**Tool call** {view.code_span(block.title)} · {view.code_span(block.call_id)}")
    st.text(block.text)
    if block.call_id is not None and (run := subagents.get(block.call_id)) is not None:
        st.markdown(subagents_view.subagent_card(run))
    result = block.result
    if result is None:
        st.warning("Unanswered: no result was recorded for this call.")
        return
    mark = ":red[**Error**]" if result.is_error else "↳ Result"
    label = f"{mark} (message #{block.result_message}) · {result.size}"
    if result.long:
        _lazy_code(label, result.text, None, keys)
        return
    with st.expander(label, expanded=True):
        st.text(result.text)


def _show_message(msg: view.MessageView, linked: bool, keys: Iterator[str],
                  subagents: Mapping[str, Mapping[str, Any]]) -> None:
    with st.container(border=True, key="wb_linked_message" if linked else None):
        error = " · :red[**error**]" if msg.has_error else ""
        st.markdown(f"**#{msg.index} · {msg.role}**{error}")
        st.caption(view.message_flags(msg))
        if (usage := view.usage_caption(msg)) is not None:
            st.caption(usage)
        for block in msg.blocks:
            if block.kind == "tool_call":
                _show_call(block, keys, subagents)
            elif block.kind == "tool_result" and block.call_message is not None:
                st.caption(f"↳ {view.code_span(block.title)} · {block.size}"
                           + (" · :red[error]" if block.is_error else "") + " — shown with its call")
            else:
                if block.kind != "text":
                    st.caption(view.code_span(block.title))
                _show_text(block, keys)
