"""The recorded agent next to the replay: recorded compaction marks on every chart, the
real-vs-replay compaction table, trigger values with their basis, y axes that hold the lines."""

from __future__ import annotations

import pandas as pd
from evidence_builders import bundle, preparation
from figures import figure_traces
from iris.session import RecordedCompaction

from workbench.records import recorded_marks
from workbench.views.compare import ComparedRun, StepPoint, compare_figure
from workbench.views.recorded import (
    RECORDED,
    budget_label,
    compaction_answer,
    compaction_answer_text,
    y_range,
)
from workbench.views.step_through import step_header, step_timeline_figure
from workbench.views.usage import AS_RECORDED, REPLAYED, estimate_error, usage_figure, usage_table


def _steps():
    """Five steps (responses at messages 1, 3, 5, 7, 9) with truth fields filled in."""
    out = []
    for p in bundle().preparations:
        out.append(p.model_copy(update={
            "trigger_tokens": 1500 + 50 * p.step_index, "trigger_basis": "calibrated_local",
            "whole_request_tokens": p.final_input_tokens + 300,
            "recorded_request_whole": (p.provider_prompt_tokens or 0) + 11 * p.step_index}))
    return out


def test_recorded_compaction_lands_on_the_first_step_sent_after_it():
    """R-REAL-4: The agent's compaction before message 6 is drawn at step 3 (response at message 7), with
    its pre-compaction count as tokens before and step 3's provider count as tokens after."""
    steps = bundle().preparations
    marks = recorded_marks([RecordedCompaction(at_message=6, pre_tokens=1400, source="x")], steps)
    assert len(marks) == 1
    mark = marks[0]
    assert (mark.step, mark.tokens_before, mark.tokens_after) == (3, 1400, 1100 + 90 * 3)
    # without a preTokens figure, the provider count of the step before stands in
    plain = recorded_marks([{"at_message": 6}], steps)[0]
    assert plain.tokens_before == 1100 + 90 * 2
    # already placed marks (from a replay's records) are kept as they are
    placed = recorded_marks([{"step": 4, "tokens_before": 9, "tokens_after": 3}], steps)[0]
    assert (placed.step, placed.tokens_before, placed.tokens_after) == (4, 9, 3)


def test_one_table_answers_where_the_replay_and_the_agent_compacted():
    """R-REAL-4."""
    marks = recorded_marks([{"at_message": 6, "pre_tokens": 1400}], bundle().preparations)
    runs = [{"label": "default", "compactions": [{"step": 1, "tokens_before": 1500,
                                                   "tokens_after": 700, "trigger_value": 1480,
                                                   "trigger_basis": "provider"}],
             "input_budget": 200_000, "budget_source": "catalogue",
             "budget_detail": "claude-opus-4-6: context 200,000"}]
    table = compaction_answer(runs, marks)
    assert list(table["who"]) == ["replay default", "the agent (recorded)"]
    assert list(table["compacted at steps"]) == ["1", "3"]
    assert table.iloc[0]["vs the agent"] == "2 steps before the agent (step 3)"
    assert table.iloc[0]["tokens before → after"] == "1,500 → 700"
    assert table.iloc[1]["tokens before → after"] == f"1,400 → {1100 + 270:,}"
    assert table.iloc[0]["trigger"] == "1,480 (provider usage of the recorded request)"
    assert table.iloc[1]["trigger"] == "auto"
    assert table.iloc[0]["budget"] == "200,000 (source: claude-opus-4-6: context 200,000)"
    assert compaction_answer_text("default", [1], marks) == (
        "replay `default` compacted at step 1; the agent compacted at step 3")
    assert compaction_answer_text("x", [], ()) == "replay `x` never compacted; the agent never compacted"
    assert compaction_answer_text("x", [12, 60], ()).startswith("replay `x` compacted at steps 12, 60;")
    # a recorded /clear is no compaction: named as what it is
    cleared = recorded_marks([{"step": 2, "trigger": "clear"}, {"step": 4, "trigger": "auto"}],
                             bundle().preparations)
    assert compaction_answer_text("x", [], cleared) == (
        "replay `x` never compacted; the agent compacted at step 4; the user cleared the "
        "conversation at step 2")


def test_every_budget_names_its_source():
    assert budget_label(96_000, "default") == (
        "96,000 (source: the built-in default: no window known for this model)")
    assert budget_label(5, "config").endswith("compaction.input_budget_tokens in the configuration)")
    assert budget_label(None, "config") == "—"


def test_y_range_always_includes_the_lines():
    assert y_range([100, 200], [1000]) == [0.0, 1000 * 1.08]
    assert y_range([], []) is None


