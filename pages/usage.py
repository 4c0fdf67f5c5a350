"""Usage page (R-UI-5, R-TOK-6): how does the local estimate of each replayed request compare
with what the provider reported, and how close did each step come to the pressure line?

The replay is read by ``workbench.services.usage``; the words, tables and figures are
``workbench.views.usage`` and ``workbench.views.recorded``; the widgets are ``workbench.ui.usage``.
"""

from __future__ import annotations

import streamlit as st

from workbench.services.costs import saved_cost_lines
from workbench.services.sessions import session_header
from workbench.services.usage import open_usage
from workbench.ui import usage as ui
from workbench.ui.guards import error_boundary, require_replay
from workbench.ui.messages import request_notice

st.title("Usage")
st.caption("Does the estimate match what the provider counted, and where did the replay and the "
           "agent compact? The provider's count and the **as-recorded estimate** describe the "
           "same request (what the agent really sent); the **replayed request** is what this "
           "replay would send. `≈` marks a frozen estimate (hollow markers); dashed lines are "
           "the pressure and reminder lines; the thin line is the value the compaction trigger "
           "compared; diamonds mark the replay's compactions, stars on a dash-dot line the "
           "agent's recorded ones.")

store, session_id, replay_id = require_replay()

with error_boundary("read the usage of this replay"):
    opened = open_usage(store, session_id, replay_id)

if not opened.steps:
    st.info("This replay has no steps: the session has no assistant response.")
    st.stop()

header = session_header(store, session_id)
request_notice(header.agent_id, header.parent_id)
ui.show_figures(opened)
ui.show_charts(opened)
ui.show_cost(saved_cost_lines(store, session_id, replay_id))

st.markdown("#### Share")
st.caption("One self-contained HTML file with these charts, the stage table, the compaction cut "
           "points and the failed preparations; it opens offline (`workbench report` does the "
           "same from the command line).")
ui.report_button(store, replay_id, f"{session_id}-{opened.replay.info.name}")
