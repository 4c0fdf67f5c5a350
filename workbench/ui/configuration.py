"""The Configuration page's parts (R-UI-6): the preset picker, the YAML editor and the common-fields
form kept in sync with it, the summariser choice, the replay form, the A/B pickers and the
comparison's chart and tables.

Session state goes through ``workbench.ui.state``: ``cfg_yaml`` (the editor's text, the source of
truth), ``cfg_preset``, the form's ``cfg_f_<field>`` widgets and ``cfg_runs`` (the comparison's
replays, kept while the browser session lasts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from workbench.analysis.compared_run import ComparedRun
from workbench.services.compare import Comparison
from workbench.services.configuration import ReplaySetup
from workbench.services.presets import PRESET_NAMES, preset_text
from workbench.services.summarisers import SUMMARISER_LABELS
from workbench.ui import state
from workbench.ui.fidelity import show_run_losses
from workbench.ui.tables import dashed_table, draw, grouped_numbers
from workbench.views.compare import (
    answer_runs,
    compactions_table,
    compare_figure,
    steps_table,
    totals_table,
)
from workbench.views.configuration import (
    FORM_FIELDS,
    ConfigCheck,
    check_config,
    form_edit,
    form_state,
    number_options,
    validity_line,
    widget_key,
)
from workbench.views.display import display_frame
from workbench.views.markup import plain
from workbench.views.recorded import compaction_answer

__all__ = ["compare_pickers", "editor", "replay_name", "run_cache", "show_comparison",
           "summariser_choice"]


def _form_from_yaml() -> None:
    for key, value in form_state(state.get("cfg_yaml")).items():
        state.put(key, value)


def _yaml_from_form() -> None:
    state.put("cfg_yaml", form_edit(state.get("cfg_yaml"),
                                    {widget_key(f): state.get(widget_key(f)) for f in FORM_FIELDS}))


def _load_preset() -> None:
    state.put("cfg_yaml", preset_text(state.get("cfg_preset")))
    _form_from_yaml()


def editor() -> ConfigCheck:
    """The preset row, the YAML editor with its verdict and fallback warnings, and the form of
    common fields (locked while the YAML is not valid); returns the editor's check. The first
    run loads the chosen preset (``default``)."""
    if state.get("cfg_yaml") is None:
        state.put("cfg_preset", state.get("cfg_preset", "default"))
        _load_preset()
    preset_col, load_col = st.columns([3, 1], vertical_alignment="bottom")
    preset_col.selectbox("Preset", PRESET_NAMES, key="cfg_preset",
                         help="Shipped in workbench/presets/<name>.yaml")
    load_col.button("Load preset", key="cfg_load_preset", on_click=_load_preset)
    yaml_col, form_col = st.columns([3, 2])
    with yaml_col:
        st.text_area("Configuration (YAML)", key="cfg_yaml", height=520, on_change=_form_from_yaml)
        check = check_config(state.get("cfg_yaml"))
        (st.success if check.ok else st.error)(validity_line(check))
        for warning in check.warnings:
            st.warning(f"Fallback: {plain(warning)}")
    with form_col:
        st.markdown("**Common fields** (kept in sync with the YAML)")
        for f in FORM_FIELDS:
            common: dict[str, Any] = {"key": widget_key(f), "help": f.help or None,
                                      "on_change": _yaml_from_form, "disabled": not check.ok}
            if f.kind == "bool":
                st.toggle(f.label, **common)
            else:
                st.number_input(f.label, **number_options(f), **common)
    return check


def summariser_choice(setup: ReplaySetup) -> str:
    """The templates and endpoint a replay uses (a warning when a saved template is broken) and
    the summariser radio; returns the chosen summariser."""
    used = setup.templates
    if used.problem is not None:
        st.warning(f"A saved template cannot be used ({plain(used.problem)}); fix it on the Templates "
                   "page.")
    st.caption(f"Replays use {used.where} (snapshot `{used.snapshot.snapshot_id[:19]}…`). "
               f"OpenAI-compatible summary endpoint: {plain(setup.endpoint)}.")
    return st.radio("Summariser", setup.summarisers, horizontal=True, key="cfg_summariser",
                    format_func=lambda kind: SUMMARISER_LABELS.get(kind, kind))


def replay_name(check: ConfigCheck) -> str | None:
    """The name to save the replay as, when "Replay and save" was pressed (it is enabled for a
    valid configuration and a name)."""
    st.subheader("Replay with this configuration")
    name_col, button_col = st.columns([3, 1], vertical_alignment="bottom")
    name = name_col.text_input("Save the replay as", value="configuration", key="cfg_replay_name")
    pressed = button_col.button("Replay and save", key="cfg_replay", type="primary",
                                disabled=not check.ok or not name.strip())
    return name.strip() if pressed else None


def _tokens(label: str) -> Any:
    return st.column_config.NumberColumn(label, format="localized")


# The comparison tables' data columns as a reader says them, numbers with thousands separators.
_COLUMNS: dict[str, Any] = {
    "failed_steps": st.column_config.NumberColumn("failed steps"),
    "tokens_sent": _tokens("tokens sent (all steps)"),
    "cut_points": st.column_config.TextColumn("cut points (step @ message)"),
    "reduction_saved": _tokens("saved by reduction"), "fold_saved": _tokens("saved by folding"),
    "summary_calls": st.column_config.NumberColumn("summary calls"),
    "summary_input_tokens": _tokens("summary input tokens"),
    "summary_output_tokens": _tokens("summary output tokens"),
    "input_budget": _tokens("input budget"), "budget_source": st.column_config.TextColumn(
        "budget source"), "pressure_line": _tokens("pressure line"),
    "tokens_before": _tokens("whole request before"), "tokens_after": _tokens("after"),
    "cut_index": st.column_config.NumberColumn("cut at message"),
    "first_kept_message": st.column_config.NumberColumn("first kept message"),
    "archived_messages": st.column_config.NumberColumn("archived messages"),
}


def compare_pickers(choices: Mapping[str, str]) -> tuple[str, str]:
    """Configuration A and B (``preset:default`` and ``preset:cost-first`` at first)."""
    st.subheader("Compare two configurations on this session")
    keys = list(choices)
    a_col, b_col = st.columns(2)
    a = a_col.selectbox("Configuration A", keys, format_func=choices.__getitem__, key="cfg_a",
                        index=keys.index("preset:default"))
    b = b_col.selectbox("Configuration B", keys, format_func=choices.__getitem__, key="cfg_b",
                        index=keys.index("preset:cost-first"))
    return a, b


def run_cache() -> dict[Any, ComparedRun]:
    """The comparison's replays of this browser session (one per session, configuration,
    template snapshot and label)."""
    cache: dict[Any, ComparedRun] = state.get("cfg_runs") or {}
    state.put("cfg_runs", cache)
    return cache


def show_comparison(compared: Comparison) -> None:
    """The chart of both runs with the agent's compactions, the totals, the cut points, who
    compacted where, and the tokens of every step."""
    runs = list(compared.runs)
    draw.plotly_chart(compare_figure(runs, recorded=compared.marks), key="cfg_compare_chart")
    st.markdown("#### Totals")
    dashed_table(display_frame(totals_table(runs)), key="cfg_totals", config=_COLUMNS)
    st.markdown("#### Compactions and cut points")
    cuts = compactions_table(runs)
    if cuts.empty:
        st.caption("Neither configuration compacted this session.")
    else:
        dashed_table(cuts, key="cfg_cuts", config=_COLUMNS)
    st.markdown("#### Where each configuration and the agent compacted")
    draw.dataframe(compaction_answer(answer_runs(runs), compared.marks), hide_index=True,
                   key="cfg_answer")
    show_run_losses(runs, compared.agent_losses)
    with st.expander("Tokens per step"):
        steps = steps_table(runs)
        draw.dataframe(steps, hide_index=True, key="cfg_steps", column_config=grouped_numbers(steps))
