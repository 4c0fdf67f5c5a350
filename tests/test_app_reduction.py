"""AppTest for the Reduction page and its view (issue 4: kind, category, age, bytes, decision, rule,
saved tokens per tool result of a chosen step)."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.reduction import ReductionConfig
from streamlit.testing.v1 import AppTest

from workbench.importers import load_session
from workbench.store import open_store
from workbench.views.reduction import COLUMNS, reduction_table, reduction_totals, step_count

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "workbench" / "app.py")
PAGE = "../pages/reduction.py"
SAMPLE = ROOT / "sample_sessions" / "long_session.jsonl"


def test_reduction_view_lists_every_result_of_the_step():
    """Issue 4 view: one row per tool result before the step, with the engine's decision and rule."""
    session = load_session(SAMPLE).session
    last = step_count(session) - 1
    table = reduction_table(session, last)
    assert list(table.columns) == COLUMNS
    cut = [i for i, m in enumerate(session.messages) if m.role == "assistant"][last]
    expected = sum(len(m.tool_results) for m in session.messages[:cut])
    assert len(table) == expected > 0
    assert (table["saved tokens"] == table["tokens before"] - table["tokens after"]).all()
    assert set(table["decision"]) - {"kept"}, "a long session has something reduced at its last step"
    off = reduction_table(session, last, ReductionConfig(enabled=False),
                          policy=__import__("iris.context.policy", fromlist=["ContextPolicy"]).ContextPolicy(
                              enabled=False))
    assert set(off["decision"]) == {"kept"} and set(off["rule"]) == {"reduction_disabled"}
    totals = reduction_totals(table)
    assert totals["results"].sum() == len(table)
    with pytest.raises(ValueError, match="out of range"):
        reduction_table(session, step_count(session))


def test_reduction_page_empty_store_tells_the_user_what_to_do():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(PAGE).run()
    assert not at.exception and "Sessions page" in at.info[0].value


def test_reduction_page_shows_table_for_the_sidebar_step():
    """The page follows the sidebar's session and step and shows the decision table."""
    with open_store() as store:
        store.import_file(SAMPLE)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert "No tool results before this step" in at.info[0].value  # step 0: nothing answered yet
    session = load_session(SAMPLE).session
    last = step_count(session) - 1
    at.sidebar.number_input(key="_wb_step_number").set_value(last).run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table.columns) == COLUMNS
    assert len(table) == len(reduction_table(session, last)) > 0
    assert f"Step {last} of {step_count(session)}" in at.caption[0].value
    at.toggle(key="red_carry").set_value(True).run()
    assert not at.exception, at.exception
