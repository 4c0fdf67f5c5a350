"""Through a real browser (R-UI-2): a link with a step that is not a number (``²``, whose
``isdigit()`` is true) or an unknown session shows one line saying what is shown instead, never a
traceback, and the next page opened from the sidebar is clean (the bad value used to stay in the
URL and break every page)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from workbench.storage.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"
FIRST = 60_000


def test_r_ui_2_bad_link_parameters_give_one_line_and_no_traceback(page: Page, streamlit_factory,
                                                                    tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(SAMPLE).session_id
    url = streamlit_factory(home)

    page.goto(f"{url}/step-through?session={session_id}&step=%C2%B2")  # ?step=²
    expect(page.get_by_text("is not a step number; showing the first step")).to_be_visible(
        timeout=FIRST)
    expect(page.get_by_text("Step 0 of", exact=False).first).to_be_visible(timeout=FIRST)
    assert page.get_by_test_id("stException").count() == 0
    assert "step=0" in page.url  # the URL names what is shown
    page.get_by_role("link", name="Messages").click()
    expect(page.get_by_role("heading", name="Messages", exact=True)).to_be_visible(timeout=FIRST)
    expect(page.get_by_test_id("stException")).to_have_count(0)

    page.goto(f"{url}/messages?session=%3Cscript%3Ealert(1)%3C/script%3E")
    expect(page.get_by_text("No session `<script>alert(1)</script>` in the store", exact=False)
           .or_(page.get_by_text("No session <script>alert(1)</script> in the store")).first).to_be_visible(
        timeout=FIRST)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert f"session={session_id}" in page.url
