"""Compaction views (R-UI-3): fates on the message timeline, the cut point, attempts, archives."""

from __future__ import annotations

from evidence_builders import bundle, messages, request
from figures import figure_traces
from iris.preparation.records import MessageMark, PreparedRequest
from iris.session import Message, TextBlock

from workbench.views.compaction import (
    attempts_table,
    compaction_band,
    compactions_table,
    retained_texts,
    timeline_figure,
)

CHECKPOINT = ("## Goal\nFix it\n\n## Retained Recent Messages\nUser:\n> Fix the failing test\n"
              "User:\n> two\n> lines\n> [truncated]\n\n## Other\nx")


def _decisions():
    out = []
    for prep in bundle().preparations:
        for stage in prep.stages:
            out += [(prep.step_index, stage.name, d) for d in stage.decisions
                    if d.kind.startswith("compaction")]
    return out


def test_retained_texts_parses_the_checkpoint_section():
    assert retained_texts(CHECKPOINT) == ("Fix the failing test", "two\nlines")
    assert retained_texts("## Goal\nnothing") == ()


def test_r_ui_3_fates_kept_raw_archived_summarised_retained():
    """R-UI-3: kept raw after the cut; reduced bodies archived; quoted user text retained."""
    session = (*messages(), Message(role="user", content=(TextBlock(text="next"),)))
    applied = PreparedRequest(
        messages=(Message(role="user", content=(TextBlock(text=CHECKPOINT),)), session[3], session[4]),
        marks=(MessageMark(origin="checkpoint"), MessageMark(origin="history", history_index=3),
               MessageMark(origin="history", history_index=4)))
    band = compaction_band(1, 2, archived=(0, 1, 2), applied_request=applied,
                           previous_request=request(), session_messages=session,
                           checkpoint_text=CHECKPOINT)
    assert band.cut_index == 3
    assert band.fates == ("retained verbatim", "summarised", "archived", "kept raw", "kept raw")


def test_r_ui_3_timeline_figure_has_a_band_per_compaction_and_the_cut():
    session = messages()
    applied = PreparedRequest(messages=(session[2], session[3]),
                              marks=(MessageMark(origin="history", history_index=2),
                                     MessageMark(origin="history", history_index=3)))
    bands = [compaction_band(1, 2, archived=(0, 1), applied_request=applied, previous_request=None,
                             session_messages=session, checkpoint_text=""),
             compaction_band(2, 5, archived=(), applied_request=applied, previous_request=None,
                             session_messages=session, checkpoint_text="", first_kept=2)]
    fig = timeline_figure(bands)
    traces = {t.name: t for t in figure_traces(fig)}
    assert list(traces["kept raw"].customdata) == [2, 3, 2, 3]
    assert list(traces["summarised"].customdata) == [0, 1]
    assert list(traces["cut point"].x) == [1.5, 1.5]
    assert list(traces["cut point"].y) == ["#1 · step 2", "#2 · step 5"]
    assert len(fig.layout.shapes) == 2


def test_r_ui_3_candidates_and_rejected_attempts_with_reasons():
    table = attempts_table(_decisions())
    assert list(table["outcome"]) == ["candidate (plan)", "candidate", "rejected",
                                      "candidate (plan)", "candidate", "applied"]
    assert list(table["step"]) == [1, 1, 1, 2, 2, 2]
    assert table.iloc[2]["reason"] == "summary not smaller"


def test_r_ui_3_applied_compactions_table():
    table = compactions_table(_decisions())
    assert list(table["n"]) == [1] and table.iloc[0]["step"] == 2
    assert table.iloc[0]["archive"] == "history-1.md"
