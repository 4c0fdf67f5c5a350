"""The Step-through page's context breakdown (Claude Code's ``/context``): what the selected step's
request is made of, and a stacked bar of every step's parts. Both are drawn only while their
expander is open (the chart over a long replay reads every step's request once, then the store's
cache keeps it). The parts and the figure are ``workbench.views.breakdown``."""

from __future__ import annotations

import streamlit as st

from workbench.services.step_through import OpenedStep, over_steps
from workbench.storage.store import Store
from workbench.ui.tables import drawer
from workbench.views import breakdown as view
from workbench.views.vega import vega_lite

__all__ = ["show_breakdown"]


@st.fragment
def show_breakdown(store: Store, session_id: str, opened: OpenedStep, step: int) -> None:
    """The parts of this step's request (summing to the header's whole request) and, below, every
    step's parts as a stacked bar with this step marked. A fragment: opening or closing the
    expander reruns this part only, not the whole step."""
    box = st.expander("What this request is made of (like Claude Code's /context)",
                      key="st_breakdown_open", on_change="rerun")
    if not box.open:
        return
    names = view.call_names(opened.originals)
    parts = view.step_breakdown(opened.prep, opened.request, store.estimator, names)
    box.caption(f"The parts add up to the whole request the header states: "
                f"{view.whole_of(opened.prep):,} tokens (the overhead as measured; the other parts "
                "are the local estimate of each, calibrated like the header).")
    drawer(box).dataframe(parts, hide_index=True, key="st_breakdown_table", column_config={
        "tokens": st.column_config.NumberColumn(format="localized"),
        "share": st.column_config.ProgressColumn(format="percent", min_value=0.0, max_value=1.0)})
    frame = over_steps(store, session_id, opened.replay, "context breakdown",
                       lambda steps, messages: view.breakdown_frame(
                           steps, store.estimator, view.call_names(messages)))
    drawer(box).vega_lite_chart(vega_lite(view.breakdown_figure(frame, selected=step)),
                                key="st_breakdown_chart", width="stretch")
