"""Failed preparations (R-UI-7): error, stage and a link to the step."""

from __future__ import annotations

from evidence_builders import bundle, preparation

from workbench.views.failures import failures_table, step_link


def test_r_ui_7_failed_and_cancelled_listed_with_stage_and_link():
    preps = (*bundle().preparations, preparation(5, phase="cancelled"))
    table = failures_table(preps, session_id="s 1", replay_id="replay-abc")
    assert list(table.columns) == ["step", "phase", "stage", "kind", "error", "link"]
    assert list(table["step"]) == [3, 5]
    assert list(table["phase"]) == ["failed", "cancelled"]
    assert list(table["kind"]) == ["error", "timeout"]
    assert table.iloc[0]["stage"] == "compaction"
    assert table.iloc[0]["link"] == "step-through?session=s+1&replay=replay-abc&step=3"


def test_r_ui_7_no_failures_gives_an_empty_table():
    table = failures_table(bundle(failed_at=None).preparations, session_id="s", replay_id="r")
    assert table.empty and "link" in table.columns


def test_step_link_is_a_relative_query():
    assert step_link("a&b", "r", 0) == "step-through?session=a%26b&replay=r&step=0"
