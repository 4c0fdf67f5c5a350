"""Through a real browser (R-UI-2, R-UI-3): open a sample, let the sidebar make its
replays, pick the 96k-budget replay, move to the step after its compaction, and see the applied
compaction, the checkpoint and (on the Compaction page) the cut point."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from workbench.services.replay import BUDGET_REPLAY_NAME
from workbench.storage.replays import replay_id_for
from workbench.storage.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl"
FIRST = 60_000
LATER = 60_000


def test_step_after_compaction_shows_cut_point_and_checkpoint(page: Page, streamlit_factory, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(SAMPLE).session_id
    replay_id = replay_id_for(session_id, BUDGET_REPLAY_NAME)
    url = streamlit_factory(home)
    page.goto(f"{url}/step-through")
    expect(page.get_by_role("heading", name="Step-through", exact=True)).to_be_visible(timeout=FIRST)
    expect(page.get_by_text("Step 0 of 67")).to_be_visible(timeout=FIRST)  # default replay made

    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").filter(has_text="Replay").click()
    page.get_by_role("option", name="budget 96k · 68 steps · extractive").click()
    expect(page).to_have_url(re.compile(f"replay={replay_id}"), timeout=LATER)
    box = page.get_by_label("Step number")
    expect(box).to_have_count(1, timeout=LATER)  # the rerun after the pick has finished
    box.fill("55")
    box.press("Enter")
    expect(page.get_by_text("Step 55 of 67")).to_be_visible(timeout=LATER)
    assert "step=55" in page.url
    expect(page.get_by_text("compaction — applied")).to_be_visible()
    # The checkpoint is shown in full (not only in the overview table's grid).
    expect(page.get_by_test_id("stText").filter(has_text="[Context Summary]").first).to_be_visible()

    page.get_by_role("button", name="▶").click()
    expect(page.get_by_text("Step 56 of 67")).to_be_visible(timeout=LATER)

    # The step timeline is a map: clicking a step's bar opens that step. It is drawn only while
    # its expander is open (a 2,000-bar chart re-sent on every step was the slow part).
    expect(page.get_by_test_id("stPlotlyChart")).to_have_count(0)
    page.get_by_text("Step timeline", exact=False).first.click()
    expect(page.get_by_test_id("stPlotlyChart")).to_be_visible(timeout=LATER)
    bar = page.get_by_test_id("stPlotlyChart").locator("g.point path").nth(20).bounding_box()
    assert bar is not None, "the bar of step 20 is drawn"
    page.mouse.click(bar["x"] + bar["width"] / 2, bar["y"] + bar["height"] / 2)  # plotly hit-tests
    expect(page.get_by_text("Step 20 of 67")).to_be_visible(timeout=LATER)

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compaction").click()
    expect(page.get_by_role("heading", name="Compaction", exact=True)).to_be_visible(timeout=LATER)
    chart = page.get_by_test_id("stPlotlyChart")
    expect(chart).to_be_visible(timeout=LATER)
    expect(chart.get_by_text("cut point")).to_be_visible()
    expect(page.get_by_text("[Context Summary]").first).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Checkpoint \(\d[\d,]* characters\)$"))).to_be_visible()


def test_r_ui_2_why_panel_opens_a_message_in_the_same_document(page: Page, streamlit_factory, tmp_path):
    """R-UI-2: a decision's "Open here" link opens the Messages page at that message without a
    new document (Streamlit's front end is not loaded again); the address carries the message."""
    home = tmp_path / "home"
    home.mkdir()
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(SAMPLE).session_id
    url = streamlit_factory(home)
    page.goto(f"{url}/step-through?session={session_id}&step=20")
    expect(page.get_by_text("Step 20 of 67")).to_be_visible(timeout=FIRST)
    stage = page.get_by_test_id("stExpander").filter(has=page.get_by_test_id("stPageLink")).first
    expect(stage).to_be_attached(timeout=LATER)
    link = stage.get_by_test_id("stPageLink").get_by_text(re.compile(r"^message #\d+$")).first
    if not link.is_visible():
        stage.locator("summary").click()  # a stage that only entered is closed
    expect(link).to_be_visible(timeout=LATER)
    index = int(link.inner_text().strip().removeprefix("message #"))
    idle = page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')
    expect(idle).to_have_count(1, timeout=LATER)  # the run that made the default replay is over
    page.evaluate("window.__wbSameDocument = true")
    link.click()
    expect(page.get_by_text(f"Opened from a link to message #{index}")).to_be_visible(timeout=LATER)
    expect(page).to_have_url(re.compile(rf"/messages\?.*message={index}"))
    assert page.evaluate("window.__wbSameDocument === true")  # no new document
