"""Templates page: how does an edited prompt template render? (R-UI-4, R-PRM-3).

The edit lives only in a ``with_template`` snapshot in the session state; nothing is written to
disk until Save, which writes ``<workspace>/.iris/prompts/<id>.j2``.
"""

from __future__ import annotations

import streamlit as st
from iris.errors import TemplateError
from iris.prompts import PROMPT_IDS, PROMPT_VARIABLES, PromptSource

from workbench.views.templates import default_workspace, example_variables, preview_template

st.title("Templates")
st.write("How does an edited prompt template render? Edit it below: the output and the diff update "
         "live, and the edit stays in memory until you press **Save**.")

workspace = st.text_input("Workspace", value=str(default_workspace()), key="tpl_workspace").strip()
source = PromptSource(workspace)
st.caption(f"Prompts root: `{source.directory}` "
           f"({len(source.saved_ids())} of {len(PROMPT_IDS)} templates saved there; "
           "the others use the packaged defaults).")

state = st.session_state
if state.get("tpl_loaded_for") != workspace:
    try:
        state["tpl_base"] = source.snapshot()  # the saved snapshot
    except TemplateError as exc:
        st.error(f"A saved template in `{source.directory}` cannot be used: {exc}. "
                 "Fix or delete that file, or choose another workspace.")
        st.stop()
    state["tpl_edited"] = state["tpl_base"]  # the with_template snapshot holding edits
    state["tpl_loaded_for"] = workspace
    for pid in PROMPT_IDS:
        state.pop(f"tpl_src_{pid}", None)
base, edited = state["tpl_base"], state["tpl_edited"]

prompt_id = st.selectbox("Prompt id", PROMPT_IDS, key="tpl_id")
st.caption("Variables provided by the consuming code: "
           + ", ".join(f"`{name}`" for name in PROMPT_VARIABLES[prompt_id]))
text = st.text_area("Template source", value=edited.template_source(prompt_id), height=360,
                    key=f"tpl_src_{prompt_id}")
preview = preview_template(base, edited, prompt_id, text)
state["tpl_edited"] = preview.snapshot

if preview.edited:
    changed = ", ".join(preview.snapshot.edited_ids(base))
    st.warning(f"This view uses an **edited snapshot** (not saved): {changed}. "
               f"Snapshot `{preview.snapshot.snapshot_id[:19]}…`")
else:
    st.success(f"This view uses the **saved snapshot** `{base.snapshot_id[:19]}…`")

save_col, discard_col = st.columns(2)
if save_col.button("Save to workspace", key="tpl_save",
                   disabled=preview.error is not None or not preview.diff):
    path = source.save(prompt_id, text)
    state["tpl_base"] = base = base.with_template(prompt_id, text)
    st.toast(f"Saved {path}")
    st.rerun()
if discard_col.button("Discard edit", key="tpl_discard", disabled=not preview.diff):
    state["tpl_edited"] = edited.with_template(prompt_id, base.template_source(prompt_id))
    state.pop(f"tpl_src_{prompt_id}", None)
    st.rerun()

out_col, diff_col = st.columns(2)
with out_col:
    st.subheader("Rendered with example variables")
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
with st.expander("Example variables"):
    st.json(example_variables(prompt_id))
