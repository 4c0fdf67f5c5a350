"""Configuration page (R-UI-6): which configuration prepares this session best?

Edit the whole configuration as YAML (validated on every change: field path, line and reason;
Chord-style fallbacks as warnings) or its common fields in a form kept in sync with the text;
replay the session with it (saved under a name, with progress); compare two configurations (the
editor's, a preset, or a saved replay) on one chart with a totals table. Nothing touches disk
except the explicit "Replay and save".
"""

from __future__ import annotations

import streamlit as st
from iris.config import config_hash

from workbench import state as wb_state
from workbench.page_guards import error_boundary
from workbench.replay_service import replay_and_save
from workbench.rerun import endpoint_status
from workbench.services.compare import choice_label, choice_summary, compare_choices
from workbench.services.presets import PRESET_NAMES, preset_text
from workbench.services.summarisers import (
    SUMMARISER_LABELS,
    stored_summariser,
    stored_summariser_options,
)
from workbench.services.templates import replay_templates
from workbench.services.truth import session_marks
from workbench.views.compare import (
    answer_runs,
    compactions_table,
    compare_figure,
    run_summary,
    steps_table,
    totals_table,
)
from workbench.views.configuration import FORM_FIELDS, apply_form, check_config, form_values
from workbench.views.display import display_frame
from workbench.views.recorded import budget_label, compaction_answer

st.title("Configuration")
st.write("Which configuration prepares this session best? Edit the YAML or the common fields, "
         "replay the session with it, and compare two configurations on one chart.")



def sync_form_from_yaml() -> None:
    check = check_config(wb_state.get("cfg_yaml"))
    if check.ok:
        for key, value in form_values(check.config).items():
            wb_state.put(f"cfg_f_{key}", value)


def sync_yaml_from_form() -> None:
    values = {f.key: wb_state.get(f"cfg_f_{f.key}") for f in FORM_FIELDS}
    wb_state.put("cfg_yaml", apply_form(wb_state.get("cfg_yaml"), values))


def load_preset_into_editor() -> None:
    wb_state.put("cfg_yaml", preset_text(wb_state.get("cfg_preset")))
    sync_form_from_yaml()


if wb_state.get("cfg_yaml") is None:
    wb_state.put("cfg_preset", wb_state.get("cfg_preset", "default"))
    load_preset_into_editor()

preset_col, load_col = st.columns([3, 1], vertical_alignment="bottom")
preset_col.selectbox("Preset", PRESET_NAMES, key="cfg_preset",
                     help="Shipped in workbench/presets/<name>.yaml")
load_col.button("Load preset", key="cfg_load_preset", on_click=load_preset_into_editor)

yaml_col, form_col = st.columns([3, 2])
with yaml_col:
    st.text_area("Configuration (YAML)", key="cfg_yaml", height=520, on_change=sync_form_from_yaml)
    check = check_config(wb_state.get("cfg_yaml"))
    if check.ok:
        st.success(f"Valid · configuration `{config_hash(check.config)[:19]}…`")
    else:
        where = " · ".join(part for part in (
            f"field `{check.field}`" if check.field else "",
            f"line {check.line}" if check.line else "") if part)
        st.error(f"{where or 'Invalid'}: {check.reason}")
    for warning in check.warnings:
        st.warning(f"Fallback: {warning}")
with form_col:
    st.markdown("**Common fields** (kept in sync with the YAML)")
    for f in FORM_FIELDS:
        widget_key = f"cfg_f_{f.key}"
        common = {"key": widget_key, "help": f.help or None, "on_change": sync_yaml_from_form,
                  "disabled": not check.ok}
        if f.kind == "bool":
            st.toggle(f.label, **common)
        elif f.kind == "float":
            st.number_input(f.label, min_value=f.minimum, max_value=f.maximum, step=f.step,
                            format="%.2f", **common)
        else:
            st.number_input(f.label, min_value=int(f.minimum) if f.minimum is not None else None,
                            max_value=None, step=int(f.step or 1),
                            placeholder="derived" if f.kind == "optional_int" else None, **common)

store, session_id = wb_state.get_store(), wb_state.current_session_id()
st.divider()
if session_id is None:
    st.info("No session yet: import a transcript or open a sample on the Sessions page, then "
            "replay it here with this configuration.", icon="👋")
    st.stop()
