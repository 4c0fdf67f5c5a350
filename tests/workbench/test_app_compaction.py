"""AppTest for the Compaction page (R-UI-3): timeline bands with the cut, attempts, archives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
PAGE = "../pages/compaction.py"


def opened(sample: str) -> AppTest:
    with open_store() as store:
        store.import_file(ROOT / "sample_sessions" / f"{sample}.jsonl")
    at = AppTest.from_file(APP, default_timeout=90).run()
    return at.switch_page(PAGE).run()


def test_r_ui_3_empty_store_tells_the_user_what_to_do():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(PAGE).run()
    assert not at.exception and "Sessions page" in at.info[0].value


def test_r_ui_3_replay_without_compaction_says_so():
    at = opened("unanswered")
    assert not at.exception
    assert "No compaction was planned" in at.info[0].value


def test_r_ui_3_band_cut_point_attempts_checkpoint_and_archive():
    with open_store() as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        # Only the 96k replay: the sidebar then makes no default replay (saves a replay's time).
        info, _ = replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME,
                                  config=budget_96k_config())
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page(PAGE).run()
    assert at.session_state["wb_replay"] == info.id
    assert not at.exception, at.exception
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = {t.get("name") for t in figure["data"]}
    assert {"kept raw", "summarised", "cut point"} <= names
    cut = next(t for t in figure["data"] if t.get("name") == "cut point")
    assert cut["x"] and cut["x"][0] > 0
    attempts = at.dataframe[2].value  # after the replay-vs-agent answer and the applied table
    assert "applied" in set(attempts["outcome"])
    codes = [c.value for c in at.code]
    assert any(c.startswith("[Context Summary]") for c in codes)
    assert any("history-1" in c or c.startswith("#") for c in codes[1:])
