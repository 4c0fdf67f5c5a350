"""AppTest for the Usage page (R-UI-5, R-TOK-6): chart, per-step table, summary usage apart."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from workbench.store import open_store

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "workbench" / "app.py")
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
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = [t.get("name") for t in figure["data"]]
    assert {"local estimate", "provider", "pressure line", "reminder line"} <= set(names)
    assert all(t.get("type") != "pie" for t in figure["data"])
    table = at.dataframe[0].value
    assert len(table) == 68 and {"local_estimate", "provider_label", "difference", "ratio"} <= \
        set(table.columns)
    assert any(str(v).startswith("≈") for v in table["provider_label"])  # long_session lacks some usage
    summary = at.dataframe[1].value
    assert list(summary["kind"]) == ["main model", "summary (compaction)"]
