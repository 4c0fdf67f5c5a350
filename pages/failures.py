"""Failures page (R-UI-7): which preparations of this replay failed or were cancelled, in which
stage, with what error, and a link that opens each one on the Step-through page."""

from __future__ import annotations

import streamlit as st

from workbench.analysis.words import counted
from workbench.services.replay import open_saved
from workbench.ui.guards import error_boundary, require_replay
from workbench.ui.tables import draw
from workbench.views.failures import failures_table

st.title("Failures")
st.caption("Which preparations did not become ready, where did they stop, and why? Each link "
           "opens that step on the Step-through page.")

store, session_id, replay_id = require_replay()

with error_boundary("read the failures of this replay"):
    replay = open_saved(store, replay_id)
    table = failures_table(replay.steps, session_id=session_id, replay_id=replay_id)

info = replay.info
st.caption(f"{counted(info.step_count, 'step')} · {info.ready_count:,} ready · "
           f"{info.failed_count:,} failed · {info.cancelled_count:,} cancelled")
if table.empty:
    st.success(f"Every one of the {info.step_count:,} preparations of this replay is ready.")
    st.stop()

draw.dataframe(table, hide_index=True, key="failures_table",
               column_config={"link": st.column_config.LinkColumn("open step", display_text="open")})
