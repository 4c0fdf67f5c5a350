"""Usage page (R-UI-5, R-TOK-6): how does the local estimate of each replayed request compare
with what the provider reported, and how close did each step come to the pressure line?"""

from __future__ import annotations

import traceback

import streamlit as st

from workbench.page_guards import require_replay, show_error
from workbench.pricing import saved_cost_lines
from workbench.replay_service import open_saved
from workbench.views.usage import summary_usage_table, usage_figure, usage_table

st.title("Usage")
st.caption("How does the local estimate of each replayed request compare with the provider's "
           "prompt tokens? `≈` marks a frozen estimate (hollow markers); dashed lines are the "
           "pressure and reminder lines; diamonds mark applied compactions.")

store, session_id, replay_id = require_replay()

try:
    replay = open_saved(store, replay_id)
    table = usage_table(replay.steps)
except Exception as exc:  # noqa: BLE001 - the UI boundary
    show_error("read the usage of this replay", exc)
    st.stop()

if table.empty:
    st.info("This replay has no steps: the session has no assistant response.")
    st.stop()

st.plotly_chart(usage_figure(replay.steps), key="usage_chart")
st.caption("After the replay applies a compaction its requests differ from what the agent really "
           "sent, so the provider's numbers stop describing the replayed request.")
st.markdown("#### Per step")
NUMBER = st.column_config.NumberColumn
st.dataframe(table.drop(columns=["provider_tokens", "estimated"]), hide_index=True,
             key="usage_table",
             column_config={"local_estimate": NUMBER("local estimate", format="localized"),
                            "provider_label": "provider (≈ frozen estimate)",
                            "difference": NUMBER("provider − local", format="localized"),
                            "ratio": NUMBER("provider / local", format="%.3f"),
                            "compaction_applied": "compaction applied",
                            "pressure_line": NUMBER("pressure line", format="localized"),
                            "reminder_line": NUMBER("reminder line", format="localized")})
st.markdown("#### Summary (compaction) usage, apart from the main model")
st.dataframe(summary_usage_table(replay.info.extras.get("run_usage")), hide_index=True,
             key="usage_summary",
             column_config={c: NUMBER(c.replace("_", " "), format="localized")
                            for c in ("calls", "prompt_tokens", "input_tokens", "output_tokens")})

st.markdown("#### Cost")
for line in saved_cost_lines(store, session_id, replay_id):
    st.caption(line)

st.markdown("#### Share")
st.caption("One self-contained HTML file with these charts, the stage table, the compaction cut "
           "points and the failed preparations; it opens offline (`workbench report` does the "
           "same from the command line).")
if st.button("Build an HTML report of this replay", key="usage_report"):
    from workbench.report import stored_replay_report

    bar = st.progress(0.0, text="replaying…")
    try:
        html = stored_replay_report(store, replay_id, progress=lambda f, text: bar.progress(
            min(max(f, 0.0), 1.0), text=text))
        st.session_state["_wb_report"] = (replay_id, html)
    except Exception as exc:  # noqa: BLE001 - the UI boundary: message, traceback on demand
        st.error(f"Could not build the report: {exc}")
        with st.expander("Traceback (for developers)"):
            st.code(traceback.format_exc(), language=None)
    bar.empty()
built = st.session_state.get("_wb_report")
if built and built[0] == replay_id:
    st.download_button("Download report.html", built[1], key="usage_report_download",
                       file_name=f"{session_id}-{replay.info.name}.html".replace(" ", "-"),
                       mime="text/html", type="primary")
