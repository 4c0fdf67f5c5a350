"""The notebook API (R-UI-8): load_session, replay, DataFrame columns, figure traces, the rich step
view (escaped transcript content) and compare (R-UI-6 from Python)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest
from figures import figure_traces
from iris.config import ContextConfig, default_config
from iris.errors import ConfigError, StorageError
from iris.preparation.records import STAGE_NAMES
from iris.session import Session

import workbench as wb
from workbench.storage.store import open_store
from workbench.views.usage import REPLAYED, USAGE_COLUMNS

LONG = wb.sample_path("long_session")
STATUSES = {"entered", "skipped", "candidate", "rejected", "applied"}


@pytest.fixture(scope="module")
def session() -> Session:
    return wb.load_session(LONG)


@pytest.fixture(scope="module")
def cost(session) -> wb.NotebookReplay:
    """The cost-first preset caps the budget at 64,000 tokens: the long session compacts."""
    return wb.replay(session, "cost-first")


@pytest.fixture(scope="module")
def default(session) -> wb.NotebookReplay:
    return wb.replay(session)


def test_r_ui_8_load_session_from_a_path_and_from_the_store():
    from_file = wb.load_session(str(LONG))
    with open_store() as store:
        stored_id = store.import_file(LONG).session_id
    from_store = wb.load_session(stored_id)
    assert from_store.messages == from_file.messages
    with pytest.raises(StorageError, match="'no-such-session' is neither a transcript file"):
        wb.load_session("no-such-session")


def test_r_ui_8_config_forms_none_preset_path_mapping(tmp_path):
    assert wb.resolve_config(None) == default_config()
    assert wb.resolve_config("cost-first").compaction.input_budget_tokens == 64000
    assert "cost-first" in wb.preset_names() and "default" in wb.preset_names()
    path = tmp_path / "small.yaml"
    path.write_text("compaction:\n  input_budget_tokens: 50000\n", encoding="utf-8")
    assert wb.resolve_config(path).compaction.input_budget_tokens == 50000
    assert wb.resolve_config({"compaction": {"threshold": 0.5}}).compaction.threshold == 0.5
    config = ContextConfig()
    assert wb.resolve_config(config) is config


def test_r_ui_8_config_errors_name_the_file_line_and_presets(tmp_path):
    with pytest.raises(ConfigError, match="presets: .*cost-first"):
        wb.resolve_config("no-such-preset")
    bad = tmp_path / "bad.yaml"
    bad.write_text("compaction:\n  threshold: 0.8\n  budget: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        wb.replay(LONG, bad)
    assert caught.value.line == 3 and "compaction.budget" in str(caught.value)


def test_r_ui_8_stages_frame_columns_and_rows(cost):
    frame = cost.stages()
    assert list(frame.columns) == ["step", "stage", "status", "before_tokens", "after_tokens",
                                   "change", "decisions", "decision_kinds", "note",
                                   "local_before_tokens", "local_after_tokens"]
    assert len(frame) == len(STAGE_NAMES) * len(cost)
    assert tuple(frame[frame["step"] == 0]["stage"]) == STAGE_NAMES
    assert set(frame["status"]) <= STATUSES
    assert frame["before_tokens"].dtype == "int64"
    applied = frame[(frame["stage"] == "compaction") & (frame["status"] == "applied")]
    assert list(applied["step"]) == [c.step_index for c in cost.result.checkpoints]
    assert (frame["change"] == frame["after_tokens"] - frame["before_tokens"]).all()


def test_r_ui_8_decisions_frame_matches_the_records(cost):
    frame = cost.decisions()
    assert list(frame.columns) == ["step", "stage", "kind", "what", "reason", "message", "ref"]
    recorded = sum(len(s.decisions) for p in cost.preparations for s in p.stages)
    assert len(frame) == recorded
    assert str(frame["message"].dtype) == "Int64"
    reduced = frame[frame["kind"] == "reduced"]
    assert not reduced.empty and reduced["what"].str.contains("→").all()


def test_r_ui_8_usage_frame_columns(cost):
    frame = cost.usage()
    assert list(frame.columns) == USAGE_COLUMNS
    assert list(frame["local_estimate"]) == [p.final_input_tokens for p in cost.preparations]
    assert frame["compaction_applied"].sum() == len(cost.result.checkpoints) >= 1
    summary = cost.summary_usage()
    assert list(summary["kind"]) == ["main model", "summary (compaction)"]


def test_r_ui_8_usage_figure_traces(cost):
    fig = cost.figure("usage")
    assert isinstance(fig, go.Figure)
    names = [t.name for t in figure_traces(fig)]
    assert {REPLAYED, "pressure line", "compaction applied"} <= set(names)
    local = figure_traces(fig)[names.index(REPLAYED)]
    assert list(local.y) == [p.final_input_tokens if p.whole_request_tokens is None
                             else p.whole_request_tokens for p in cost.preparations]
    marks = figure_traces(fig)[names.index("compaction applied")]
    assert list(marks.x) == [c.step_index for c in cost.result.checkpoints]


def test_r_ui_8_timeline_figure_draws_each_cut(cost):
    fig = cost.figure("timeline")
    cut = next(t for t in figure_traces(fig) if t.name == "cut point")
    bands = cost.bands()
    assert len(bands) == len(cost.result.checkpoints)
    assert list(cut.x) == [b.cut_index - 0.5 for b in bands]
    for band, applied in zip(bands, cost.result.checkpoints):
        if applied.first_kept_message is not None:  # None: the whole history was summarised
            assert band.cut_index == applied.first_kept_message
    summarised = next(t for t in figure_traces(fig) if t.name == "summarised")
    assert len(summarised.x) > 0
    with pytest.raises(ValueError, match="choose one of usage, timeline"):
        cost.figure("pie")


def test_r_ui_8_compactions_and_totals(cost, default):
    table = cost.compactions()
    assert list(table["step"]) == [c.step_index for c in cost.result.checkpoints]
    totals = cost.totals().iloc[0]
    assert totals["compactions"] == len(table) and totals["steps"] == len(cost)
    assert totals["configuration"] == "cost-first" and totals["failed_steps"] == 0
    assert totals["tokens_sent"] == sum(p.whole_request_tokens for p in cost.preparations)
    assert default.totals()["compactions"].tolist() == [0]
    # one shape for one kind of answer: a replay's totals are its row of a comparison's
    pd.testing.assert_frame_equal(
        wb.compare(cost, default).totals().iloc[[0]].reset_index(drop=True), cost.totals())
    assert cost.failures().empty


def test_r_ui_8_step_view(cost):
    step = cost.result.checkpoints[0].step_index
    view = cost.step(step)
    assert view.preparation.compaction_applied
    assert list(view.stages()["stage"]) == list(STAGE_NAMES)
    assert view.messages().loc[0, "marks"] == ["summarised"]
    html = view._repr_html_()
    assert f"Step {step}" in html and "compaction" in html and "applied" in html
    assert cost.step(-1).preparation.step_index == len(cost) - 1
    with pytest.raises(IndexError, match=f"has {len(cost)} steps"):
        cost.step(len(cost))


def test_r_ui_8_step_html_escapes_transcript_content(tmp_path):
    """Transcript content is shown as text, never as HTML (UX.md, Interaction)."""
    lines = wb.sample_path("unanswered").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record["content"][0]["text"] = '<script>alert("x")</script> & <b>bold</b>'
    lines[2] = json.dumps(record)
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    html = wb.replay(path).step(0)._repr_html_()
    assert "<script>alert" not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html


def test_r_ui_6_compare_two_presets(cost, default):
    """The comparison uses the Configuration page's view functions (workbench.views.compare)."""
    comparison = wb.compare(default, cost)
    assert comparison.labels == ("default", "cost-first")
    steps = comparison.steps()
    assert list(steps.columns) == ["step", "tokens · default", "tokens · cost-first",
                                   "difference (B − A)"]
    assert list(steps["tokens · default"]) == list(default.usage()["replayed_request"])
    assert list(steps["tokens · cost-first"]) == list(cost.usage()["replayed_request"])
    assert list(steps["difference (B − A)"]) == list(
        steps["tokens · cost-first"] - steps["tokens · default"])
    totals = comparison.totals()
    assert list(totals["configuration"]) == ["default", "cost-first"]
    assert list(totals["compactions"]) == [0, len(cost.result.checkpoints)]
    assert totals.iloc[1]["tokens_sent"] < totals.iloc[0]["tokens_sent"]
    cuts = comparison.compactions()
    assert list(cuts["step"]) == [c.step_index for c in cost.result.checkpoints]
    names = [t.name for t in figure_traces(comparison.figure())]
    assert {"default", "cost-first", "compaction · cost-first"} <= set(names)
    assert "default" in comparison._repr_html_()


