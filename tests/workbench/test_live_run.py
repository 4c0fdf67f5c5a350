"""``Watcher.run`` (R-LIVE-1): woken by watchdog's observers, it imports what a file holds when the
watch starts and each time the file grows, and ends when told to."""

from __future__ import annotations

import threading
from pathlib import Path

from waiting import wait_until

from workbench.services.live import LiveUpdate, Watcher
from workbench.storage.store import open_store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"


def test_r_live_1_run_follows_a_growing_file_until_stopped(tmp_path: Path):
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    live = tmp_path / "bugfix.jsonl"
    live.write_bytes(b"".join(lines[:4]))  # the header and three messages
    errors: list[Exception] = []
    updates: list[LiveUpdate] = []
    stop = threading.Event()
    with open_store() as store:
        watcher = Watcher(store, [live], replay=False, interval=0.2)
        thread = threading.Thread(target=watcher.run, args=(updates.append,), daemon=True,
                                  kwargs={"stop": stop, "on_error": lambda _p, e: errors.append(e)})
        thread.start()
        try:
            wait_until(lambda: [u.messages for u in updates] == [3] or errors, seconds=60,
                       what="the file as it was when the watch started")
            with live.open("ab") as out:
                out.write(b"".join(lines[4:]))
            wait_until(lambda: updates[-1].messages == len(lines) - 1 or errors, seconds=60,
                       what="the grown file")
        finally:
            stop.set()
            thread.join(timeout=60)
        assert not thread.is_alive() and not errors
        assert {u.session_id for u in updates} == {"bugfix-tally-march"}
        assert len(store.session("bugfix-tally-march").messages) == len(lines) - 1
