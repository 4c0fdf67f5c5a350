"""Reduction page: what did the replay decide about each tool output at this step, and why?

Thin page: the session, replay and step come from the shared sidebar (``workbench.ui.state``); the
tables are the selected replay's own records, built by ``workbench.views.reduction`` (nothing is
reduced again here, so this page and Step-through always agree).
"""

from __future__ import annotations

import streamlit as st

from workbench.analysis.words import counted
from workbench.services.replay import open_saved
from workbench.services.sessions import stored_session
from workbench.ui.guards import error_boundary, require_replay
from workbench.ui.state import current_step
from workbench.ui.tables import draw
from workbench.views.markup import code_span
from workbench.views.reduction import (
    decisions_in_effect,
    earlier_records,
    reduction_totals,
    stage_notes,
    step_decisions,
    tool_kind_table,
)

st.title("Reduction")
st.write("What did the replay decide about each tool output at this step, and why? The decisions "
         "the replay recorded at the selected step (the same records as Step-through), with the "
         "rule and numbers of each, then the earlier decisions that still shape this request.")

store, session_id, replay_id = require_replay()
with error_boundary("read this step's decisions"):
    replay = open_saved(store, replay_id)
    step = min(current_step() or 0, len(replay) - 1)
    prep = replay.preparation(step)
    request = replay.request(prep.final_request_ref) if prep.final_request_ref else None
    table = step_decisions(prep)
    earlier = decisions_in_effect(prep, request, earlier_records(replay, prep, request))
    session = stored_session(store, session_id)

NUMBER = st.column_config.NumberColumn
COLUMN_CONFIG = {c: NUMBER(c, format="localized") for c in
                 ("tokens before", "tokens after", "saved tokens")} | {
    "what": st.column_config.TextColumn(width="large"),
    "reason": st.column_config.TextColumn(width="large")}
st.caption(f"Step {step} of {len(replay) - 1} · replay {code_span(replay.info.name)} · response message "
           f"#{prep.response_message_index} · {counted(len(table), 'decision')} at this step · "
           f"{counted(len(earlier), 'earlier decision')} in effect")
st.markdown("#### Decisions of this step")
if table.empty:
    st.info("The replay recorded no reduction decision at this step (nothing new to decide, or "
            "no tool result yet). Earlier decisions that still apply are listed below.")
    for note in stage_notes(prep):
        st.caption(note)
else:
    totals = reduction_totals(table)
    for col, row in zip(st.columns(len(totals)), totals.to_dict("records")):
        saved = row["saved tokens"]
        col.metric(str(row["decision"]), f"{row['results']}",
                   f"−{saved:,} tokens" if saved else None, delta_color="off")
    draw.dataframe(table, hide_index=True, key="red_table", column_config=COLUMN_CONFIG)
st.markdown("#### Earlier decisions still in effect")
st.caption("The replay reduces incrementally: a result decided at an earlier step keeps that "
           "decision. One row per shortened result of this step's request, with the step that "
           "decided it.")
if earlier.empty:
    st.info("No result of this request was shortened at an earlier step.")
else:
    draw.dataframe(earlier, hide_index=True, key="red_earlier", column_config=COLUMN_CONFIG)
with st.expander("Tool-kind mapping of this session"):
    draw.dataframe(tool_kind_table(session), hide_index=True)
