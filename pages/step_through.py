"""Step-through page (R-UI-2, UX.md "the heart"): one preparation, stage by stage, with every
decision and the final request as it would be sent.

The step is read by ``workbench.services.step_through``; the words by ``workbench.views.step_page``
and ``workbench.views.step_through``; the widgets are ``workbench.ui.step_through``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from workbench.services.fidelity import step_losses
from workbench.services.messages import subagent_calls
from workbench.services.sessions import unplaced_count
from workbench.services.step_through import open_step, step_timeline
from workbench.ui import step_through as ui
from workbench.ui.breakdown import show_breakdown
from workbench.ui.fidelity import show_compaction_loss
from workbench.ui.guards import error_boundary, require_step
from workbench.ui.messages import unplaced_warning
from workbench.views import step_page as view
from workbench.views.step_through import focus_messages, request_messages, stage_table

st.title("Step-through")
st.caption("What did the preparation of this step decide, and why? Pick a session, a replay and a "
           "step in the sidebar (◀ ▶ or Shift+Left / Shift+Right move one step).")

store, session_id, replay_id, step = require_step()
with error_boundary(f"open step {step} of this replay"):
    opened = open_step(store, session_id, replay_id, step)
prep, request, replay = opened.prep, opened.request, opened.replay

ui.timeline_map(lambda: step_timeline(store, session_id, replay, view.timeline_spec), step)
ui.show_header(view.header_text(prep, len(replay), replay.thresholds))
unplaced_warning(unplaced_count(store, session_id))
show_breakdown(store, session_id, opened, step)
ui.show_stages(stage_table(prep))
ui.show_why(view.stage_whys(prep, session_id), session_id)
for lost in step_losses(store, session_id, replay, step):
    show_compaction_loss(lost, session_id=session_id, replay_id=replay_id)

st.markdown("#### Final request")
if request is None:
    st.info("No final request: this step did not become ready.")
    st.stop()
shown = request_messages(request, opened.originals)
ui.show_overview(view.request_caption(prep, request, shown), shown)
mode, only_changed, full = ui.message_controls()
if mode == "Page by page":
    visible = ui.page_by_page(shown, step, only_changed)
else:
    visible, left_out = focus_messages(prep, shown, last=view.LAST, cap=view.PAGE_SIZE)
    if (note := view.focus_caption(len(visible), len(shown), left_out)) is not None:
        st.caption(note)
runs: dict[int, list[dict[str, Any]]] = {}
for run in subagent_calls(store, session_id).values():
    if run["message"] is not None:
        runs.setdefault(run["message"], []).append(run)
ui.show_messages(visible, step, full=full, subagents=runs)
