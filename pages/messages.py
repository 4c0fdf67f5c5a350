"""Messages page (R-SES-1, R-SES-2): what exactly was said in one session — roles, tool calls
with their results, errors, provider usage per response and the local estimate per message; search and filters over them
(``workbench.ui.search``).

The session is read by ``workbench.services.messages``; the words by ``workbench.views.messages``;
the widgets are ``workbench.ui.messages``.
"""

from __future__ import annotations

import streamlit as st

from workbench.services.messages import open_session
from workbench.ui import messages as ui
from workbench.ui import state
from workbench.ui.guards import error_boundary
from workbench.ui.search import show_search
from workbench.views.messages import PAGE_SIZE, conversation

st.title("Messages")
st.caption("What was said in this session, message by message: tool calls with their results, errors, "
           "provider usage per response and the local token estimate per message.")

session_id = state.current_session_id()
if session_id is None:
    st.info("No session selected. Import a transcript or open a sample on the Sessions page.")
    st.stop()

with error_boundary("open this session"), st.spinner("Loading session…"):
    opened = open_session(state.get_store(), session_id)

ui.show_header(opened)
with error_boundary("search this session", stop=False):
    show_search(state.get_store(), session_id, opened.session, replay_id=state.current_replay_id(),
                step=state.current_step())
ui.show_table(opened)
page, linked = ui.page_picker(session_id, len(opened.session.messages))
start = (page - 1) * PAGE_SIZE
ui.show_conversation(conversation(opened.session, opened.estimator, start, start + PAGE_SIZE), page,
                     linked, {run["call_id"]: run for run in opened.subagents})
