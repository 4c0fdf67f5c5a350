"""AppTests of the truth displays on Step-through and Compaction: the trigger value with its
basis in the step header, the budget's source, the agent's recorded compaction on the step
timeline, and the real-vs-replay compaction table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from truth_helpers import (
    RECORDED_PRE_TOKENS,
    RECORDED_STEP,
    decompressed,
    store_long_with_recorded_compaction,
)

from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.storage.store import open_store
from workbench.views.recorded import RECORDED

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")


def opened(page: str, step: int | None = None) -> AppTest:
    with open_store() as store:
        session_id = store_long_with_recorded_compaction(store)
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["session"] = session_id
    if step is not None:
        at.query_params["step"] = str(step)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_step_header_shows_trigger_value_basis_and_budget_source():
    at = opened("../pages/step_through.py", step=30)
    texts = [m.value for m in at.markdown]
    trigger = next(t for t in texts if t.startswith("**Trigger compared**"))
    assert any(basis in trigger for basis in ("provider usage", "calibrated local estimate",
                                              "frozen ≈ estimate")), trigger
    assert any(t.startswith("**Provider usage of this response**") for t in texts)
    assert any("Budget " in c.value and "(source: " in c.value for c in at.caption)
    assert any(c.value.startswith("Whole request ") for c in at.caption)


def test_step_timeline_marks_the_recorded_compaction_and_reaches_the_pressure_line():
    at = opened("../pages/step_through.py", step=30)
    at.session_state["st_timeline_open"] = True
    at.run()
    assert not at.exception, at.exception
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = {t.get("name") for t in figure["data"]}
    assert {RECORDED, "pressure line", "trigger value"} <= names
    star = next(t for t in figure["data"] if t.get("name") == RECORDED)
    assert star["x"] == [RECORDED_STEP] and star["y"] == [RECORDED_PRE_TOKENS]
    shapes = figure["layout"]["shapes"]
    assert RECORDED_STEP in [s["x0"] for s in shapes if s["line"].get("dash") == "dashdot"]
    assert 30 in [s["x0"] for s in shapes]  # the current step is still drawn


def test_compaction_page_answers_replay_vs_agent_and_lists_the_recorded_compaction():
    at = opened("../pages/compaction.py")
    answer = next(d.value for d in at.dataframe if "who" in d.value.columns)
    assert list(answer["who"])[-1] == "the agent (recorded)"
    assert answer.iloc[-1]["compacted at steps"] == str(RECORDED_STEP)
    assert answer.iloc[-1]["tokens before → after"].startswith(f"{RECORDED_PRE_TOKENS:,} → ")
    assert any(f"the agent compacted at step {RECORDED_STEP}" in m.value for m in at.markdown)
    assert any("(source: " in c.value for c in at.caption)


def test_configuration_compare_chart_marks_the_agent_and_holds_every_pressure_line():
    at = opened("../pages/configuration.py")
    at.selectbox(key="cfg_a").select("preset:quality-first")
    at.selectbox(key="cfg_b").select("preset:cost-first")
    at.button(key="cfg_compare").click().run()
    assert not at.exception, at.exception
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    star = next(t for t in figure["data"] if t.get("name") == RECORDED)
    assert star["x"] == [RECORDED_STEP] and star["y"] == [RECORDED_PRE_TOKENS]
    lines = [int(t["name"].rsplit("(", 1)[1].rstrip(")").replace(",", ""))
             for t in figure["data"] if t.get("name", "").startswith("pressure line")]
    assert len(lines) == 2 and figure["layout"]["yaxis"]["range"][1] >= max(lines)
    answer = next(d.value for d in at.dataframe if "who" in d.value.columns)
    assert list(answer["who"]) == ["replay quality-first", "replay cost-first",
                                   "the agent (recorded)"]
    assert answer.iloc[-1]["compacted at steps"] == str(RECORDED_STEP)


def test_templates_rerun_chart_marks_the_agent_compaction():
    with open_store() as store:
        session_id = store_long_with_recorded_compaction(store)
        info, _ = replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME,
                                  config=budget_96k_config())
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["session"] = session_id
    at.run()
    at.sidebar.selectbox(key="wb_replay").select(info.id).run()
    at.switch_page("../pages/templates.py").run()
    at.button(key="tpl_rerun_all").click().run()
    assert not at.exception, at.exception
    figure = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    names = {r["series"] for layer in figure["layer"] for r in layer["data"]["values"]
             if "series" in r}
    assert {"original templates", "edited templates", RECORDED} <= names
    assert RECORDED_STEP in [layer["data"]["values"][0]["x"] for layer in figure["layer"]
                             if layer["mark"].get("strokeDash") == [6, 3, 2, 3]
                             and layer["mark"]["type"] == "rule"]


def test_real_claude_session_usage_answers_where_replay_and_agent_compacted(real_sessions,
                                                                           tmp_path):
    """On a real Claude Code session (claude-opus-4-6, one real auto-compaction at 167,731
    tokens) the Usage page names the catalogue budget, marks the agent's compaction at its step
    and shows the estimate error of the as-recorded estimate."""
    path = decompressed(real_sessions, "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz", tmp_path)
    with open_store() as store:
        session_id = store.import_file(path).session_id
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["session"] = session_id
    at.run()
    at.switch_page("../pages/usage.py").run()
    assert not at.exception, at.exception
    answer = at.dataframe[0].value
    agent = answer.iloc[-1]
    assert agent["who"] == "the agent (recorded)"
    assert agent["tokens before → after"].startswith("167,731 → ")
    step = int(agent["compacted at steps"])
    figure = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    star = next(layer["data"]["values"] for layer in figure["layer"]
                if layer["data"]["values"][0].get("series") == RECORDED)
    assert [(r["x"], r["y"]) for r in star] == [(step, 167_731)]
    assert "catalogue" in answer.iloc[0]["budget"] and "200,000" in answer.iloc[0]["budget"]
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Estimate error, median"].rstrip("%")) < 5