used = replay_templates(check.config if check.ok else None)
templates = used.snapshot
if used.problem is not None:
    st.warning(f"A saved template cannot be used ({used.problem}); fix it on the Templates page.")
st.caption(f"Replays use {used.where} (snapshot `{templates.snapshot_id[:19]}…`). "
           f"OpenAI-compatible summary endpoint: {endpoint_status()}.")
summariser = st.radio("Summariser", stored_summariser_options(store, session_id), horizontal=True,
                      key="cfg_summariser", format_func=SUMMARISER_LABELS.get)


def progress_bar(text: str):
    bar = st.progress(0.0, text=text)

    def report(fraction: float, label: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=label)
    return bar, report


# ------------------------------------------------------------------------------ replay with it
st.subheader("Replay with this configuration")
name_col, button_col = st.columns([3, 1], vertical_alignment="bottom")
name = name_col.text_input("Save the replay as", value="configuration", key="cfg_replay_name")
if button_col.button("Replay and save", key="cfg_replay", type="primary",
                     disabled=not check.ok or not name.strip()):
    bar, report = progress_bar("replaying…")
    with error_boundary("replay", stop=False, message="Replay failed: {exc}"):
        info, result = replay_and_save(store, session_id, name=name.strip(), config=check.config,
                                       prompts=templates, progress=report,
                                       summarizer=stored_summariser(store, session_id, summariser))
        wb_state.keep_result("cfg_last", (info.name, run_summary(info.name, result)),
                             session_id=session_id)
    bar.empty()
if (last := wb_state.session_result("cfg_last")) is not None:  # this session's replay only
    saved_name, run = last
    steps = ", ".join(str(c.step) for c in run.compactions) or "none"
    st.success(f"Replay **{saved_name}** saved: **{len(run.compactions)} compactions** "
               f"(steps {steps}) over {len(run.steps)} steps; budget "
               f"{budget_label(run.input_budget, run.budget_source, run.budget_detail)}, "
               f"pressure line {run.pressure_line:,}. Pick it in the sidebar to step through it.")

# ------------------------------------------------------------------------------ compare
st.subheader("Compare two configurations on this session")
choices = compare_choices(store, session_id)
a_col, b_col = st.columns(2)
a = a_col.selectbox("Configuration A", list(choices), format_func=choices.get, key="cfg_a",
                    index=list(choices).index("preset:default"))
b = b_col.selectbox("Configuration B", list(choices), format_func=choices.get, key="cfg_b",
                    index=list(choices).index("preset:cost-first"))


def summary_of(sid: str, choice: str, suffix: str, report):
    cache = wb_state.get("cfg_runs") or {}
    wb_state.put("cfg_runs", cache)
    return choice_summary(store, sid, choice, choice_label(choice, choices, suffix),
                          editor=check.config, templates=templates, cache=cache, progress=report)


if st.button("Compare", key="cfg_compare"):
    bar, report = progress_bar("replaying A…")
    with error_boundary("compare", stop=False, message="Comparison failed: {exc}"):
        same = " (A)" if a == b else ""
        first = summary_of(session_id, a, same, lambda f, label: report(f / 2, f"A: {label}"))
        second = summary_of(session_id, b, " (B)" if same else "",
                            lambda f, label: report(0.5 + f / 2, f"B: {label}"))
        wb_state.keep_result("cfg_compared", (first, second), session_id=session_id)
    bar.empty()
compared = wb_state.session_result("cfg_compared")  # this session's comparison only
if compared is None:
    st.caption("Pick A and B and press Compare.")
    st.stop()
runs = list(compared)
marks = session_marks(store, session_id)
st.plotly_chart(compare_figure(runs, recorded=marks), key="cfg_compare_chart")
st.markdown("#### Totals")
st.dataframe(display_frame(totals_table(runs)), hide_index=True, key="cfg_totals")
st.markdown("#### Compactions and cut points")
cuts = compactions_table(runs)
if cuts.empty:
    st.caption("Neither configuration compacted this session.")
else:
    st.dataframe(cuts, hide_index=True, key="cfg_cuts")
st.markdown("#### Where each configuration and the agent compacted")
st.dataframe(compaction_answer(answer_runs(runs), marks), hide_index=True, key="cfg_answer")
with st.expander("Tokens per step"):
    st.dataframe(steps_table(runs), hide_index=True, key="cfg_steps")
