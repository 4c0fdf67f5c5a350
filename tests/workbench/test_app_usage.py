"""AppTest for the Usage page (R-UI-5, R-TOK-6): chart, per-step table, summary usage apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from truth_helpers import RECORDED_PRE_TOKENS, RECORDED_STEP, store_long_with_recorded_compaction

from workbench.services.replay import open_saved
from workbench.storage.store import open_store
from workbench.views.recorded import RECORDED
from workbench.views.usage import REPLAYED

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
PAGE = "../pages/usage.py"


def test_r_ui_5_empty_store_tells_the_user_what_to_do():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(PAGE).run()
    assert not at.exception and "Sessions page" in at.info[0].value


def test_r_ui_5_chart_table_and_summary_usage():
    with open_store() as store:
        store.import_file(ROOT / "sample_sessions" / "long_session.jsonl")
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert not at.get("plotly_chart")  # Vega-Lite: the page's first open loads no plotly.js
    figure = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    names = {row["series"] for layer in figure["layer"] for row in layer["data"]["values"]
             if "series" in row}
    assert {REPLAYED, "provider", "pressure line", "reminder line"} <= names
    assert all(layer["mark"]["type"] in ("line", "point", "rule") for layer in figure["layer"])
    table = at.dataframe[1].value
    assert len(table) == 68 and {"local_estimate", "provider_label", "difference", "ratio"} <= \
        set(table.columns)
    assert any(str(v).startswith("≈") for v in table["provider_label"])  # long_session lacks some usage
    summary = at.dataframe[2].value
    assert list(summary["kind"]) == ["main model", "summary (compaction)"]


def test_recorded_compaction_error_stats_and_the_real_vs_replay_answer():
    """The agent's recorded compaction is a star on the chart and a row of the answer table; the
    median and p90 error of the as-recorded estimate are shown; the budget names its source."""
    with open_store() as store:
        session_id = store_long_with_recorded_compaction(store)
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["session"] = session_id
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    figure = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    stars = [layer["data"]["values"] for layer in figure["layer"]
             if layer["data"]["values"][0].get("series") == RECORDED]
    assert [(r["x"], r["y"]) for r in stars[0]] == [(RECORDED_STEP, RECORDED_PRE_TOKENS)]
    lines = [layer["data"]["values"][0]["x"] for layer in figure["layer"]
             if layer["mark"]["type"] == "rule" and layer["mark"].get("strokeDash") == [6, 3, 2, 3]]
    assert lines == [RECORDED_STEP]
    with open_store() as store:
        saved = store.replays.find(session_id, "default")
        assert saved is not None
        steps = open_saved(store, saved.id).steps
    top = figure["layer"][0]["encoding"]["y"]["scale"]["domain"][1]
    assert top >= max(s.pressure_line for s in steps)
    answer = at.dataframe[0].value
    assert list(answer["who"]) == ["replay default", "the agent (recorded)"]
    assert answer.iloc[1]["compacted at steps"] == str(RECORDED_STEP)
    assert any(f"the agent compacted at step {RECORDED_STEP}" in m.value for m in at.markdown)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Estimate error, median"].endswith("%")
    assert metrics["Estimate error, p90"].endswith("%")
    assert any("Budget" in c.value and "source:" in c.value for c in at.caption)
