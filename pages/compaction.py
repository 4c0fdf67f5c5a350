"""Compaction page (R-UI-3): where did each compaction cut, what was kept raw, archived, summarised
or retained verbatim, which attempts were rejected and why, and what history-N.md holds."""

from __future__ import annotations

import streamlit as st

from workbench.page_guards import error_boundary, require_replay
from workbench.records import recorded_marks
from workbench.services.replay import open_saved, session_messages
from workbench.services.truth import answer_runs, recorded_compactions, truth_steps
from workbench.views.compaction import (
    COMPACTION_KINDS,
    attempts_table,
    compactions_table,
    replay_bands,
    timeline_figure,
)
from workbench.views.recorded import (
    budget_label,
    compaction_answer,
    compaction_answer_text,
    replay_compaction_steps,
)

st.title("Compaction")
st.caption("Where did compaction cut the history, and what happened to each message? One band per "
           "compaction of the selected replay; the red line is the cut point.")

ARCHIVE_PREVIEW = 6000
store, session_id, replay_id = require_replay()

with error_boundary("read the compactions of this replay"):
    replay = open_saved(store, replay_id)
    decisions = replay.decisions_of_kind(*COMPACTION_KINDS)
    archives = replay.archives()
    compactions = replay.checkpoints
    messages = session_messages(store, session_id)

    def request_at(step: int):
        prep = replay.preparation(step)
        return replay.request(prep.final_request_ref) if prep.final_request_ref else None

    bands = replay_bands(compactions, request_at=request_at, session_messages=messages,
                         checkpoints={a.n: a.checkpoint_text for a in archives})
    steps = truth_steps(replay)
    marks = recorded_marks(recorded_compactions(store, session_id, replay), steps)
    runs = answer_runs(replay)

st.markdown("**" + compaction_answer_text(replay.info.name, replay_compaction_steps(steps), marks)
            + "**")
st.dataframe(compaction_answer(runs, marks), hide_index=True, key="cmp_answer")
st.caption("Tokens before → after: the replay's whole request before and after its compaction "
           "(calibrated estimate + unrecorded overhead); the agent's own pre-compaction count and "
           "the provider's count of its first request after it. Trigger: the value the replay's "
           "trigger compared with the pressure line and its basis; for the agent, the kind of "
           "compaction its transcript recorded.")
thresholds = replay.thresholds
if thresholds:
    budget = budget_label(thresholds.input_budget, thresholds.budget_source,
                          thresholds.budget_detail)
    st.caption(f"Budget {budget} · "
               f"pressure line {thresholds.pressure_line:,} · summariser "
               f"**{replay.info.summariser}**"
               + (" (offline extractive: no model wrote these checkpoints)"
                  if replay.info.summariser == "extractive" else ""))

if not decisions:
    st.info("No compaction was planned in this replay: every request stayed below the pressure "
            "line. Pick another replay in the sidebar (e.g. `budget 96k`), or replay with a "
            "smaller `compaction.input_budget_tokens`.")
    st.stop()

if bands:
    st.plotly_chart(timeline_figure(bands, recorded_at=[m.at_message for m in marks]),
                    key="cmp_timeline")
else:
    st.info("Compaction was planned but never applied: see the attempts below.")

st.markdown("#### Applied compactions")
st.dataframe(compactions_table(decisions), hide_index=True, key="cmp_applied")
st.markdown("#### Every attempt")
st.caption("Plans and summary candidates, rejected attempts with their reason, and the committed "
           "one (R-CMP-8).")
st.dataframe(attempts_table(decisions), hide_index=True, key="cmp_attempts")

if archives:
    st.markdown("#### Checkpoints and archives")
    labels = {a.n: f"{a.path} · step {a.step_index}" for a in archives}
    chosen = st.selectbox("Compaction", list(labels), format_func=lambda n: labels[n], key="cmp_archive")
    record = next(a for a in archives if a.n == chosen)
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Checkpoint** ({len(record.checkpoint_text):,} characters)")
        st.code(record.checkpoint_text, language="markdown", wrap_lines=True)
    with right:
        st.markdown(f"**{record.path}** ({len(record.text):,} characters, lossless original)")
        whole = st.toggle("Show the whole archive", key="cmp_whole_archive",
                          disabled=len(record.text) <= ARCHIVE_PREVIEW)
        text = record.text if whole or len(record.text) <= ARCHIVE_PREVIEW else (
            record.text[:ARCHIVE_PREVIEW] + f"\n… [{len(record.text) - ARCHIVE_PREVIEW:,} more "
            "characters: switch on “Show the whole archive”]")
        st.code(text, language=None, wrap_lines=True)
