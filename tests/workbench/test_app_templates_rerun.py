"""AppTest for the Templates page's re-run part (R-UI-4): the compaction templates render with the
variables the engine passed at the replay's compaction step, a step or the whole replay re-runs
with the edited snapshot, results show side by side, and only explicit actions write anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_helpers import copy_store
from streamlit.testing.v1 import AppTest

from workbench.services.replay import BUDGET_REPLAY_NAME, open_saved
from workbench.services.rerun import compaction_steps
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
PAGE = "../pages/templates.py"
EDIT = "\nALWAYS MENTION PENGUINS.\n"


@pytest.fixture
def long_session_page(workbench_home, long_store) -> AppTest:
    """The app on the Templates page with the long sample's ``budget 96k`` replay (compacts at 12)."""
    copy_store(long_store, workbench_home)
    with open_store() as store:
        session_id = store.list_sessions()[0].id
    at = AppTest.from_file(APP, default_timeout=120).run()
    with open_store() as store:
        replay = store.replays.find(session_id, BUDGET_REPLAY_NAME)
    assert replay is not None
    at.sidebar.selectbox(key="wb_replay").select(replay.id).run()
    return at.switch_page(PAGE).run()


def _codes(at: AppTest) -> list[str]:
    return [c.value for c in at.code]


def test_r_ui_4_renders_with_the_variables_of_the_compaction_step(long_session_page):
    at = long_session_page
    assert not at.exception, at.exception
    assert at.radio(key="tpl_vars").value == "step"
    with open_store() as store:
        replay_id = at.session_state["wb_replay"]
        step = compaction_steps(open_saved(store, replay_id))[0]
    assert any(f"Rendered with the variables of step {step}" in h.value for h in at.subheader)
    at.selectbox(key="tpl_id").select("compaction_input").run()
    rendered = _codes(at)[0]
    assert "moving harbor from per-record retries" in rendered  # the session's own first request
    # the real variables, not the examples: the example's invented March bug is absent
    assert "The March report is missing money" not in rendered
    at.radio(key="tpl_vars").set_value("example").run()
    assert "The March report is missing money" in _codes(at)[0]


def test_r_ui_4_rerun_step_shows_prompt_diff_tokens_and_success(long_session_page, workbench_home):
    at = long_session_page
    source = at.text_area(key="tpl_src_compaction").value
    at.text_area(key="tpl_src_compaction").input(source + EDIT).run()
    at.button(key="tpl_rerun_step").click().run()
    assert not at.exception, at.exception
    diffs = [c for c in _codes(at) if c.startswith("--- original/summary-request-step-")]
    assert diffs and "+ALWAYS MENTION PENGUINS." in diffs[0]
    table = at.table[0].value
    row = table.loc["success (≤ line and smaller)"]
    assert row["original"].startswith("✓") and row["edited"].startswith("✓")
    assert table.loc["compaction stage", "edited"] == "applied"
    before = "request before (tokens, whole request as sent)"
    assert table.loc[before, "original"] == table.loc[before, "edited"]
    assert not (workbench_home / "workspace" / ".iris").exists()  # nothing saved to disk


def test_r_ui_4_rerun_whole_replay_compares_and_saves_with_its_snapshot(long_session_page):
    at = long_session_page
    source = at.text_area(key="tpl_src_compaction").value
    at.text_area(key="tpl_src_compaction").input(source + EDIT).run()
    at.button(key="tpl_rerun_all").click().run()
    assert not at.exception, at.exception
    figure = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    names = {r["series"] for layer in figure["layer"] for r in layer["data"]["values"]
             if "series" in r}
    assert {"original templates", "edited templates"} <= names
    totals = at.dataframe[0].value
    assert list(totals["configuration"]) == ["original templates", "edited templates"]
    first, second = totals["compactions"]  # same count: the extractive checkpoint ignores the prompt
    assert first == second >= 1
    at.text_input(key="tpl_replay_name").input("penguins").run()
    at.button(key="tpl_save_replay").click().run()
    assert not at.exception and "penguins" in at.success[-1].value
    with open_store() as store:
        saved = next(r for r in store.replays.list() if r.name == "penguins")
        sources = store.replays.open(saved.id).template_sources()
    assert sources is not None and EDIT.strip() in sources["compaction"]


def test_r_ui_4_replay_without_compaction_explains_instead_of_rerunning(workbench_home):
    with open_store() as store:
        store.import_file(ROOT / "sample_sessions" / "unanswered.jsonl")
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert any("No compaction was planned" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "tpl_rerun_step"]
