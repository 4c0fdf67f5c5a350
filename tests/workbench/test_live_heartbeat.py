"""R-LIVE-1: a session stays live while `workbench watch` follows it, also while its agent writes
nothing: the app follows a live session only while the watcher's heartbeat is recent
(``LIVE_SECONDS``), and a watcher that beat only when a file changed let a viewer drop out of the
live view after ten quiet seconds (a long tool run), never to follow again."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from waiting import wait_until

from workbench.services.live import LIVE_SECONDS, Watcher, _heartbeat, is_live
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # waits several seconds of a quiet watcher

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"


def test_r_live_1_a_quiet_watched_session_stays_live(workbench_home, tmp_path):
    live = tmp_path / "project" / "bugfix.jsonl"
    live.parent.mkdir()
    live.write_bytes(SAMPLE.read_bytes())
    stop = threading.Event()
    with open_store() as store:
        watcher = Watcher(store, [live], interval=0.2, replay=False)
        seen: list[str] = []
        thread = threading.Thread(target=watcher.run, args=(lambda u: seen.append(u.session_id),),
                                  kwargs={"stop": stop}, daemon=True)
        thread.start()
        try:
            wait_until(lambda: seen, seconds=30, what="the first import")
            beat = _heartbeat(seen[0])
            first = beat.stat().st_mtime
            # nothing is written to the file; the heartbeat still moves on, well inside the
            # window the app counts as live
            wait_until(lambda: beat.stat().st_mtime >= first + 3, seconds=LIVE_SECONDS,
                       what="a heartbeat of a watcher with nothing to import", poll=0.2)
            assert is_live(seen[0])
        finally:
            stop.set()
            thread.join(timeout=30)
