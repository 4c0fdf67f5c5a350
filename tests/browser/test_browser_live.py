"""Through a real browser (R-LIVE-1): a page left open on a session that `workbench watch` follows
shows a new response by itself, without a click, about a second after the store has it."""

from __future__ import annotations

import gzip
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from workbench.services.live import Watcher
from workbench.storage.store import open_store

REAL = (Path(__file__).resolve().parents[3] / "shared" / "real-sessions" / "claude_code"
        / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl.gz")
FIRST = 30_000


def test_r_live_1_an_open_page_shows_the_new_response_count_by_itself(page: Page, streamlit_factory,
                                                                       workbench_home, tmp_path):
    if not REAL.is_file():
        pytest.skip("../shared/real-sessions is absent")
    lines = gzip.decompress(REAL.read_bytes()).splitlines(keepends=True)
    live = tmp_path / "project" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    live.parent.mkdir()
    live.write_bytes(b"".join(lines[:400]))
    store = open_store()
    watcher = Watcher(store, [live.parent])
    (first,) = watcher.poll()

    url = streamlit_factory(workbench_home)  # the server reads the store the watcher writes
    page.goto(f"{url}/step-through?step={first.responses - 1}")  # on the newest step
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text(f"Live · {first.responses:,} responses")).to_be_visible(timeout=FIRST)
    expect(sidebar.get_by_text("Claude Code's compaction line 167,000")).to_be_visible()
    expect(page.get_by_role("heading", name=f"Step {first.responses - 1} of ")).to_be_visible()

    with live.open("ab") as out:  # the agent writes more responses
        out.write(b"".join(lines[400:900]))
    (second,) = watcher.poll()
    stored = time.monotonic()
    assert second.responses > first.responses
    expect(sidebar.get_by_text(f"Live · {second.responses:,} responses")).to_be_visible(timeout=10_000)
    shown_after = time.monotonic() - stored
    # the fragment looks every second; the rerun it starts draws the page again
    print(f"shown {shown_after:.2f} s after the store had it")
    assert shown_after < 4.0, f"shown {shown_after:.1f} s after the store had it"
    # the replay grew with the session, and a viewer on the newest step is on the newest step again
    last = second.responses - 1
    expect(page.get_by_role("heading", name=f"Step {last} of {last} ")).to_be_visible(timeout=10_000)
    # the replay picker names the grown replay (the browser had kept the old label)
    expect(sidebar.get_by_role("combobox", name="Replay")).to_have_value(
        re.compile(f"^default · {second.responses} steps"), timeout=10_000)
    expect(sidebar.get_by_role("combobox", name="Session")).to_have_value(
        re.compile(f" · {second.messages} msgs$"), timeout=10_000)
    store.close()
