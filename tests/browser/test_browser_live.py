"""Through a real browser (R-LIVE-1): a page left open on a session that `workbench watch` follows
shows a new response by itself, without a click, about a second after the store has it."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from iris.errors import StorageError
from playwright.sync_api import Page, expect
from waiting import wait_until

from workbench.services.live import Watcher, live_version
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



def _response_ends(lines: list[bytes]) -> list[int]:
    """After which line each response of a Claude Code transcript has its first line (one
    response is split over lines that share its message id)."""
    seen: set[str] = set()
    ends = []
    for n, line in enumerate(lines, start=1):
        record = json.loads(line)
        if record.get("type") == "assistant" and (mid := record["message"].get("id")) not in seen:
            seen.add(mid)
            ends.append(n)
    return ends


def _settled(session_id: str) -> int | None:
    """The stored response count once the ``default`` replay covers it (None before)."""
    with open_store() as store:
        try:
            version = live_version(store, session_id)
        except StorageError:
            return None
    return version.responses if version.settled else None


def test_r_live_1_a_viewer_on_the_newest_step_follows_every_new_step(page: Page, streamlit_factory,
                                                                      workbench_home, tmp_path):
    """R-LIVE-1: while an agent appends to a transcript that a `workbench watch` process follows,
    a viewer on the newest step is on the newest step after every append (it was moved back one
    step and stopped following); a viewer who moved back stays where they are."""
    if not REAL.is_file():
        pytest.skip("../shared/real-sessions is absent")
    lines = gzip.decompress(REAL.read_bytes()).splitlines(keepends=True)
    live = tmp_path / "project" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    live.parent.mkdir()
    live.write_bytes(b"".join(lines[:300]))
    session_id = live.stem
    env = {**os.environ, "WORKBENCH_HOME": str(workbench_home)}
    watch = subprocess.Popen([sys.executable, "-m", "workbench.cli", "watch", str(live.parent),
                              "--interval", "0.3"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _settled(session_id), seconds=60, what="the first watched replay")
        responses = _settled(session_id) or 0
        url = streamlit_factory(workbench_home)
        page.goto(f"{url}/step-through?step={responses - 2}")
        sidebar = page.get_by_test_id("stSidebar")
        heading = page.get_by_role("heading", name=re.compile(r"^Step \d+ of \d+ "))
        expect(heading).to_have_text(re.compile(rf"^Step {responses - 2} of {responses - 1} "),
                                     timeout=FIRST)
        # the viewer steps on to the newest step with the slider's keyboard
        sidebar.get_by_role("slider").focus()
        page.keyboard.press("End")
        expect(heading).to_have_text(re.compile(rf"^Step {responses - 1} of {responses - 1} "))
        ends = iter(e for e in _response_ends(lines) if e > 300)
        end = 300

        def append_a_response() -> int:
            """The agent writes up to its next response; the watcher stores it and replays."""
            nonlocal end
            before = _settled(session_id) or 0
            start, end = end, next(ends)
            with live.open("ab") as out:
                out.write(b"".join(lines[start:end]))
            wait_until(lambda: (_settled(session_id) or 0) > before, seconds=30,
                       what="the default replay of the grown session")
            return _settled(session_id) or 0

        for burst in (1, 1, 3, 1, 2):  # the viewer sees each append, or only the last of a burst
            for _ in range(burst):
                responses = append_a_response()
            last = responses - 1
            expect(sidebar.get_by_text(f"Live · {responses:,} responses")).to_be_visible()
            expect(heading).to_have_text(re.compile(rf"^Step {last} of {last} "))
        # moved back: the viewer stays on the step they chose while the session grows
        for back in (last - 1, last - 2):
            sidebar.get_by_role("button", name="◀").click()
            expect(heading).to_have_text(re.compile(rf"^Step {back} of {last} "))
        responses = append_a_response()
        expect(sidebar.get_by_text(f"Live · {responses:,} responses")).to_be_visible()
        expect(heading).to_have_text(re.compile(rf"^Step {last - 2} of {responses - 1} "))
    finally:
        watch.terminate()
        watch.wait(timeout=30)
