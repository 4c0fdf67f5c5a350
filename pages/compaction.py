"""Compaction page (R-UI-3): where did each compaction cut, what was kept raw, archived, summarised
or retained verbatim, which attempts were rejected and why, and what history-N.md holds.

The replay is read by ``workbench.services.compaction``; the words, tables and figures are
``workbench.views.compaction`` and ``workbench.views.recorded``; the widgets are
``workbench.ui.compaction``.
"""

from __future__ import annotations

import streamlit as st

from workbench.services.compaction import open_compaction
from workbench.ui import compaction as ui
from workbench.ui.fidelity import show_losses
from workbench.ui.guards import error_boundary, require_replay
from workbench.views.compaction import COMPACTION_KINDS, replay_bands

st.title("Compaction")
st.caption("Where did compaction cut the history, and what happened to each message? One band per "
           "compaction of the selected replay; the red line is the cut point.")

store, session_id, replay_id = require_replay()

with error_boundary("read the compactions of this replay"):
    opened = open_compaction(store, session_id, replay_id, COMPACTION_KINDS)
    bands = replay_bands(opened.replay.checkpoints, request_at=opened.request_at,
                         session_messages=opened.originals, checkpoints=opened.checkpoint_texts())

ui.show_answer(opened)
if not opened.decisions:
    st.info("No compaction was planned in this replay: every request stayed below the pressure "
            "line. Pick another replay in the sidebar (e.g. `budget 96k`), or replay with a "
            "smaller `compaction.input_budget_tokens`.")
    show_losses(opened.losses.all, session_id=session_id, replay_id=replay_id)
    st.stop()
ui.show_decisions(opened, bands)
if opened.archives:
    ui.show_archives(opened.archives)
show_losses(opened.losses.all, session_id=session_id, replay_id=replay_id)
