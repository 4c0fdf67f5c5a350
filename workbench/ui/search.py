"""The Messages page's search and filters (the words and the frame are ``workbench.views.search``):
find text, tool names, file paths and errors, filter by role, tool, error and what the sidebar's
replay did with each message at the sidebar's step, with counts and a link to each hit's step."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st
from iris.session import Session

from workbench.services.step_through import open_step
from workbench.storage.store import Store
from workbench.ui.tables import draw
from workbench.views import search as view

__all__ = ["search_panel", "show_search"]


def show_search(store: Store, session_id: str, session: Session, *, replay_id: str | None,
                step: int | None) -> None:
    """The search panel over ``session``, its states read from the step's request of the replay."""
    states = None
    if replay_id is not None and step is not None:
        at_step = open_step(store, session_id, replay_id, step)
        states = view.message_states(at_step.request, at_step.prep.response_message_index,
                                     len(session.messages))
    blocks = store.cached(session_id, "search blocks", lambda: view.block_frame(session))
    search_panel(blocks, session_id=session_id, replay_id=replay_id, states=states, step=step)


def search_panel(blocks: pd.DataFrame, *, session_id: str, replay_id: str | None,
                 states: Mapping[int, str] | None, step: int | None) -> None:
    """The search box, the filters and, once any is set, what they find."""
    st.markdown("#### Search")
    text = st.text_input("Find text, a tool name, a file path or an error message", key="wb_search_text",
                         placeholder="e.g. pytest, Read, src/app.py, Traceback")
    role_box, tool_box, state_box, error_box = st.columns([1, 1, 1.4, 0.8])
    roles = role_box.multiselect("Role", sorted(set(blocks["role"])), key="wb_search_roles")
    tools = tool_box.multiselect("Tool", sorted(t for t in set(blocks["tool"]) if t),
                                 key="wb_search_tools")
    label = (f"At step {step} of this replay" if states is not None and step is not None
             else "At a step (pick a replay)")
    chosen_states = state_box.multiselect(label, view.STATES, key="wb_search_states",
                                          disabled=states is None)
    errors = error_box.toggle("Errors only", key="wb_search_errors")
    query = view.SearchQuery(text=text.strip(), roles=tuple(roles), tools=tuple(tools),
                             errors_only=errors, states=tuple(chosen_states))
    if query == view.SearchQuery():
        return
    found = view.search(blocks, query, states=states, session_id=session_id, replay_id=replay_id)
    st.caption(view.counts_caption(found))
    if not found.empty:
        draw.dataframe(found, hide_index=True, key="wb_search_found", column_config={
            "link": st.column_config.LinkColumn(
                "open", display_text="step ›" if replay_id else "message ›"),
            "match": st.column_config.TextColumn("match", width="large")})
