"""Templates page: how does an edited prompt template render, and what changes when the replay
uses it? (R-UI-4, R-PRM-3).

The edit lives only in a ``with_template`` snapshot in the session state; nothing is written to
disk until Save, which writes ``<workspace>/<prompts.root>/<id>.j2`` (the root of the Configuration
page's configuration, ``.iris/prompts`` by default). With a replay selected in the
sidebar, the compaction templates render with the variables the engine passed at that replay's
compaction step, and the step (or the whole replay) can be re-run with the edit and compared side
by side (``workbench.services.templates``); re-runs are saved to the store only on "Save edited
replay".
"""

from __future__ import annotations

from typing import Literal

import streamlit as st
from iris.errors import TemplateError, WorkbenchError
from iris.prompts import PROMPT_IDS, PROMPT_VARIABLES, PromptSource

from workbench import state as wb_state
from workbench.page_guards import error_boundary
from workbench.services.replay import save_replay_result
from workbench.services.rerun import (
    ENGINE_RENDERED_IDS,
    StepComparison,
    endpoint_status,
    summariser_options,
    with_engine_templates,
)
from workbench.services.templates import default_workspace, rerun_target, run_edited
from workbench.services.truth import session_marks
from workbench.views.compare import compare_figure, totals_table
from workbench.views.display import display_frame
from workbench.views.templates import (
    editor_prompts_root,
    example_variables,
    preview_template,
    rerun_table,
)

st.title("Templates")
st.write("How does an edited prompt template render? Edit it below: the output and the diff update "
         "live, and the edit stays in memory until you press **Save**.")

workspace = st.text_input("Workspace", value=str(default_workspace()), key="tpl_workspace").strip()
root = st.text_input("Prompts root (prompts.root, relative to the workspace)",
                     value=editor_prompts_root(wb_state.get("cfg_yaml")),
                     key="tpl_root").strip() or ".iris/prompts"
source = PromptSource(workspace, root)
st.caption(f"Prompts root: `{source.directory}` "
           f"({len(source.saved_ids())} of {len(PROMPT_IDS)} templates saved there; "
           "the others use the packaged defaults).")

if wb_state.get("tpl_loaded_for") != (workspace, root):
    try:
        wb_state.put("tpl_base", source.snapshot())  # the saved snapshot
    except TemplateError as exc:
        st.error(f"A saved template in `{source.directory}` cannot be used: {exc}. "
                 "Fix or delete that file, or choose another workspace.")
        st.stop()
    wb_state.put("tpl_edited", wb_state.get("tpl_base"))  # the snapshot holding edits
    wb_state.put("tpl_loaded_for", (workspace, root))
    wb_state.forget(*(f"tpl_src_{pid}" for pid in PROMPT_IDS))
base, edited = wb_state.get("tpl_base"), wb_state.get("tpl_edited")

prompt_id = st.selectbox("Prompt id", PROMPT_IDS, key="tpl_id")
st.caption("Variables provided by the consuming code: "
           + ", ".join(f"`{name}`" for name in PROMPT_VARIABLES[prompt_id]))
text = st.text_area("Template source", value=edited.template_source(prompt_id), height=360,
                    key=f"tpl_src_{prompt_id}")

try:
    with st.spinner("Walking the selected replay to its compaction step…"):
        target = rerun_target(wb_state.get_store(), wb_state.current_replay_id(),
                              wb_state.current_session_id(), wb_state.current_step())
except Exception as exc:  # noqa: BLE001 - the page still edits and previews
    target = f"Could not walk the selected replay: {exc}"
real_vars, real_step = None, None
if not isinstance(target, str) and prompt_id in target.original.variables:
    step_words = f"the variables of step {target.step} (replay {target.replay_name})"
    choice = st.radio("Render with", ("step", "example"), horizontal=True, key="tpl_vars",
                      format_func=lambda c: step_words if c == "step" else "example variables")
    if choice == "step":
        real_vars, real_step = dict(target.original.variables[prompt_id]), target.step
