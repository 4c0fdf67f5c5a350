"""The Compaction page's parts (R-UI-3): the real-vs-replay answer with the budget line, the cut
timeline, the applied compactions and every attempt, and the checkpoint next to its archive."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from workbench.records import ArchiveRecord
from workbench.services.compaction import OpenedCompaction
from workbench.ui.tables import dashed_table, draw
from workbench.views.compaction import (
    ARCHIVE_PREVIEW,
    CompactionBand,
    archive_preview,
    attempts_table,
    compaction_budget_caption,
    compactions_table,
    timeline_figure,
    with_step_links,
)
from workbench.views.recorded import compaction_answer, compaction_answer_text, replay_compaction_steps

__all__ = ["show_answer", "show_archives", "show_decisions"]

_TOKENS = st.column_config.NumberColumn
_OPEN = st.column_config.LinkColumn("open", display_text="step ›")
_APPLIED = {
    "n": st.column_config.NumberColumn("#"),
    "cut_index": st.column_config.NumberColumn("cut at message"),
    "tokens_before": _TOKENS("whole request before", format="localized"),
    "tokens_after": _TOKENS("after", format="localized"),
    "trigger_value": _TOKENS("trigger value", format="localized"),
    "trigger_basis": st.column_config.TextColumn("trigger basis"),
    "history_tokens_before": _TOKENS("history before (detail)", format="localized"),
    "history_tokens_after": _TOKENS("history after (detail)", format="localized"),
    "checkpoint_tokens": _TOKENS("checkpoint tokens", format="localized"),
    "link": _OPEN,
}
_ATTEMPTS = {"what": st.column_config.TextColumn("what", width="large"), "link": _OPEN}


def show_answer(opened: OpenedCompaction) -> None:
    """Where the replay and the agent compacted, in words and as a table, and the budget line."""
    replay = opened.replay
    st.markdown("**" + compaction_answer_text(replay.info.name,
                                              replay_compaction_steps(opened.steps), opened.marks)
                + "**")
    draw.dataframe(compaction_answer(opened.runs, opened.marks), hide_index=True, key="cmp_answer")
    st.caption("Tokens before → after: the replay's whole request before and after its compaction "
               "(calibrated estimate + unrecorded overhead); the agent's own pre-compaction count "
               "and the provider's count of its first request after it. Trigger: the value the "
               "replay's trigger compared with the pressure line and its basis; for the agent, "
               "the kind of compaction its transcript recorded.")
    if (caption := compaction_budget_caption(replay.thresholds, replay.info.summariser)) is not None:
        st.caption(caption)


def show_decisions(opened: OpenedCompaction, bands: Sequence[CompactionBand]) -> None:
    """The cut timeline (or why there is none), the applied compactions and every attempt."""
    if bands:
        draw.plotly_chart(timeline_figure(bands, recorded_at=[m.at_message for m in opened.marks]),
                          key="cmp_timeline")
    else:
        st.info("Compaction was planned but never applied: see the attempts below.")
    info = opened.replay.info
    st.markdown("#### Applied compactions")
    st.caption("Whole request before → after as sent at that step (the figures of the Step-through "
               "header and the Usage page); the history columns are the detail the engine "
               "compacted (the untrimmed durable history).")
    applied = with_step_links(compactions_table(opened.decisions, opened.steps), info.session_id,
                              info.id)
    dashed_table(applied, key="cmp_applied", config=_APPLIED)
    st.markdown("#### Every attempt")
    st.caption("Plans and summary candidates, rejected attempts with their reason, and the "
               "committed one (R-CMP-8).")
    attempts = with_step_links(attempts_table(opened.decisions), info.session_id, info.id)
    dashed_table(attempts, key="cmp_attempts", config=_ATTEMPTS)


def show_archives(archives: Sequence[ArchiveRecord]) -> None:
    """A picker of the compactions with an archive, and the chosen one's checkpoint next to its
    ``history-N.md`` (previewed up to :data:`ARCHIVE_PREVIEW` characters)."""
    st.markdown("#### Checkpoints and archives")
    labels = {a.n: f"{a.path} · step {a.step_index}" for a in archives}
    chosen = st.selectbox("Compaction", list(labels), format_func=lambda n: labels[n],
                          key="cmp_archive")
    record = next(a for a in archives if a.n == chosen)
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Checkpoint** ({len(record.checkpoint_text):,} characters)")
        st.code(record.checkpoint_text, language="markdown", wrap_lines=True)
    with right:
        st.markdown(f"**{record.path}** ({len(record.text):,} characters, lossless original)")
        whole = st.toggle("Show the whole archive", key="cmp_whole_archive",
                          disabled=len(record.text) <= ARCHIVE_PREVIEW)
        st.code(archive_preview(record.text, whole=whole), language=None, wrap_lines=True)
