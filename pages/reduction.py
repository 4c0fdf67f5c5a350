"""Reduction page: why was each tool output of this step kept, summarised, trimmed or marked stale?

Thin page (issue 4): the session and step come from the shared sidebar (``workbench.state``); the
configuration is the selected replay's (else the defaults); the table comes from
``workbench.views.reduction``.
"""

from __future__ import annotations

import traceback

import streamlit as st
from iris.config import default_config, parse_config

from workbench.state import current_replay_id, current_session_id, current_step, get_store
from workbench.views.reduction import reduction_table, reduction_totals, step_count, tool_kind_table

st.title("Reduction")
st.write("Why was each tool output of this step kept, summarised, trimmed or marked stale? One row per "
         "tool result of the request for the selected step, with the rule that decided and its numbers.")

store = get_store()
session_id = current_session_id()
if session_id is None:
    st.info("Import a transcript or open a sample on the Sessions page, then pick it in the sidebar.")
    st.stop()


def _config():
    """The selected replay's configuration (its saved YAML), else the defaults."""
    replay_id = current_replay_id()
    if replay_id:
        from workbench.replay_service import open_saved

        text = open_saved(store, replay_id).configuration_yaml()
        if text:
            return parse_config(text, source="replay configuration"), "the selected replay's configuration"
    return default_config(), "the default configuration"


try:
    session = store.get_session(session_id)
    config, config_source = _config()
except Exception as exc:  # noqa: BLE001 -- the UI boundary: never show a bare traceback
    st.error(f"Cannot open the session: {exc}")
    with st.expander("Traceback (for developers)"):
        st.code(traceback.format_exc(), language=None)
    st.stop()

n_steps = step_count(session)
if n_steps == 0:
    st.info("This session has no assistant responses, so there is no request to reduce.")
    st.stop()
step = min(current_step() or 0, n_steps - 1)
carry = st.toggle("Carry reduction state across steps (frozen prefix, min_incremental_saved_tokens)",
                  key="red_carry", help="Off: this step is reduced from a fresh state.")

with st.spinner("Reducing…"):
    table = reduction_table(session, step, config.reduction, policy=config.context_policy, carry_state=carry)

st.caption(f"Step {step} of {n_steps} · {len(table)} tool results · rules from {config_source}"
           + ("" if config.reduction.enabled else " · reduction is disabled (reduction: false)"))
if table.empty:
    st.info("No tool results before this step. Pick a later step in the sidebar.")
    st.stop()

totals = reduction_totals(table)
cols = st.columns(len(totals))
for col, row in zip(cols, totals.itertuples(index=False)):
    col.metric(str(row.decision), f"{row.results}", f"−{row[2]:,} tokens" if row[2] else None,
               delta_color="off")
st.dataframe(table, hide_index=True, key="red_table",
             column_config={"reason": st.column_config.TextColumn(width="large")})
with st.expander("Tool-kind mapping of this session"):
    st.dataframe(tool_kind_table(session), hide_index=True)
