"""Results computed for one session belong to that session (R-UI-4, R-UI-6): switching the sidebar
session clears them, and a page's save stores only what was computed for the session it is saved
under. Every page with a save button is covered: Templates ("Save edited replay") and Configuration
("Replay and save")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.errors import StorageError
from store_helpers import copy_store
from streamlit.testing.v1 import AppTest

from workbench.services.replay import (
    BUDGET_REPLAY_NAME,
    ensure_default_replay,
    replay_session,
    save_replay_result,
)
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
EDIT = "\nALWAYS MENTION PENGUINS.\n"


@pytest.fixture
def two_sessions(workbench_home, long_store, tmp_path) -> tuple[str, str]:
    """Session A (the long sample) and session B (a shorter copy of it under another id); both
    have their ``default`` and ``budget 96k`` replays, and both compact under the latter."""
    copy_store(long_store, workbench_home)
    lines = (ROOT / "sample_sessions" / "long_session.jsonl").read_text("utf-8").splitlines()
    header = {**json.loads(lines[0]), "session_id": "harbor-copy", "title": "Harbor (copy)"}
    copy = tmp_path / "harbor-copy.jsonl"
    copy.write_text("\n".join([json.dumps(header), *lines[1:140]]) + "\n", "utf-8")
    with open_store() as store:
        a = store.list_sessions()[0].id
        b = store.import_file(copy).session_id
        ensure_default_replay(store, b)
    assert a != b and _replays(a)[BUDGET_REPLAY_NAME] != _replays(b)[BUDGET_REPLAY_NAME]
    return a, b


def _select(at: AppTest, session_id: str, replay_name: str | None = None) -> AppTest:
    """Pick a session (and one of its replays) in the sidebar."""
    at.sidebar.selectbox(key="wb_session").select(session_id).run()
    if replay_name is not None:
        with open_store() as store:
            replay = store.replays.find(session_id, replay_name)
        assert replay is not None, replay_name
        at.sidebar.selectbox(key="wb_replay").select(replay.id).run()
    return at


def _open_on(session_id: str, page: str) -> AppTest:
    at = _select(AppTest.from_file(APP, default_timeout=180).run(), session_id)
    return at.switch_page(page).run()


def _replays(session_id: str) -> dict[str, int]:
    with open_store() as store:
        return {r.name: r.step_count for r in store.replays.list(session_id)}


def test_r_ui_4_templates_rerun_on_a_is_not_saved_under_b_after_switching(two_sessions):
    """R-REAL-7: Re-run the whole replay on A and save it there (stored under A only), switch the sidebar to
    B (and B's compacting replay), press "Save edited replay": nothing is stored under B."""
    a, b = two_sessions
    at = _select(AppTest.from_file(APP, default_timeout=180).run(), a, BUDGET_REPLAY_NAME)
    at.switch_page("../pages/templates.py").run()
    source = at.text_area(key="tpl_src_compaction").value
    assert source is not None
    at.text_area(key="tpl_src_compaction").input(source + EDIT).run()
    at.button(key="tpl_rerun_all").click().run()
    assert not at.exception, at.exception
    assert _keys(at.button, "tpl_save_replay")  # A's result is on screen, ready to save
    at.text_input(key="tpl_replay_name").input("edited on A").run()
    at.button(key="tpl_save_replay").click().run()  # saved on A: stored under A only
    assert not at.exception and "edited on A" in at.success[-1].value
    assert _replays(a)["edited on A"] == _replays(a)[BUDGET_REPLAY_NAME]
    assert "edited on A" not in _replays(b)
    before_a, before_b = _replays(a), _replays(b)

    _select(at, b, BUDGET_REPLAY_NAME)
    assert not at.exception, at.exception
    assert _keys(at.button, "tpl_rerun_all")  # B's page is ready to re-run B
    for name in _keys(at.text_input, "tpl_replay_name"):
        name.input("mixed up").run()
    for button in _keys(at.button, "tpl_save_replay"):
        button.click().run()
    assert not at.exception, at.exception
    assert _replays(b) == before_b  # nothing stored under B
    assert _replays(a) == before_a  # A's replays unchanged
    assert not _keys(at.button, "tpl_save_replay")  # A's result is not offered on B
    assert any("Press a re-run button" in c.value for c in at.caption)

    _select(at, a, BUDGET_REPLAY_NAME)  # back on A: the result was cleared by the switch
    assert not _keys(at.button, "tpl_save_replay")


def _keys(elements, key: str) -> list:
    return [e for e in elements if e.key == key]


def test_r_ui_6_configuration_results_follow_the_session(two_sessions):
    """R-REAL-7: Replay and save on A, switch to B: A's outcome and comparison are cleared, and "Replay and
    save" on B stores B's own replay under B (A's stays only under A)."""
    a, b = two_sessions
    at = _open_on(a, "../pages/configuration.py")
    at.text_input(key="cfg_replay_name").input("switch check").run()
    at.button(key="cfg_replay").click().run()
    assert not at.exception, at.exception
    assert any("switch check" in s.value for s in at.success)
    a_steps = _replays(a)["switch check"]
    at.button(key="cfg_compare").click().run()
    assert not at.exception and at.get("plotly_chart")

    at.sidebar.selectbox(key="wb_session").select(b).run()
    assert not at.exception, at.exception
    assert not any("switch check" in s.value for s in at.success)  # A's outcome is not shown
    assert not at.get("plotly_chart")  # nor A's comparison
    assert "switch check" not in _replays(b)
    at.button(key="cfg_replay").click().run()
    assert not at.exception, at.exception
    b_steps = _replays(b)["switch check"]
    with open_store() as store:
        b_responses = store.row_of(b).response_count
    assert b_steps == b_responses != a_steps
    assert _replays(a)["switch check"] == a_steps


def test_r_ui_4_save_service_refuses_a_replay_of_another_session(workbench_home):
    """R-REAL-7: The save service stores a computed replay only under the session it was computed for: a
    mismatch names both sessions and stores nothing (whatever page or CLI asks)."""
    with open_store() as store:
        a = store.import_file(ROOT / "sample_sessions" / "bugfix.jsonl").session_id
        b = store.import_file(ROOT / "sample_sessions" / "unanswered.jsonl").session_id
        _, bundle = replay_session(store.session(a))
        with pytest.raises(StorageError, match=f"computed for session '{a}'.*under session '{b}'"):
            save_replay_result(store, bundle, session_id=b, name="x", computed_for=a)
        with pytest.raises(StorageError, match=f"belong to session '{a}'.*under session '{b}'"):
            save_replay_result(store, bundle, session_id=b, name="x")
        assert not store.replays.list(b)
        info = save_replay_result(store, bundle, session_id=a, name="x", computed_for=a)
        assert info.session_id == a and info.step_count == store.row_of(a).response_count
