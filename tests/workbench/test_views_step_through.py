"""Step-through views (R-UI-2): stage table, decisions in plain words, the marked final request."""

from __future__ import annotations

from evidence_builders import messages, preparation, request
from figures import figure_traces
from iris.preparation.records import STAGE_NAMES, Reduced

from workbench.views.display import display_frame
from workbench.views.step_through import (
    STAGE_EXPLANATIONS,
    decision_table,
    describe,
    plain,
    pressure_of,
    request_messages,
    request_table,
    stage_table,
    step_header,
    step_timeline_figure,
)


def test_r_ui_2_stage_table_has_status_tokens_and_decision_counts():
    """R-UI-2 / R-PREP-3: one row per stage with the spec's status words and whole-request tokens."""
    table = stage_table(preparation(2, compaction="applied"))
    assert list(table.columns) == ["stage", "status", "before_tokens", "after_tokens", "change",
                                   "decisions", "decision_kinds", "note", "local_before_tokens",
                                   "local_after_tokens"]
    assert tuple(table["stage"]) == STAGE_NAMES
    row = table.set_index("stage").loc["compaction"]
    assert (row["status"], row["before_tokens"], row["after_tokens"], row["decisions"]) == \
        ("applied", 560, 280, 3)
    kinds = table.set_index("stage")["decision_kinds"].loc["compaction"]
    assert kinds["compaction-applied"] == 1  # data: {kind: count}
    assert sum(kinds.values()) == row["decisions"]
    assert "1 compaction-applied" in display_frame(table).set_index("stage")["decision_kinds"].loc[
        "compaction"]
    assert table.set_index("stage").loc["trim_old_bodies", "change"] == -360


def test_r_ui_2_skipped_stage_keeps_its_note():
    table = stage_table(preparation(0)).set_index("stage")
    assert table.loc["compaction", "status"] == "skipped"
    assert table.loc["compaction", "note"] == "below the pressure line"


def test_r_ui_2_decisions_are_in_plain_words_with_numbers():
    """UX.md "why" panel: the rule that fired and its numbers."""
    table = decision_table(preparation(1, compaction="rejected"))
    reduced = table[table["kind"] == "reduced"].iloc[0]
    assert reduced["what"] == "shell output (shell, rule success) at age 2 → reduced: 400 → 40 tokens"
    assert reduced["reason"].startswith("shell output 5,731 B")
    assert reduced["message"] == 2
    rejected = table[table["kind"] == "compaction-rejected"].iloc[0]
    assert rejected["what"] == "attempt 1 rejected (whole request would be 465)"
    assert set(decision_table(preparation(1), stage="fold_repeats")["kind"]) == {"folded-repeat"}


def test_describe_reduced_without_age():
    d = Reduced(reason="r", block_index=0, category="read", rule="stale", action="stale")
    assert describe(d) == "tool output (read, rule stale) → stale: 0 → 0 tokens"


def test_every_stage_has_a_teaching_paragraph():
    assert set(STAGE_EXPLANATIONS) == set(STAGE_NAMES)


def test_r_cmp_4_pressure_colour_boundaries():
    """R-CMP-4: below reminder green, reminder..line orange, at/over the line red."""
    assert pressure_of(1079, 1600, 1080) == "green"
    assert pressure_of(1080, 1600, 1080) == "orange"
    assert pressure_of(1599, 1600, 1080) == "orange"
    assert pressure_of(1600, 1600, 1080) == "red"
    assert pressure_of(1500, 1600, None) == "green"


def test_header_marks_frozen_estimates_and_failures():
    """UX.md header: phase badge, tokens vs budget, provider usage with ≈ when frozen."""
    ok = step_header(preparation(4, usage_kind="estimated"))
    assert (ok.phase, ok.provider_label, ok.final_input_tokens, ok.input_budget) == \
        ("ready", "≈1,460", 760, 2000)
    assert ok.percent_of_budget == 38.0 and ok.pressure == "green"
    failed = step_header(preparation(3, phase="failed", usage_kind="missing"))
    assert (failed.phase, failed.provider_label, failed.error_stage) == ("failed", "—", "compaction")
    assert failed.error is not None and "timed out" in failed.error


def test_r_ui_2_request_rendered_with_marks_and_original():
    """R-UI-2: the final request message by message, changed parts marked, original available."""
    shown = request_messages(request(), messages())
    assert [m.label for m in shown] == ["history #0", "history #1", "history #2", "history #3"]
    assert shown[2].marks == ("reduced",) and shown[2].original_text == "E" * 600
    assert shown[0].original_text is None
    assert shown[3].text == "<b>done</b>"  # text, never HTML: the page renders it as text
    table = request_table(request())
    assert list(table["marks"]) == ["", "", "reduced", ""]
    assert list(table["role"]) == ["user", "assistant", "tool", "assistant"]


def test_plain_escapes_markdown_html_and_streamlit_colour_directives():
    """UX.md: transcript and record content is shown as text, never as markup."""
    assert plain("<b>x</b>") == "\\<b>x\\</b>"  # a tag cannot start, so > needs no escape
    assert plain(":red[alarm] *a*") == ":red\\[alarm\\] \\*a\\*"
    assert plain("plain words 12") == "plain words 12"


def test_r_ui_2_step_timeline_colours_phases_and_marks_current_and_compactions():
    """R-UI-2: a timeline of steps; the current one outlined, compactions marked."""
    from evidence_builders import bundle

    fig = step_timeline_figure(bundle().preparations, current=2)
    traces = {t.name: t for t in figure_traces(fig)}
    assert list(traces["ready"].x) == [0, 1, 2, 4] and list(traces["failed"].x) == [3]
    assert list(traces["ready"].marker.line.width) == [0, 0, 3, 0]
    assert list(traces["compaction applied"].x) == [2]
    assert [s.x0 for s in fig.layout.shapes] == [2]
