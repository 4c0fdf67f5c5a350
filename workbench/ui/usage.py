"""The Usage page's parts (R-UI-5, R-TOK-6): the real-vs-replay answer, the estimate-error figures,
the chart and tables, the cost lines and the HTML report button.

Session state goes through ``workbench.ui.state``: ``_wb_report`` (the last report built, with its
replay id).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from workbench.services.usage import OpenedUsage
from workbench.storage.store import Store
from workbench.ui import state
from workbench.ui.guards import error_boundary, progress_bar
from workbench.ui.tables import dashed_table, draw
from workbench.views.display import display_frame
from workbench.views.markup import plain
from workbench.views.recorded import compaction_answer, compaction_answer_text, replay_compaction_steps
from workbench.views.usage import (
    summary_usage_table,
    usage_budget_caption,
    usage_figure,
    usage_metrics,
    usage_table,
)
from workbench.views.vega import vega_lite

__all__ = ["report_button", "show_charts", "show_cost", "show_figures"]

NUMBER = st.column_config.NumberColumn
_STEP_COLUMNS = {"local_estimate": NUMBER("local estimate (raw)", format="localized"),
                 "provider_label": "provider (≈ frozen estimate)",
                 "difference": NUMBER("provider − local (raw)", format="localized"),
                 "ratio": NUMBER("provider / local (raw)", format="%.3f"),
                 "compaction_applied": "compaction applied",
                 "pressure_line": NUMBER("pressure line", format="localized"),
                 "reminder_line": NUMBER("reminder line", format="localized"),
                 "as_recorded_estimate": NUMBER("as-recorded estimate", format="localized"),
                 "error_pct": NUMBER("error % (as-recorded vs provider)", format="%.1f"),
                 "replayed_request": NUMBER("replayed request", format="localized"),
                 "trigger_tokens": NUMBER("trigger value", format="localized"),
                 "trigger_basis": "trigger basis"}
_SUMMARY_COLUMNS = {c: NUMBER(c.replace("_", " "), format="localized")
                    for c in ("calls", "prompt_tokens", "input_tokens", "output_tokens",
                              "attempts", "failures", "refused", "cache_hits")}


def show_figures(opened: OpenedUsage) -> None:
    """The real-vs-replay answer, the as-recorded note, the four figures, the redaction note and
    the budget line."""
    replay, steps, marks = opened.replay, opened.steps, opened.marks
    st.markdown("**" + compaction_answer_text(replay.info.name, replay_compaction_steps(steps),
                                              marks) + "**")
    if replay.facts.baseline == "recorded":
        st.caption("This is the as-recorded baseline: what the agent really sent, with no engine "
                   "reduction or compaction and the agent's own compactions applied where they "
                   "happened. Pick `default` (or another replay) to see where a configuration "
                   "compacts.")
    for col, metric in zip(st.columns(4), usage_metrics(steps, marks, replay.facts.calibration,
                                                                  compaction_request=opened.compaction_request),
                          strict=True):
        col.metric(metric.label, metric.value, border=True, help=metric.help)
    meaning = opened.meaning
    if meaning.text_redacted is not None:
        (st.caption if meaning.meaningful else st.warning)(plain(meaning.note))
    st.caption(usage_budget_caption(replay.thresholds, steps[-1].pressure_line))


def show_charts(opened: OpenedUsage) -> None:
    """The usage chart, the compaction answer, the per-step table and the summary usage."""
    # Vega-Lite: the first plotly chart of a document loads plotly.js (4.7 MB), a page opened by
    # its address paid for it on every open
    draw.vega_lite_chart(vega_lite(usage_figure(opened.steps, recorded=opened.marks)),
                         key="usage_chart", width="stretch")
    st.markdown("#### Where the replay and the agent compacted")
    draw.dataframe(compaction_answer(opened.runs, opened.marks), hide_index=True, key="usage_answer")
    st.markdown("#### Per step")
    dashed_table(display_frame(usage_table(opened.steps)), key="usage_table", config=_STEP_COLUMNS)
    st.markdown("#### Summary (compaction) usage, apart from the main model")
    draw.dataframe(summary_usage_table(opened.replay.facts.run_usage), hide_index=True,
                   key="usage_summary", column_config=_SUMMARY_COLUMNS)


def show_cost(lines: Sequence[str]) -> None:
    """The cost lines of the replay."""
    st.markdown("#### Cost")
    for line in lines:
        st.caption(plain(line))


def report_button(store: Store, replay_id: str, file_stem: str) -> None:
    """The "Build an HTML report" button and, once this replay's report is built, its download
    button (``<file_stem>.html``)."""
    if st.button("Build an HTML report of this replay", key="usage_report"):
        from workbench.report import stored_replay_report

        with progress_bar("building the report…") as report, \
                error_boundary("build the report", stop=False):
            state.put("_wb_report", (replay_id, stored_replay_report(store, replay_id,
                                                                     progress=report)))
    built = state.get("_wb_report")
    if built and built[0] == replay_id:
        st.download_button("Download report.html", built[1], key="usage_report_download",
                           file_name=f"{file_stem}.html".replace(" ", "-"),
                           mime="text/html", type="primary")
