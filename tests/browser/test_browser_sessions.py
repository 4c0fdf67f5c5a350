"""Through a real browser (R-UI-1): import a bundled sample on the Sessions page by path, then read
its messages on the Messages page."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"
FIRST = 30_000
LATER = 60_000


def test_r_ui_1_import_by_path_then_read_the_messages(page: Page, streamlit_factory, tmp_path):
    url = streamlit_factory(tmp_path / "home")  # its own empty store
    page.goto(url)
    expect(page.get_by_text("No sessions yet. Import a transcript or the bundled samples.")).to_be_visible(
        timeout=FIRST)
    page.get_by_role("tab", name="From a path").click()
    box = page.get_by_label("Paths (files or folders), one per line")
    box.fill(str(SAMPLE))
    box.press("Control+Enter")  # a text area reaches Streamlit on Ctrl+Enter or blur
    page.get_by_role("button", name="Import path").click()
    expect(page.get_by_text("Imported: Fix: monthly report drops the last day of the month")).to_be_visible(
        timeout=LATER)
    expect(page.get_by_test_id("stDataFrame")).to_be_visible()

    page.get_by_role("link", name="Messages").click()
    expect(page.get_by_role("heading", name="Messages")).to_be_visible(timeout=LATER)
    expect(page.get_by_text("The March report is missing money.").first).to_be_visible(timeout=LATER)
    expect(page.get_by_text("#0 · system")).to_be_visible()
    expect(page.get_by_text("Tool call").first).to_be_visible()
    assert "session=bugfix-tally-march" in page.url
