"""Corpus page: across a whole batch of sessions, which configuration saves the most tokens
without failing preparations, and where do two configurations differ most?"""

from __future__ import annotations

import streamlit as st

from workbench.corpus.batch import read_table
from workbench.ui.guards import error_boundary
from workbench.ui.tables import draw, grouped_numbers
from workbench.views.corpus import corpus_figure, corpus_totals, largest_differences
from workbench.views.fidelity import corpus_fidelity_table
from workbench.views.markup import code_span

st.title("Corpus")
st.caption("Across many sessions: tokens saved against failed preparations per configuration, and "
           "the sessions where two configurations differ most. Load the output of "
           "`workbench batch --config A --config B DIR --out OUT`.")

folder = st.text_input("Batch output directory", key="corpus_dir",
                       placeholder="e.g. /home/me/eval (the --out of workbench batch)")
if not folder:
    st.info("No batch loaded: run `workbench batch --config default --config cost-first "
            "~/transcripts --out eval/` in a terminal, then enter `eval/` above.", icon="👋")
    st.stop()

with error_boundary(f"read the batch in {code_span(folder)}"):
    sessions = read_table(folder, "sessions")
if sessions.empty:
    st.warning(f"{code_span(folder)} holds no batch tables (expected {code_span(folder + '/sessions/…/part-0.parquet')}).")
    st.stop()

st.subheader("Totals per configuration")
totals = corpus_totals(sessions)
draw.dataframe(totals, hide_index=True, key="corpus_totals", column_config=grouped_numbers(totals))
draw.plotly_chart(corpus_figure(sessions), key="corpus_figure")

failed = sessions[sessions["error"].notna()]
if not failed.empty:
    with st.expander(f"{len(failed)} sessions could not be replayed"):
        draw.dataframe(failed[["configuration", "path", "error"]], hide_index=True)

with error_boundary("read what compaction lost in this batch", stop=False):
    lost = corpus_fidelity_table(read_table(folder, "fidelity"))
    if not lost.empty:
        st.subheader("What compaction lost, per configuration")
        st.caption("Mean recall of the facts each compaction's replaced span held and the session "
                   "needed again (docs/fidelity.md); the agent's own compactions for comparison.")
        draw.dataframe(lost, hide_index=True, key="corpus_fidelity")

names = sorted(sessions["configuration"].unique())
if len(names) >= 2:
    st.subheader("Where two configurations differ most")
    left, right = st.columns(2)
    a = left.selectbox("Configuration A", names, index=0, key="corpus_a")
    b = right.selectbox("Configuration B", names, index=1, key="corpus_b")
    if a is not None and b is not None:  # a select box with options and an index always has a value
        differences = largest_differences(sessions, a, b)
        draw.dataframe(differences, hide_index=True, key="corpus_differences",
                       column_config=grouped_numbers(differences, {"link": st.column_config.LinkColumn(
                           "open", display_text="open session")}))
