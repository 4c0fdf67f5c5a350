"""The Templates page never acts on a broken template (R-UI-4, R-PRM-3): while the edited template
does not compile, **Re-run** and **Save edited replay** are off with the reason above them (they
used to re-run the last good snapshot on both sides and save it under the edit's name); fixing the
template turns them on again. And a replay that is saved at its end is finished before a reload or
a rerun stops the page (``page_guards.finish_first``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import copy_store
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.testing.v1 import AppTest

from workbench.services.replay import BUDGET_REPLAY_NAME
from workbench.storage.store import open_store
from workbench.ui.guards import finish_first

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
PAGE = "../pages/templates.py"
EDIT = "\nALWAYS MENTION PENGUINS.\n"
BROKEN = "\n{% if %}\n"


@pytest.fixture
def page(workbench_home, long_store) -> AppTest:
    """The Templates page on the long sample's ``budget 96k`` replay (it compacts)."""
    copy_store(long_store, workbench_home)
    with open_store() as store:
        session_id = store.list_sessions()[0].id
        replay = store.replays.find(session_id, BUDGET_REPLAY_NAME)
    assert replay is not None
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.selectbox(key="wb_replay").select(replay.id).run()
    return at.switch_page(PAGE).run()


def _disabled(at: AppTest, key: str) -> bool:
    return at.button(key=key).proto.disabled


def test_a_syntax_error_turns_rerun_off_with_the_reason(page):
    """R-UI-4: with a Jinja syntax error shown, both re-run buttons are off and say why; the fixed
    template turns them on again."""
    source = page.text_area(key="tpl_src_compaction").value
    assert not _disabled(page, "tpl_rerun_step") and not _disabled(page, "tpl_rerun_all")
    page.text_area(key="tpl_src_compaction").input(source + BROKEN).run()
    assert not page.exception
    assert page.error and "compaction" in page.error[0].value
    assert _disabled(page, "tpl_rerun_step") and _disabled(page, "tpl_rerun_all")
    assert any("re-running and saving are off until it renders" in w.value for w in page.warning)
    page.text_area(key="tpl_src_compaction").input(source + EDIT).run()
    assert not _disabled(page, "tpl_rerun_step") and not _disabled(page, "tpl_rerun_all")


def test_a_syntax_error_turns_save_edited_replay_off(page):
    """R-UI-4: a whole re-run's result on screen cannot be saved while the edit is broken (it would
    be stored as edited); it can again once the template renders."""
    source = page.text_area(key="tpl_src_compaction").value
    page.text_area(key="tpl_src_compaction").input(source + EDIT).run()
    page.button(key="tpl_rerun_all").click().run()
    assert not page.exception and not _disabled(page, "tpl_save_replay")
    page.text_area(key="tpl_src_compaction").input(source + EDIT + BROKEN).run()
    assert _disabled(page, "tpl_save_replay")
    with open_store() as store:
        before = len(store.replays.list())
    page.text_area(key="tpl_src_compaction").input(source + EDIT).run()
    assert not _disabled(page, "tpl_save_replay")
    page.button(key="tpl_save_replay").click().run()
    with open_store() as store:
        assert len(store.replays.list()) == before + 1


def test_finish_first_completes_the_work_then_stops():
    """R-UI-6: a stop signal raised by a progress report (a reload) does not cut the work short:
    every step runs, the result is kept, and the signal is raised after the block."""
    calls: list[float] = []
    done: list[str] = []

    def report(fraction: float, label: str) -> None:
        calls.append(fraction)
        if fraction >= 0.5:
            raise StopException()

    with pytest.raises(StopException), finish_first(report) as guarded:
        for i in range(10):
            guarded(i / 10, f"step {i}")
        done.append("saved")
    assert done == ["saved"]
    assert calls == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]  # the bar stops moving after the signal


def test_finish_first_lets_an_error_of_the_work_out():
    """R-UI-6: the work's own error is raised as it is (the page's error boundary shows it)."""
    with pytest.raises(ValueError, match="broken"), finish_first(lambda f, t: None) as guarded:
        guarded(0.1, "x")
        raise ValueError("broken")
