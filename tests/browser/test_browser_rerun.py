"""Browser flow (R-UI-4): open the Templates page on a replay that compacted, edit the compaction
template, re-run that step and see the side-by-side result: the rendered summary request diff and
the success condition for both snapshots; nothing is written to the workspace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect

from workbench.services.replay import BUDGET_REPLAY_NAME
from workbench.storage.replays import replay_id_for
from workbench.storage.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl"
SLOW = 60_000


def test_r_ui_4_edit_template_rerun_step_shows_side_by_side_diff(page: Page, streamlit_factory,
                                                                  tmp_path):
    home = tmp_path / "home"
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(SAMPLE).session_id
    url = streamlit_factory(home)
    page.goto(f"{url}/templates?session={session_id}"
              f"&replay={replay_id_for(session_id, BUDGET_REPLAY_NAME)}")
    heading = page.get_by_text(re.compile(r"Rendered with the variables of step \d+"))
    expect(heading).to_be_visible(timeout=SLOW)
    found = re.search(r"step (\d+)", heading.inner_text())
    assert found is not None
    step = int(found.group(1))

    editor = page.get_by_label("Template source")
    editor.fill(editor.input_value() + "\nALWAYS MENTION PENGUINS.\n")
    page.get_by_text("Diff against the saved template").click()  # blur: the edit reaches Streamlit
    expect(page.get_by_text("This view uses an edited snapshot")).to_be_visible(timeout=SLOW)

    page.get_by_role("button", name=f"Re-run step {step}").click()
    expect(page.get_by_text(f"original/summary-request-step-{step}.txt")).to_be_visible(timeout=SLOW)
    table = page.get_by_test_id("stTable")
    expect(table).to_be_visible()
    expect(table.get_by_text("success (≤ line and smaller)")).to_be_visible()
    expect(table.get_by_text("✓ untrimmed durable history after", exact=False)).to_have_count(2)
    expect(table.get_by_text("applied", exact=True)).to_have_count(2)
    assert "\\" not in table.inner_text()  # escaping never shows a backslash
    expect(page.get_by_text("The checkpoint text is identical")).to_be_visible()
    assert not (home / "workspace" / ".iris").exists()  # re-running saved nothing
