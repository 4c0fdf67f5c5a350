"""Messages page: what exactly was said in one session — roles, tool calls with their results,
errors, provider usage per response and the local estimate per message."""

from __future__ import annotations

import itertools
import math

import streamlit as st
from iris.tokens import default_estimator

from workbench import state
from workbench.views import messages as view

PAGE_SIZE = 20  # the browser lays out every block of a page at each flip: 40 took over a second

st.title("Messages")
st.caption("What was said in this session, message by message: tool calls with their results, errors, "
           "provider usage per response and the local token estimate per message.")

session_id = state.current_session_id()
if session_id is None:
    st.info("No session selected. Import a transcript or open a sample on the Sessions page.")
    st.stop()


store = state.get_store()
summary = store.get_summary(session_id)
with st.spinner("Loading session…"):
    session = store.session(session_id)
estimator = default_estimator()
index = session.index
usage = [m.usage.prompt_tokens for m in session.messages if m.usage is not None]

st.subheader(summary.title)
cols = st.columns(6)
cols[0].metric("Messages", len(session.messages))
cols[1].metric("Responses", len(index.batches))
cols[2].metric("Tool calls", len(index.calls))
cols[3].metric("Unanswered", len(index.unanswered_calls))
cols[4].metric("Estimated tokens", f"{store.session_tokens(session_id, session.messages, estimator):,}")
cols[5].metric("Max prompt (provider)", f"{max(usage):,}" if usage else "—")

# The table of every message is built and sent only while its expander is open: a closed one
# still mounted the whole table in the browser at every page flip.
table = st.expander("All messages as a table", key="wb_msg_table_open", on_change="rerun")
if table.open:
    table.dataframe(view.message_frame(session, estimator), hide_index=True)

n_pages = max(1, math.ceil(len(session.messages) / PAGE_SIZE))
# A link from another view (``?message=N``, e.g. a decision on the Step-through page) opens the
# page holding message N once; after that the page box is the user's again.
linked_param = st.query_params.get("message")
linked = int(linked_param) if linked_param and linked_param.isdigit() else None
if linked is not None and state.get("_wb_msg_linked") != (session_id, linked):
    state.put("_wb_msg_linked", (session_id, linked))
    state.put("wb_msg_page", min(linked // PAGE_SIZE + 1, n_pages))
if linked is not None and linked < len(session.messages):
    st.caption(f"Opened from a link to message #{linked} (outlined below).")
    st.html("<style>.st-key-wb_linked_message {outline: 3px solid #2563EB; outline-offset: 2px;}"
            "</style>")
page = st.number_input(f"Page (of {n_pages}, {PAGE_SIZE} messages each)", 1, n_pages, key="wb_msg_page")
start = (page - 1) * PAGE_SIZE


def code_span(text: str | None) -> str:
    """Inline code for transcript-provided names (backticks removed so they cannot break out)."""
    return "`" + (text or "").replace("`", "'") + "`"


def show_text(block: view.BlockView, language: str | None = None) -> None:
    """Transcript text is rendered as code (never markdown or HTML); long text is collapsed."""
    if not block.long:
        st.code(block.text, language=language, wrap_lines=True)
        return
    st.code(block.preview + "\n…", language=language, wrap_lines=True)
    lazy_code(f"Show all ({block.size})", block.text, language)


_lazy_keys = itertools.count()


def lazy_code(label: str, text: str, language: str | None) -> None:
    """A collapsed expander whose text is sent to the browser only while it is open (a closed one
    still mounted the whole text: long results made every page flip take seconds)."""
    box = st.expander(label, key=f"wb_msg_more_{page}_{next(_lazy_keys)}", on_change="rerun")
    if box.open:
        box.code(text, language=language, wrap_lines=True)


def show_call(block: view.BlockView) -> None:
    st.markdown(f"**Tool call** {code_span(block.title)} · {code_span(block.call_id)}")
    st.code(block.text, language="json", wrap_lines=True)
    result = block.result
    if result is None:
        st.warning("Unanswered: no result was recorded for this call.")
        return
    mark = ":red[**Error**]" if result.is_error else "↳ Result"
    label = f"{mark} (message #{block.result_message}) · {result.size}"
    if result.long:
        lazy_code(label, result.text, None)
        return
    with st.expander(label, expanded=True):
        st.code(result.text, language=None, wrap_lines=True)


def show_message(msg: view.MessageView) -> None:
    with st.container(border=True, key="wb_linked_message" if msg.index == linked else None):
        flags = [f"batch {msg.batch}" if msg.batch is not None else "before the first response",
                 f"≈ {msg.estimate:,} tokens (local estimate)"]
        if msg.model:
            flags.append(code_span(msg.model))
        if msg.synthetic:
            flags.append("injected")
        if msg.is_compaction_summary:
            flags.append("compaction summary")
        if msg.compaction_provided:
            flags.append("provided by the recorded compaction (a kept copy, not a response)")
        error = " · :red[**error**]" if msg.has_error else ""
        st.markdown(f"**#{msg.index} · {msg.role}**{error}")
        st.caption(" · ".join(flags))
        if msg.usage is not None:
            u = msg.usage
            st.caption(f"Provider usage: prompt {u.prompt_tokens:,} (input {u.input_tokens:,} + cache read "
                       f"{u.cache_read_tokens:,} + cache write {u.cache_write_tokens:,}) · output "
                       f"{u.output_tokens:,} · raw {code_span(u.raw)}")
        elif msg.role == "assistant" and not msg.compaction_provided:
            st.caption("Provider usage: not recorded")
        for block in msg.blocks:
            if block.kind == "tool_call":
                show_call(block)
            elif block.kind == "tool_result" and block.call_message is not None:
                st.caption(f"↳ {code_span(block.title)} · {block.size}"
                           + (" · :red[error]" if block.is_error else "") + " — shown with its call")
            else:
                if block.kind != "text":
                    st.caption(code_span(block.title))
                show_text(block)


for message in view.conversation(session, estimator, start, start + PAGE_SIZE):
    show_message(message)
