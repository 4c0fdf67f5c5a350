"""Templates page: how does an edited prompt template render, and what changes when the replay
uses it? (R-UI-4, R-PRM-3).

The edit lives only in a ``with_template`` snapshot in the session state; nothing is written to
disk until Save, which writes ``<workspace>/<prompts.root>/<id>.j2`` (the root of the Configuration
page's configuration, ``.iris/prompts`` by default). With a replay selected in the
sidebar, the compaction templates render with the variables the engine passed at that replay's
compaction step, and the step (or the whole replay) can be re-run with the edit and compared side
by side (``workbench.services.templates``); re-runs are saved to the store only on "Save edited
replay". The widgets are ``workbench.ui.templates``; the words ``workbench.views.templates``.
"""

from __future__ import annotations

import streamlit as st

from workbench.services.templates import run_edited
from workbench.ui import state
from workbench.ui import templates as ui
from workbench.ui.guards import error_boundary, progress_bar
from workbench.views.templates import broken_template_note, preview_template

st.title("Templates")
st.write("How does an edited prompt template render? Edit it below: the output and the diff update "
         "live, and the edit stays in memory until you press **Save**.")

source, where = ui.editor_workspace()
base, edited = ui.saved_and_edited(source, where)
prompt_id, text = ui.template_editor(edited)
target = ui.find_target()
variables, step = ui.variables_choice(target, prompt_id)
preview = preview_template(base, edited, prompt_id, text, variables=variables)
state.put("tpl_edited", preview.snapshot)
ui.show_status(base, preview)
ui.save_or_discard(source, base, edited, preview, text)
ui.show_preview(preview, variables, step)

# ------------------------------------------------------------------ re-run with the edited snapshot
st.divider()
st.subheader("Re-run with the edited snapshot")
if isinstance(target, str):
    st.info(target)
    st.stop()
plan = ui.rerun_setup(target, preview.snapshot, prompt_id)
blocked = broken_template_note(preview)
for action in ui.rerun_buttons(target.step, blocked=blocked):
    with progress_bar("re-running…") as bar, error_boundary("re-run", message="Re-run failed: {exc}"):
        result = run_edited(target, preview.snapshot, plan.kind, action,
                            progress=ui.step_progress(bar))
        state.keep_result("tpl_rerun", (action, plan.key, result), session_id=target.session_id)

kept = state.session_result("tpl_rerun")  # only this session's re-run
if kept is None:
    st.caption("Press a re-run button to compare the original and the edited snapshot.")
    st.stop()
what, key, result = kept
if key != plan.key:
    st.warning("These results are from an earlier edit, replay or summariser: re-run to refresh.")
if what == "step":
    ui.show_comparison(result)
else:
    ui.show_replay_comparison(target, result)
    ui.save_replay_form(target.store, result, blocked=blocked is not None)