def test_usage_chart_draws_three_lines_trigger_and_recorded_marks_inside_the_range():
    """R-REAL-3, R-REAL-4: Provider vs as-recorded estimate (like with like) and the replayed request as a third line;
    the trigger value with its basis; the agent's compaction as a star on a dash-dot line."""
    steps = _steps()
    marks = recorded_marks([{"at_message": 6, "pre_tokens": 2500}], steps)
    fig = usage_figure(steps, recorded=marks)
    traces = {t.name: t for t in figure_traces(fig)}
    assert {"provider", AS_RECORDED, REPLAYED, "trigger value", RECORDED} <= set(traces)
    assert list(traces[REPLAYED].y) == [p.final_input_tokens + 300 for p in steps]
    assert set(traces["trigger value"].customdata) == {
        "calibrated local estimate + unrecorded overhead"}
    assert list(traces[RECORDED].x) == [3] and list(traces[RECORDED].y) == [2500]
    assert 3 in [s.x0 for s in fig.layout.shapes if s.line.dash == "dashdot"]
    top = fig.layout.yaxis.range[1]
    assert top >= max(2500, *traces["trigger value"].y, *traces["pressure line"].y)


def test_usage_table_and_error_compare_like_with_like():
    """R-REAL-2, R-REAL-3."""
    steps = _steps()
    table = usage_table(steps)
    assert list(table["as_recorded_estimate"])[:2] == [1100, 1100 + 90 + 11]
    assert table.iloc[1]["error_pct"] == round(100 * 11 / 1190, 1)
    error = estimate_error(steps)
    # step 0 has nothing calibrated to compare; step 4 is a frozen ≈ estimate, not a provider count
    assert error.responses == 3
    assert error.median_abs_pct == round(100 * 22 / 1280, 2)
    assert error.p90_abs_pct == round(100 * 33 / 1370, 2)
    assert estimate_error(bundle().preparations).median_abs_pct is None


def test_step_timeline_and_header_show_trigger_and_recorded_compaction():
    steps = _steps()
    marks = recorded_marks([{"at_message": 6, "pre_tokens": 2500}], steps)
    fig = step_timeline_figure(steps, recorded=marks)
    names = {t.name for t in figure_traces(fig)}
    assert {"trigger value", "pressure line", RECORDED} <= names
    assert fig.layout.yaxis.range[1] >= 2500
    ready = next(t for t in figure_traces(fig) if t.name == "ready")
    assert list(ready.y) == [s.whole_request_tokens for s in steps if s.phase == "ready"]
    head = step_header(steps[2])
    assert head.trigger_label == "1,600 (calibrated local estimate + unrecorded overhead)"
    assert head.whole_request_words.startswith(
        f"Whole request {steps[2].whole_request_tokens:,} = raw local estimate "
        f"{steps[2].final_input_tokens:,} × calibration 1.000 (the ratio known before this "
        "step) + 0 unrecorded overhead")
    old = step_header(preparation(0))
    assert old.trigger_tokens is None and old.trigger_label.startswith("no reading")
    assert old.whole_request_words == ""


def test_compare_chart_marks_the_agent_and_keeps_every_pressure_line_in_range():
    runs = [ComparedRun(label=label, input_budget=budget, pressure_line=line,
                       steps=tuple(StepPoint(step=i, phase="ready", final_input_tokens=100 * i,
                                             trigger_tokens=100 * i + 50,
                                             trigger_basis="provider") for i in range(5)))
            for label, budget, line in (("A", 200_000, 160_000), ("B", 2000, 1600))]
    marks = recorded_marks([{"step": 3, "tokens_before": 350, "tokens_after": 80}], ())
    fig = compare_figure(runs, recorded=marks)
    names = [t.name for t in figure_traces(fig)]
    assert "trigger value · A" in names and RECORDED in names
    assert fig.layout.yaxis.range[1] >= 160_000


def test_notebook_html_names_the_budget_source_and_the_trigger():
    """The notebook's replay and step HTML say where the budget came from and what the trigger
    compared."""
    from types import SimpleNamespace

    from workbench.views.rich_html import replay_html, step_html
    from workbench.views.step_through import stage_table

    thresholds = SimpleNamespace(input_budget=200_000, budget_source="catalogue",
                                 budget_detail="claude-opus-4-6: context 200,000",
                                 pressure_line=160_000)
    html = replay_html("s1", {"configuration": "default"}, thresholds)
    assert "budget 200,000 (source: claude-opus-4-6: context 200,000)" in html
    prep = _steps()[1]
    html = step_html(prep, step_header(prep), stage_table(prep), pd.DataFrame(), ())
    assert "trigger compared 1,550 (calibrated local estimate + unrecorded overhead)" in html


def test_codex_and_claude_fixtures_place_the_recorded_compaction_on_the_next_model_call():
    """Codex ``compacted`` (with replacement history) and Claude ``compact_boundary``: the mark
    lands on the first model call after the compaction, with the recorded pre-compaction count."""
    from pathlib import Path

    from workbench.services.truth import session_marks
    from workbench.storage.store import open_store

    fixtures = Path(__file__).parents[1] / "fixtures" / "importers"
    expected = {"codex_compacted.jsonl": (1, 209_950), "codex_replacement_history.jsonl": (3, 209_950),
                "claude_compact.jsonl": (2, 167_094)}
    with open_store() as store:
        for name, (step, before) in expected.items():
            session_id = store.import_file(fixtures / name).session_id
            marks = session_marks(store, session_id)
            assert [(m.step, m.tokens_before) for m in marks] == [(step, before)], name