def test_r_ui_6_compare_refuses_two_sessions(cost):
    other = wb.replay(wb.sample_path("unanswered"))
    with pytest.raises(ValueError, match="replays of one session"):
        wb.compare(cost, other)


def test_r_ui_8_same_labels_are_told_apart(default):
    assert wb.compare(default, default).labels == ("default (a)", "default (b)")


def test_r_ui_8_frames_are_plain_pandas(default):
    for frame in (default.stages(), default.decisions(), default.usage()):
        assert isinstance(frame, pd.DataFrame) and not frame.empty
    assert Path(wb.sample_path("bugfix")).name == "bugfix.jsonl"
    with pytest.raises(FileNotFoundError, match="bundled: bugfix"):
        wb.sample_path("nope")


def test_r_ui_8_replay_inside_a_running_event_loop_like_jupyter():
    """A Jupyter kernel runs an asyncio loop on the main thread; dynamic-context sources must
    still be collected (no step fails because a loop is already running)."""
    import asyncio

    async def in_kernel() -> wb.NotebookReplay:
        return wb.replay(head, "cost-first")

    session = wb.load_session(LONG)
    end = session.index.batches[15].assistant_message + 1  # past the first compaction (step 14)
    head = Session(header=session.header, messages=session.messages[:end],
                   context_snapshots=session.context_snapshots)
    assert head.context_snapshots  # so every step asks the recorded context source

    r = asyncio.run(in_kernel())
    assert r.failures().empty and r.totals()["compactions"].loc[0] >= 1
    assert len(r) == 16


def test_r_ui_8_missing_refs_are_none_not_nan(default):
    refs = default.decisions()["ref"]
    assert None in refs.tolist() and all(r is None or r.startswith(("result:", "message:"))
                                         for r in refs)
