"""The Templates page's parts (R-UI-4, R-PRM-3): the workspace and the editor, the live preview
with Save and Discard, and the re-run comparison of the original and the edited snapshot.

Session state goes through ``workbench.ui.state``: ``tpl_base`` (the saved snapshot), ``tpl_edited``
(the snapshot holding edits), ``tpl_loaded_for`` (the workspace and root they were read from) and
the editor's ``tpl_src_<id>`` widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import streamlit as st
from iris.errors import IrisError, TemplateError
from iris.prompts import PROMPT_IDS, PromptSnapshot, PromptSource

from workbench.analysis.summariser_info import summariser_info, templates_ignored
from workbench.services.rerun import (
    ENGINE_RENDERED_IDS,
    ReplayComparison,
    StepComparison,
    StepOutcome,
)
from workbench.services.summarisers import (
    endpoint_status,
    own_summariser_index,
    summariser_options,
)
from workbench.services.templates import (
    RerunPlan,
    RerunTarget,
    default_workspace,
    rerun_plan,
    rerun_target,
    save_edited_replay,
    save_template,
)
from workbench.services.truth import session_marks
from workbench.ui import state
from workbench.ui.fidelity import show_loss_pair
from workbench.ui.tables import draw
from workbench.views.compare import compare_figure, totals_table
from workbench.views.display import display_frame
from workbench.views.markup import code_span, plain
from workbench.views.templates import (
    SUMMARISER_LABELS,
    TemplatePreview,
    checkpoint_same_caption,
    default_replay_name,
    edited_sides_caption,
    editor_prompts_root,
    engine_only_note,
    example_variables,
    rendered_heading,
    rerun_intro,
    rerun_table,
    saved_replay_message,
    snapshot_status,
    source_caption,
    step_labels,
    variables_caption,
)
from workbench.views.vega import vega_lite

__all__ = ["editor_workspace", "find_target", "rerun_buttons", "rerun_setup", "save_or_discard",
           "save_replay_form", "saved_and_edited", "show_comparison", "show_preview",
           "show_replay_comparison", "show_status", "step_progress", "template_editor",
           "variables_choice"]

Action = Literal["step", "replay"]


def editor_workspace() -> tuple[PromptSource, tuple[str, str]]:
    """The workspace and prompts root inputs (the root defaults to the Configuration page's
    ``prompts.root``) with a caption; returns the source and the (workspace, root) typed."""
    workspace = st.text_input("Workspace", value=str(default_workspace()),
                              key="tpl_workspace").strip()
    root = st.text_input("Prompts root (prompts.root, relative to the workspace)",
                         value=editor_prompts_root(state.get("cfg_yaml")),
                         key="tpl_root").strip() or ".iris/prompts"
    source = PromptSource(workspace, root)
    st.caption(source_caption(source.directory, len(source.saved_ids())))
    return source, (workspace, root)


def saved_and_edited(source: PromptSource, where: tuple[str, str]
                     ) -> tuple[PromptSnapshot, PromptSnapshot]:
    """The saved snapshot and the one holding edits, read again (edits dropped) when the
    workspace or root changed; a broken saved template stops the page with an error."""
    if state.get("tpl_loaded_for") != where:
        try:
            state.put("tpl_base", source.snapshot())
        except TemplateError as exc:
            st.error(f"A saved template in {code_span(source.directory)} cannot be used: {plain(exc)}. "
                     "Fix or delete that file, or choose another workspace.")
            st.stop()
        state.put("tpl_edited", state.get("tpl_base"))
        state.put("tpl_loaded_for", where)
        state.forget(*(f"tpl_src_{pid}" for pid in PROMPT_IDS))
    return state.get("tpl_base"), state.get("tpl_edited")


def template_editor(edited: PromptSnapshot) -> tuple[str, str]:
    """The prompt id picker and the source editor (one widget per id); returns (id, source)."""
    prompt_id: str = st.selectbox("Prompt id", PROMPT_IDS, key="tpl_id")
    st.caption(variables_caption(prompt_id))
    text = st.text_area("Template source", value=edited.template_source(prompt_id), height=360,
                        key=f"tpl_src_{prompt_id}")
    return prompt_id, text


def find_target() -> RerunTarget | str:
    """The sidebar replay's compaction step nearest the selected step, or why there is none (an
    error while walking the replay is a reason too: the page still edits and previews)."""
    try:
        with st.spinner("Walking the selected replay to its compaction step…"):
            return rerun_target(state.get_store(), state.current_replay_id(),
                                state.current_session_id(), state.current_step())
    except Exception as exc:  # noqa: BLE001 - the page still edits and previews
        return f"Could not walk the selected replay: {exc}"


def variables_choice(target: RerunTarget | str, prompt_id: str
                     ) -> tuple[dict[str, Any] | None, int | None]:
    """(variables, step) the preview renders with: the step's own when the engine rendered
    ``prompt_id`` there and the user keeps "step", else (None, None) for the examples."""
    if isinstance(target, str) or prompt_id not in target.original.variables:
        return None, None
    step_words = f"the variables of step {target.step} (replay {target.replay_name})"
    choice = st.radio("Render with", ("step", "example"), horizontal=True, key="tpl_vars",
                      format_func=lambda c: step_words if c == "step" else "example variables")
    if choice != "step":
        return None, None
    return dict(target.original.variables[prompt_id]), target.step


def show_status(base: PromptSnapshot, preview: TemplatePreview) -> None:
    """Which snapshot this view uses: edited (a warning) or saved."""
    edited, sentence = snapshot_status(base, preview)
    (st.warning if edited else st.success)(sentence)


def save_or_discard(source: PromptSource, base: PromptSnapshot, edited: PromptSnapshot,
                    preview: TemplatePreview, text: str) -> None:
    """Save writes the edit to the workspace (a refusal is one error line); Discard restores the
    saved template in the editor. Either draws the page again."""
    prompt_id = preview.prompt_id
    save_col, discard_col = st.columns(2)
    if save_col.button("Save to workspace", key="tpl_save",
                       disabled=preview.error is not None or not preview.diff):
        try:
            path, saved = save_template(source, base, prompt_id, text)
        except IrisError as exc:  # e.g. a symbolic link planted in the prompts folder
            st.error(f"Not saved: {plain(exc)}")
        else:
            state.put("tpl_base", saved)
            st.toast(f"Saved {plain(path)}")
            st.rerun()
    # a callback: the run that follows the click is the one that draws the saved template (a
    # st.rerun() from the click's run drew the page twice)
    discard_col.button("Discard edit", key="tpl_discard", disabled=not preview.diff,
                       on_click=_discard, args=(edited, prompt_id, base.template_source(prompt_id)))


def _discard(edited: PromptSnapshot, prompt_id: str, saved: str) -> None:
    """Put the saved template back into the edited snapshot and the editor."""
    state.put("tpl_edited", edited.with_template(prompt_id, saved))
    state.forget(f"tpl_src_{prompt_id}")


def show_preview(preview: TemplatePreview, variables: dict[str, Any] | None,
                 step: int | None) -> None:
    """The rendered output (or the error) beside the diff, and the variables used."""
    out_col, diff_col = st.columns(2)
    with out_col:
        st.subheader(rendered_heading(step))
        if preview.error is not None:
            st.error(plain(preview.error))
        else:
            st.code(preview.rendered, language=None, wrap_lines=True)
    with diff_col:
        st.subheader("Diff against the saved template")
        if preview.diff:
            st.code(preview.diff, language="diff", wrap_lines=True)
        else:
            st.caption("No changes.")
    with st.expander("Example variables" if variables is None else "Variables of this step"):
        st.json(example_variables(preview.prompt_id) if variables is None else variables)


def rerun_setup(target: RerunTarget, current: PromptSnapshot, prompt_id: str) -> RerunPlan:
    """What a re-run would compare, the endpoint status and the summariser choice."""
    note = engine_only_note(prompt_id, ENGINE_RENDERED_IDS)
    if note is not None:
        st.caption(note)
    st.write(rerun_intro(target.step, target.replay_name, target.original.status,
                         state.current_step()))
    st.caption(f"OpenAI-compatible summary endpoint: {plain(endpoint_status())}.")
    options = summariser_options(target.inputs.session)
    # the replay's own summariser first: its "original" side is then the saved replay itself
    kind: str = st.radio("Summariser", options, horizontal=True,
                         index=own_summariser_index(options, target.inputs.summariser),
                         key=f"tpl_summariser_{target.replay_id}",
                         format_func=SUMMARISER_LABELS.__getitem__)
    if (ignored := templates_ignored(summariser_info(kind))) is not None:
        st.warning(ignored)
    plan = rerun_plan(target, current, kind)
    st.caption(edited_sides_caption(plan.changed))
    return plan


def rerun_buttons(step: int, *, blocked: str | None = None) -> list[Action]:
    """The re-run buttons pressed in this run (the step, the whole replay); off, with the reason
    ``blocked`` above them, while the edited template has an error."""
    if blocked is not None:
        st.warning(blocked)
    step_col, all_col = st.columns(2)
    off = blocked is not None
    pressed = (step_col.button(f"Re-run step {step}", key="tpl_rerun_step", type="primary",
                               disabled=off),
               all_col.button("Re-run the whole replay", key="tpl_rerun_all", disabled=off))
    actions: tuple[Action, Action] = ("step", "replay")
    return [action for action, on in zip(actions, pressed, strict=True) if on]


def step_progress(report: Callable[[float, str], None]) -> Callable[[int, int], None]:
    """A re-run's ``progress(done, total)`` drawn on a page progress bar's ``report``."""
    return lambda done, total: report(done / max(total, 1), f"step {done:,} of {total:,}")


def _side_by_side(cmp: StepComparison, title: str,
                  shown: Callable[[StepOutcome], tuple[int, str]], language: str | None) -> None:
    """One expander per side titled with ``title`` and a length; ``shown`` gives (length, text)."""
    left, right = st.columns(2)
    for col, side in ((left, cmp.original), (right, cmp.edited)):
        length, text = shown(side)
        with col.expander(f"{side.label}: {title} ({length:,} chars)"):
            st.code(text, language=language, wrap_lines=True)


def show_comparison(cmp: StepComparison) -> None:
    """Rendered prompt diff, checkpoint diff, tokens and the success condition, side by side."""
    draw.table(rerun_table(cmp).set_index(""))
    st.markdown("##### Rendered summary request: diff")
    if cmp.prompt_diff:
        st.code(cmp.prompt_diff, language="diff", wrap_lines=True)
    else:
        st.caption("The rendered summary request is identical.")
    _side_by_side(cmp, "summary request", lambda s: (
        len(s.summary_request), s.summary_request or "(not rendered at this step)"), None)
    st.markdown("##### Checkpoint: diff")
    if cmp.checkpoint_diff:
        st.code(cmp.checkpoint_diff, language="diff", wrap_lines=True)
    else:
        st.caption(checkpoint_same_caption(cmp.edited.summariser))
    _side_by_side(cmp, "checkpoint", lambda s: (
        len(s.checkpoint_text), s.checkpoint_text or s.summary_text or "(no checkpoint)"),
        "markdown")
    show_loss_pair(cmp.original.fidelity, cmp.edited.fidelity,
                   labels=(cmp.original.label, cmp.edited.label), key="tpl_fid")


def show_replay_comparison(target: RerunTarget, result: ReplayComparison) -> None:
    """A whole re-run: the two runs on one chart (with the agent's recorded compactions), their
    totals, and the comparison at a compaction step the user picks."""
    draw.vega_lite_chart(vega_lite(compare_figure([result.original, result.edited],
                                                  recorded=session_marks(target.store,
                                                                         target.session_id))),
                         key="tpl_rerun_chart", width="stretch")  # Vega-Lite: loads no plotly.js
    draw.dataframe(display_frame(totals_table([result.original, result.edited])), hide_index=True,
                   key="tpl_rerun_totals")
    if not result.steps:
        st.caption("Neither replay entered compaction.")
        return
    labels = step_labels(result.steps)
    chosen = st.selectbox("Compaction step", list(labels), format_func=labels.__getitem__,
                          key="tpl_rerun_pick")
    show_comparison(next(c for c in result.steps if c.step_index == chosen))


def save_replay_form(store: Any, result: ReplayComparison, *, blocked: bool = False) -> None:
    """Name and save the edited side of a whole re-run under the sidebar's session (off while
    ``blocked``: the edited template has an error, so the page's edit is not what was re-run)."""
    name = st.text_input("Save the edited replay as", key="tpl_replay_name",
                         value=default_replay_name(result.edited.template_snapshot_id))
    if not st.button("Save edited replay", key="tpl_save_replay",
                     disabled=blocked or not name.strip()):
        return
    try:
        info = save_edited_replay(store, result, name, state.current_session_id())
    except IrisError as exc:
        st.error(f"Not saved: {plain(exc)}")
    else:
        st.success(saved_replay_message(info.name, info.template_snapshot_id))
