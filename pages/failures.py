"""Failures page (R-UI-7): which preparations of this replay failed or were cancelled, in which
stage, with what error, and a link that opens each one on the Step-through page."""

from __future__ import annotations

import traceback

import streamlit as st

from workbench import state
from workbench.replay_service import open_saved
from workbench.views.failures import failures_table

st.title("Failures")
st.caption("Which preparations did not become ready, where did they stop, and why? Each link "
           "opens that step on the Step-through page.")

store = state.get_store()
session_id, replay_id = state.current_session_id(), state.current_replay_id()
if session_id is None:
    st.info("No session yet: import a transcript or open a sample on the Sessions page.", icon="👋")
    st.stop()
if replay_id is None:
    st.info("This session has no replay yet: it is made when the session is opened (see the "
            "sidebar), or run `workbench replay SESSION_ID --name default`.")
    st.stop()

try:
    replay = open_saved(store, replay_id)
    table = failures_table(replay.steps, session_id=session_id, replay_id=replay_id)
except Exception as exc:  # noqa: BLE001 - the UI boundary: message, traceback on demand
    st.error(f"Could not read the failures of this replay: {exc}")
    with st.expander("Traceback (for developers)"):
        st.code(traceback.format_exc(), language=None)
    st.stop()

info = replay.info
st.caption(f"{info.step_count} steps · {info.ready_count} ready · {info.failed_count} failed · "
           f"{info.cancelled_count} cancelled")
if table.empty:
    st.success(f"Every one of the {info.step_count} preparations of this replay is ready.")
    st.stop()

st.dataframe(table, hide_index=True, key="failures_table",
             column_config={"link": st.column_config.LinkColumn("open step", display_text="open")})
