"""A/B comparison views (R-UI-6): run summaries from a replay in memory and from the store agree;
totals, compactions and per-step tables; one chart with both runs (UX.md "A/B comparison")."""

from __future__ import annotations

from pathlib import Path

import pytest
from figures import figure_traces
from iris.replay import replay

from workbench.importers import load_session
from workbench.services.presets import load_preset
from workbench.services.replay import replay_and_save
from workbench.storage.store import open_store
from workbench.views.compare import (
    COMPACTION_COLUMNS,
    RUN_COLOURS,
    TOTALS_COLUMNS,
    compactions_table,
    compare_figure,
    compared_run,
    steps_table,
    totals_table,
)
from workbench.views.display import display_frame

ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "sample_sessions" / "long_session.jsonl"


def _session():
    return load_session(LONG).session


@pytest.fixture(scope="module")
def replays():
    """The long sample under the default preset (no compaction) and cost-first (compacts)."""
    session = _session()
    return replay(session, load_preset("default")), replay(session, load_preset("cost-first"))


@pytest.fixture(scope="module")
def runs(replays):
    return (compared_run("default", replays[0]),
            compared_run("cost-first", replays[1]))


def _cut_steps(result) -> list[int]:
    """Compaction steps straight from the engine's replay record (independent of the views)."""
    return [c.step_index for c in result.checkpoints]


def test_r_ui_6_totals_count_tokens_compactions_and_reduction(runs, replays):
    default = runs[0]
    cuts = _cut_steps(replays[1])
    assert _cut_steps(replays[0]) == [] and cuts
    table = totals_table(runs)
    assert list(table.columns) == TOTALS_COLUMNS
    assert list(table["configuration"]) == ["default", "cost-first"]
    assert list(table["compactions"]) == [0, len(cuts)]
    assert table["cut_points"].loc[1][0] == {"step": cuts[0],
                                             "cut_index": replays[1].checkpoints[0].cut_index}
    assert display_frame(table)["cut_points"].loc[1].startswith(
        f"step {cuts[0]} @ {replays[1].checkpoints[0].cut_index}")
    assert table["tokens_sent"].loc[0] == sum(s.whole_request_tokens for s in default.steps)
    assert table["tokens_sent"].loc[1] < table["tokens_sent"].loc[0]
    assert table["reduction_saved"].loc[1] > 0  # cost-first reduces earlier and harder
    assert table["input_budget"].loc[1] == 64000 and table["pressure_line"].loc[1] == 44800
    assert table["budget_source"].loc[1]  # every budget says where it came from


def test_r_ui_6_compactions_table_lists_each_cut_point(runs, replays):
    cuts = _cut_steps(replays[1])
    table = compactions_table(runs)
    assert list(table.columns) == COMPACTION_COLUMNS
    assert list(table["configuration"]) == ["cost-first"] * len(cuts)
    assert list(table["step"]) == cuts and list(table["n"]) == list(range(1, len(cuts) + 1))
    assert list(table["cut_index"]) == [c.cut_index for c in replays[1].checkpoints]
    assert all(c > 0 for c in table["cut_index"]) and all(a > 0 for a in table["archived_messages"])


def test_r_ui_6_steps_table_has_both_runs_and_the_difference(runs):
    table = steps_table(runs)
    assert list(table.columns) == ["step", "tokens · default", "tokens · cost-first",
                                   "difference (B − A)"]
    assert len(table) == 68
    row = table.iloc[-1]
    assert row["difference (B − A)"] == row["tokens · cost-first"] - row["tokens · default"]


def test_r_ui_6_one_chart_with_both_runs_their_lines_and_compactions(runs, replays):
    fig = compare_figure(runs)
    names = [t.name for t in figure_traces(fig)]
    assert [n for n in names if not n.startswith("trigger value")] == [
        "default", "pressure line · default (748,800)", "compaction · default",
        "cost-first", "pressure line · cost-first (44,800)", "compaction · cost-first"]
    by_name = {t.name: t for t in figure_traces(fig)}
    assert by_name["default"].line.color == RUN_COLOURS[0]
    assert by_name["cost-first"].line.color == RUN_COLOURS[1]
    assert list(by_name["compaction · cost-first"].x) == _cut_steps(replays[1])
    assert len(by_name["compaction · default"].x) == 0
    assert set(by_name["pressure line · cost-first (44,800)"].y) == {44800}
    assert len(by_name["cost-first"].x) == 68
    assert by_name["cost-first"].line.dash == "dot"  # identical runs still show both lines
    # every run's pressure line is inside the y range, so a compaction is seen against its line
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] > 748_800


def test_r_ui_6_stored_replay_summary_matches_the_in_memory_one(runs):
    """R-PREP-6 determinism: the summary read back from the store equals the replayed one."""
    with open_store() as store:
        session_id = store.import_file(LONG).session_id
        replay_and_save(store, session_id, name="cost", config=load_preset("cost-first"))
        from workbench.services.replay import open_saved

        saved = store.replays.find(session_id, "cost")
        assert saved is not None
        stored = open_saved(store, saved.id)
        summary = compared_run("cost-first", stored, configuration_hash=stored.info.configuration_hash,
                              template_snapshot_id=stored.info.template_snapshot_id)
    expected = runs[1]
    assert summary.steps == expected.steps
    assert summary.compactions == expected.compactions
    assert (summary.input_budget, summary.pressure_line) == (64000, 44800)
    assert summary.template_snapshot_id is not None and summary.configuration_hash
