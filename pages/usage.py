"""Usage page (R-UI-5, R-TOK-6): how does the local estimate of each replayed request compare
with what the provider reported, and how close did each step come to the pressure line?"""

from __future__ import annotations

import streamlit as st

from workbench import state as wb_state
from workbench.page_guards import error_boundary, require_replay
from workbench.pricing import saved_cost_lines
from workbench.records import recorded_marks
from workbench.replay_summary import error_meaning
from workbench.services.replay import open_saved
from workbench.services.truth import answer_runs, recorded_compactions, truth_steps
from workbench.views.display import display_frame
from workbench.views.recorded import (
    budget_label,
    compaction_answer,
    compaction_answer_text,
    replay_compaction_steps,
)
from workbench.views.usage import estimate_error, summary_usage_table, usage_figure, usage_table

st.title("Usage")
st.caption("Does the estimate match what the provider counted, and where did the replay and the "
           "agent compact? The provider's count and the **as-recorded estimate** describe the "
           "same request (what the agent really sent); the **replayed request** is what this "
           "replay would send. `≈` marks a frozen estimate (hollow markers); dashed lines are "
           "the pressure and reminder lines; the thin line is the value the compaction trigger "
           "compared; diamonds mark the replay's compactions, stars on a dash-dot line the "
           "agent's recorded ones.")

store, session_id, replay_id = require_replay()

with error_boundary("read the usage of this replay"):
    replay = open_saved(store, replay_id)
    steps = truth_steps(replay)
    table = usage_table(steps)
    marks = recorded_marks(recorded_compactions(store, session_id, replay), steps)
    runs = answer_runs(replay)
    meaning = error_meaning(store.get_session(session_id))

if table.empty:
    st.info("This replay has no steps: the session has no assistant response.")
    st.stop()

thresholds = replay.thresholds
st.markdown("**" + compaction_answer_text(replay.info.name, replay_compaction_steps(steps), marks)
            + "**")
if replay.facts.baseline == "recorded":
    st.caption("This is the as-recorded baseline: what the agent really sent, with no engine "
               "reduction or compaction and the agent's own compactions applied where they "
               "happened. Pick `default` (or another replay) to see where a configuration "
               "compacts.")
error, last = estimate_error(steps), steps[-1]
cols = st.columns(4)
cols[0].metric("Estimate error, median", "—" if error["median_abs_pct"] is None
               else f"{error['median_abs_pct']}%", border=True,
               help=f"{error['basis']}, over {error['responses']} responses with provider usage")
cols[1].metric("Estimate error, p90", "—" if error["p90_abs_pct"] is None
               else f"{error['p90_abs_pct']}%", border=True)
cols[2].metric("Unrecorded overhead", f"{last.unrecorded_overhead_tokens or 0:,}", border=True,
               help="System prompt, tool schemas and framing the transcript does not contain, "
                    "carried in every whole-request figure"
                    + (f" (measured at step {last.overhead_measured_at})"
                       if last.overhead_measured_at is not None else ""))
cols[3].metric("Calibration ratio", f"{last.calibration_ratio or 1.0:.3f}", border=True,
               help="Provider tokens per local token, from the latest earlier response")
if meaning["text_redacted"] is not None:
    (st.caption if meaning["meaningful"] else st.warning)(meaning["note"])
budget = (budget_label(thresholds.input_budget, thresholds.budget_source, thresholds.budget_detail)
          if thresholds else budget_label(None, None, ""))
st.caption(f"Budget {budget} · pressure line "
           f"{(thresholds.pressure_line if thresholds else last.pressure_line):,}")

st.plotly_chart(usage_figure(steps, recorded=marks), key="usage_chart")
st.markdown("#### Where the replay and the agent compacted")
st.dataframe(compaction_answer(runs, marks), hide_index=True, key="usage_answer")
st.markdown("#### Per step")
NUMBER = st.column_config.NumberColumn
st.dataframe(display_frame(table), hide_index=True,
             key="usage_table",
             column_config={"local_estimate": NUMBER("local estimate (raw)", format="localized"),
                            "provider_label": "provider (≈ frozen estimate)",
                            "difference": NUMBER("provider − local (raw)", format="localized"),
                            "ratio": NUMBER("provider / local (raw)", format="%.3f"),
                            "compaction_applied": "compaction applied",
                            "pressure_line": NUMBER("pressure line", format="localized"),
                            "reminder_line": NUMBER("reminder line", format="localized"),
                            "as_recorded_estimate": NUMBER("as-recorded estimate",
                                                           format="localized"),
                            "error_pct": NUMBER("error % (as-recorded vs provider)",
                                                format="%.1f"),
                            "replayed_request": NUMBER("replayed request", format="localized"),
                            "trigger_tokens": NUMBER("trigger value", format="localized"),
                            "trigger_basis": "trigger basis"})
st.markdown("#### Summary (compaction) usage, apart from the main model")
st.dataframe(summary_usage_table(replay.facts.run_usage), hide_index=True,
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
    with error_boundary("build the report", stop=False):
        html = stored_replay_report(store, replay_id, progress=lambda f, text: bar.progress(
            min(max(f, 0.0), 1.0), text=text))
        wb_state.put("_wb_report", (replay_id, html))
    bar.empty()
built = wb_state.get("_wb_report")
if built and built[0] == replay_id:
    st.download_button("Download report.html", built[1], key="usage_report_download",
                       file_name=f"{session_id}-{replay.info.name}.html".replace(" ", "-"),
                       mime="text/html", type="primary")