preview = preview_template(base, edited, prompt_id, text, variables=real_vars)
wb_state.put("tpl_edited", preview.snapshot)

if preview.edited:
    changed = ", ".join(preview.snapshot.edited_ids(base))
    st.warning(f"This view uses an **edited snapshot** (not saved): {changed}. "
               f"Snapshot `{preview.snapshot.snapshot_id[:19]}…`")
else:
    st.success(f"This view uses the **saved snapshot** `{base.snapshot_id[:19]}…`")

save_col, discard_col = st.columns(2)
if save_col.button("Save to workspace", key="tpl_save",
                   disabled=preview.error is not None or not preview.diff):
    try:
        path = source.save(prompt_id, text)
    except WorkbenchError as exc:  # e.g. a symbolic link planted in the prompts folder
        st.error(f"Not saved: {exc}")
    else:
        wb_state.put("tpl_base", base.with_template(prompt_id, text))
        st.toast(f"Saved {path}")
        st.rerun()
if discard_col.button("Discard edit", key="tpl_discard", disabled=not preview.diff):
    wb_state.put("tpl_edited", edited.with_template(prompt_id, base.template_source(prompt_id)))
    wb_state.forget(f"tpl_src_{prompt_id}")
    st.rerun()

out_col, diff_col = st.columns(2)
with out_col:
    st.subheader("Rendered with example variables" if real_vars is None
                 else f"Rendered with the variables of step {real_step}")
    if preview.error is not None:
        st.error(preview.error)
    else:
        st.code(preview.rendered, language=None, wrap_lines=True)
with diff_col:
    st.subheader("Diff against the saved template")
    if preview.diff:
        st.code(preview.diff, language="diff", wrap_lines=True)
    else:
        st.caption("No changes.")
with st.expander("Example variables" if real_vars is None else "Variables of this step"):
    st.json(example_variables(prompt_id) if real_vars is None else real_vars)

# ------------------------------------------------------------------ re-run with the edited snapshot
st.divider()
st.subheader("Re-run with the edited snapshot")
if isinstance(target, str):
    st.info(target)
    st.stop()
store, step, inputs = target.store, target.step, target.inputs
if prompt_id not in ENGINE_RENDERED_IDS:
    st.caption(f"The engine renders only {', '.join(f'`{i}`' for i in ENGINE_RENDERED_IDS)} during "
               f"a replay; an edit of `{prompt_id}` does not change a replay.")
edited_run = with_engine_templates(inputs.snapshot, preview.snapshot)
selected = wb_state.current_step()
st.write(f"Compaction step **{step}** of replay **{target.replay_name}** "
         f"(stage {target.original.status})" + ("" if selected in (None, step) else
                                         f"; the nearest compaction to the selected step {selected}")
         + ". Both sides walk the same history; only the template snapshot differs.")
st.caption(f"OpenAI-compatible summary endpoint: {endpoint_status()}.")
kind = st.radio("Summariser", summariser_options(inputs.session), horizontal=True,
                key="tpl_summariser", format_func=lambda k: {
                    "extractive": "extractive (offline: ignores the prompt, so checkpoints match)",
                    "recorded": "recorded (the session's own summaries)",
                    "remote": "remote (the configured endpoint writes a new summary)"}[k])
changed = edited_run.edited_ids(inputs.snapshot)
if changed:
    st.caption("The edited side uses this page's "
               + ", ".join(f"`{i}`" for i in changed) + " (edited or saved in the workspace); "
               "the original side uses the replay's own templates.")
else:
    st.caption("This page's compaction templates are the replay's own: both sides will be "
               "identical until you edit one.")
run_key = (target.replay_id, step, edited_run.snapshot_id, kind)


def progress_bar():
    bar = st.progress(0.0, text="re-running…")
    return bar, lambda done, total: bar.progress(min(done / max(total, 1), 1.0),
                                                 text=f"step {done:,} of {total:,}")


