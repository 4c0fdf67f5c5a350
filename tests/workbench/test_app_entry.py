"""The app's entry point runs around every page (R-UI-1, UX.md "Layout": the sidebar is the same on
every page). Streamlit would take ``workbench/ui/app.py`` for an old-style multipage app if a
``pages/`` folder stood beside it, until the entry script had called ``st.navigation`` once in the
process (``AppTest`` forgets that before every run): a page opened by address then ran on its own,
without the sidebar, and the session picker's choice was dropped at the end of the run. The pages
live in ``pages/`` at the top of the checkout (installed as ``workbench/pages``), two floors away
from ``workbench/ui/app.py``."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from workbench.storage.store import open_store
from workbench.ui import app
from workbench.ui.app import PAGES, PAGES_DIR

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
BUGFIX = ROOT / "sample_sessions" / "bugfix.jsonl"


def _sidebar(at: AppTest) -> tuple[list[str], list[object]]:
    """The sidebar's heading lines and the session picker's value(s)."""
    return ([m.value for m in at.sidebar.markdown if m.value == "**Context Workbench**"],
            [s.value for s in at.sidebar.selectbox if s.key == "wb_session"])


def test_r_ui_1_the_session_choice_survives_page_switches_and_reruns():
    """R-UI-1: after switching pages and interacting there, the sidebar is drawn once per run and
    keeps the chosen session; the page shows that session."""
    with open_store() as store:
        sid = store.import_file(BUGFIX).session_id
    at = AppTest.from_file(APP, default_timeout=90).run()
    assert _sidebar(at) == (["**Context Workbench**"], [sid])
    for page in ("../pages/messages.py", "../pages/sessions.py", "../pages/messages.py"):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        assert _sidebar(at) == (["**Context Workbench**"], [sid]), page
    at.number_input(key="wb_msg_page").set_value(2).run()  # a widget of the page: a plain rerun
    assert not at.exception, at.exception
    assert _sidebar(at) == (["**Context Workbench**"], [sid])
    assert not any("No session selected" in i.value for i in at.info)
    assert at.number_input(key="wb_msg_page").value == 2


def test_r_ui_1_a_page_file_run_on_its_own_is_left_alone():
    """R-UI-1: a page loaded as the main script (a test of one page) runs without the app around it."""
    at = AppTest.from_file(str(PAGES_DIR / "context.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    assert _sidebar(at) == ([], [])
    assert [t.value for t in at.title] == ["Context"]


def test_r_ui_1_no_pages_folder_beside_the_entry_script():
    """R-UI-1: no ``pages/`` folder sits beside ``app.py`` (Streamlit's old-style multipage discovery
    would run a page without the app around it); the pages are the top-level ``pages/`` the package
    ``workbench.pages`` links to, and every listed page is in it."""
    assert not (Path(app.__file__).resolve().parent / "pages").exists()
    assert PAGES_DIR.resolve() == ROOT / "pages"
    assert (ROOT / "workbench" / "pages").is_symlink()
    assert all((PAGES_DIR / name).is_file() for name, _ in PAGES)
