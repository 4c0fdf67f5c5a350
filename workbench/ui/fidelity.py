"""The loss record's Streamlit parts (R-FID-2): the recall table of every compaction and the
chosen one's lost facts, each linked to the step that needed it."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from iris.fidelity import LossRecord

from workbench.analysis.compared_run import ComparedRun
from workbench.ui.tables import draw
from workbench.views.fidelity import (
    compaction_label,
    fidelity_sentence,
    loss_side_by_side,
    lost_by_either,
    lost_table,
    recall_table,
    runs_recall_table,
)

__all__ = ["show_compaction_loss", "show_loss_pair", "show_losses", "show_lost", "show_run_losses"]

_HELP = ("Facts of the replaced span (paths, commands, identifiers, errors, URLs, numbers with "
         "units, user instructions) that the session mentioned again after the compaction, and how "
         "many the checkpoint or the retained messages kept. String matching: a paraphrase is not a "
         "match, and a fact found again by re-reading still counts as lost (docs/fidelity.md).")


def show_losses(records: Sequence[LossRecord], *, session_id: str, replay_id: str,
                key: str = "fid") -> None:
    """The recall by kind of each compaction (the agent's and the replay's), and a picker of one
    compaction whose lost facts are listed."""
    st.markdown("#### What each compaction lost")
    if not records:
        st.caption("Neither the agent nor this replay compacted: nothing was lost to compaction.")
        return
    st.caption(_HELP)
    draw.dataframe(recall_table(records), hide_index=True, key=f"{key}_recall")
    labels = {i: compaction_label(r) for i, r in enumerate(records)}
    chosen = st.selectbox("Lost facts of", list(labels), format_func=lambda i: labels[i],
                          key=f"{key}_pick")
    show_lost(records[chosen], session_id=session_id, replay_id=replay_id, key=key)


def show_lost(record: LossRecord, *, session_id: str, replay_id: str, key: str = "fid") -> None:
    """One compaction's headline and its lost facts with a link to the step that needed each."""
    st.markdown(fidelity_sentence(record))
    table = lost_table(record, session_id=session_id, replay_id=replay_id)
    if table.empty:
        return
    draw.dataframe(table, hide_index=True, key=f"{key}_lost_{record.source}_{record.n}",
                   column_config={"open": st.column_config.LinkColumn(
                       "open", display_text="open step", help="the step that needed it, on the "
                       "Step-through page")})


def show_compaction_loss(record: LossRecord, *, session_id: str, replay_id: str) -> None:
    """The Why panel's part for a compaction step: what that compaction lost, in an expander."""
    with st.expander(f"Compaction — what it lost ({compaction_label(record)})", expanded=True):
        st.caption(_HELP)
        draw.dataframe(recall_table([record]), hide_index=True,
                       key=f"st_fid_recall_{record.source}_{record.n}")
        show_lost(record, session_id=session_id, replay_id=replay_id, key="st_fid")


def show_loss_pair(a: LossRecord | None, b: LossRecord | None, *, labels: tuple[str, str],
                   key: str) -> None:
    """Two checkpoints of one compaction side by side: recall by kind, and every needed-later fact
    either side lost with whether the other kept it."""
    st.markdown("##### What the checkpoint lost: " + " vs ".join(labels))
    if a is None and b is None:
        st.caption("No committed checkpoint with a loss record at this step: nothing to score.")
        return
    st.caption(_HELP)
    draw.dataframe(loss_side_by_side(a, b, labels=labels), hide_index=True, key=f"{key}_pair")
    lost = lost_by_either(a, b, labels=labels)
    if lost.empty:
        st.caption("Neither checkpoint lost a fact the session needed again.")
    else:
        draw.dataframe(lost, hide_index=True, key=f"{key}_lost_either")


def show_run_losses(runs: Sequence[ComparedRun], agent: Sequence[LossRecord]) -> None:
    """What each run's compactions lost, and the agent's own, in one table (a comparison)."""
    st.markdown("#### What each compaction lost")
    table = runs_recall_table([*((r.label, r.fidelity) for r in runs), ("agent", agent)])
    if table.empty:
        st.caption("Neither configuration nor the agent compacted this session.")
        return
    st.caption(_HELP)
    draw.dataframe(table, hide_index=True, key="cfg_fidelity")