step_col, all_col = st.columns(2)
pressed = (step_col.button(f"Re-run step {step}", key="tpl_rerun_step", type="primary"),
           all_col.button("Re-run the whole replay", key="tpl_rerun_all"))
actions: list[Literal["step", "replay"]] = [
    action for action, on in zip(("step", "replay"), pressed, strict=True) if on]
for action in actions:
    bar, report = progress_bar()
    with error_boundary("re-run", message="Re-run failed: {exc}"):
        result = run_edited(target, preview.snapshot, kind, action, progress=report)
        wb_state.keep_result("tpl_rerun", (action, run_key, result), session_id=target.session_id)
    bar.empty()


def show_comparison(cmp: StepComparison) -> None:
    """Rendered prompt diff, checkpoint diff, tokens and the success condition, side by side."""
    st.table(rerun_table(cmp).set_index(""))
    st.markdown("##### Rendered summary request: diff")
    if cmp.prompt_diff:
        st.code(cmp.prompt_diff, language="diff", wrap_lines=True)
    else:
        st.caption("The rendered summary request is identical.")
    left, right = st.columns(2)
    for col, side in ((left, cmp.original), (right, cmp.edited)):
        with col.expander(f"{side.label}: summary request ({len(side.summary_request):,} chars)"):
            st.code(side.summary_request or "(not rendered at this step)", language=None,
                    wrap_lines=True)
    st.markdown("##### Checkpoint: diff")
    if cmp.checkpoint_diff:
        st.code(cmp.checkpoint_diff, language="diff", wrap_lines=True)
    else:
        st.caption("The checkpoint text is identical"
                   + (": the extractive summariser reads the messages, not the prompt."
                      if cmp.edited.summariser == "extractive" else "."))
    left, right = st.columns(2)
    for col, side in ((left, cmp.original), (right, cmp.edited)):
        with col.expander(f"{side.label}: checkpoint ({len(side.checkpoint_text):,} chars)"):
            st.code(side.checkpoint_text or side.summary_text or "(no checkpoint)",
                    language="markdown", wrap_lines=True)


kept = wb_state.session_result("tpl_rerun")  # only this session's re-run
if kept is None:
    st.caption("Press a re-run button to compare the original and the edited snapshot.")
    st.stop()
what, key, result = kept
if key != run_key:
    st.warning("These results are from an earlier edit, replay or summariser: re-run to refresh.")
if what == "step":
    show_comparison(result)
    st.stop()
st.plotly_chart(compare_figure([result.original, result.edited],
                               recorded=session_marks(store, target.session_id)),
                key="tpl_rerun_chart")
st.dataframe(display_frame(totals_table([result.original, result.edited])), hide_index=True,
             key="tpl_rerun_totals")
if result.steps:
    labels = {c.step_index: f"step {c.step_index}: {c.original.status} → {c.edited.status}"
              for c in result.steps}
    chosen = st.selectbox("Compaction step", list(labels), format_func=labels.get,
                          key="tpl_rerun_pick")
    show_comparison(next(c for c in result.steps if c.step_index == chosen))
else:
    st.caption("Neither replay entered compaction.")
name = st.text_input("Save the edited replay as", key="tpl_replay_name",
                     value=f"templates {result.edited.template_snapshot_id[7:15]}")
if st.button("Save edited replay", key="tpl_save_replay", disabled=not name.strip()):
    try:
        info = save_replay_result(store, result.edited_bundle, name=name.strip(),
                                  session_id=wb_state.current_session_id() or "",
                                  computed_for=result.session_id)
    except WorkbenchError as exc:
        st.error(f"Not saved: {exc}")
    else:
        st.success(f"Saved replay **{info.name}** with template snapshot "
                   f"`{(info.template_snapshot_id or '')[:19]}…` (kept in the store); pick it in the sidebar.")
