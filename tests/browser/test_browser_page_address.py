"""Through a real browser (R-UI-1, UX.md "Layout"): a server's first visitor opening a page's own
address (a shared link) gets the app around the page: the sidebar with the session picker and the
pages under their titles. Streamlit ran that first page on its own (an old-style multipage app,
because of the ``pages/`` folder beside the entry script) until the entry point had run once."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect

from workbench.storage.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"


def test_r_ui_1_first_visit_at_a_page_address_shows_the_sidebar(page: Page, streamlit_factory,
                                                                 tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with Store(home / "workbench.db") as store:
        sid = store.import_file(SAMPLE).session_id
    url = streamlit_factory(home)  # a fresh server: this is its first run
    page.goto(f"{url}/messages?session={sid}")
    expect(page.get_by_role("heading", name="Messages")).to_be_visible(timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text("Context Workbench")).to_be_visible()
    expect(sidebar.get_by_label("Session")).to_be_visible()
    links = sidebar.get_by_test_id("stSidebarNavLink")
    expect(links.first).to_have_text("Sessions")
    expect(links).to_have_count(11)
