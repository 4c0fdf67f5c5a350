"""Through a real browser (R-SES-1): the Messages page header's figures are readable at the
tests' 1280-pixel viewport — no metric label cut with an ellipsis."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from workbench.storage.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"
FIRST = 90_000

#: Labels whose text is wider than their box (cut by CSS with an ellipsis).
CUT = """() => [...document.querySelectorAll('[data-testid=stMetricLabel], [data-testid=stMetricLabel] *')]
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"""


def test_r_ses_1_messages_header_labels_are_not_cut(page: Page, streamlit_factory, tmp_path):
    home = tmp_path / "home"
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(SAMPLE).session_id
    url = streamlit_factory(home)
    page.goto(f"{url}/messages?session={session_id}")
    expect(page.get_by_role("heading", name="Messages", exact=True)).to_be_visible(timeout=FIRST)
    labels = page.get_by_test_id("stMetricLabel")
    expect(labels.get_by_text("Max prompt (provider)")).to_be_visible(timeout=FIRST)
    expect(labels).to_have_count(6)
    assert page.evaluate(CUT) == []
