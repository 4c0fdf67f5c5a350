"""Saving a replay costs about what the replay costs and never holds the store's write lock for
the whole replay (R-BOUND-2).

A streamed save (``workbench replay --name``, the app) writes one chunk of steps per short
transaction under a row marked as being saved, and swaps it for the replay it replaces when it
finishes. These tests start a real save of a long generated session (``bench/tiny.py``) in
another process, wait until its first chunk is committed (polling the store file), then write
with a short busy timeout, and kill a save midway. The stored skeletons are checked against the
lines the value-by-value delta writes, and the save's Python function calls against the number
of steps (work counted, not timed; the CPU figures are the ``save_bound`` bench case's).
"""

from __future__ import annotations

import cProfile
import json
import pstats
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.services.replay import budget_96k_config, replay_and_save, stream_replay
from workbench.storage.store import Store

pytestmark = pytest.mark.slow  # starts processes and whole replays

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from tiny import tiny_session
from waiting import wait_until

_SAVE = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[3])
    from tiny import tiny_session
    from workbench.services.replay import replay_and_save
    from workbench.storage.store import Store

    store = Store(sys.argv[1])
    session_id, _ = store.save_session(tiny_session(int(sys.argv[2])), format="native",
                                       content_hash="long-" + sys.argv[2], source_path=None)
    replay_and_save(store, session_id, name="long")
""")


def _staged_chunks(path: Path) -> int:
    """Chunks committed under replays still being saved (read as any other reader of the file)."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=5)
    try:
        return conn.execute("SELECT count(*) FROM step_chunks c JOIN replays r ON r.n = "
                            "c.replay_n WHERE r.saving IS NOT NULL").fetchone()[0]
    except sqlite3.OperationalError:  # the store is still being created
        return 0
    finally:
        conn.close()


def _start_save(path: Path, messages: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _SAVE, str(path), str(messages),
                             str(ROOT / "bench")], cwd=ROOT)


def _small_session_stored(store: Store, tag: str) -> str:
    session_id, created = store.save_session(tiny_session(31), format="native",
                                             content_hash=f"small-{tag}", source_path=None)
    assert created
    return session_id


def test_r_bound_2_another_writer_writes_while_a_long_save_runs(tmp_path):
    """R-BOUND-2: while a long replay is being saved by another process, a write with a
    2-second busy timeout succeeds (the save is still running and unfinished when it does)."""
    path = tmp_path / "workbench.db"
    Store(path).close()  # created and migrated before the two processes share it
    save = _start_save(path, 9_001)  # 3,000 steps
    try:
        wait_until(lambda: _staged_chunks(path) > 0 or save.poll() is not None, seconds=300,
                   what="the save's first committed chunk")
        assert save.poll() is None, "the save ended before its first chunk was seen"
        with Store(path) as store:
            store.db.execute("PRAGMA busy_timeout = 2000")
            session_id = _small_session_stored(store, "during")
            info, _ = replay_and_save(store, session_id, name="short")  # a whole replay saved
            assert store.replays.list() == (info,)  # the replay being saved is not listed
        assert save.poll() is None and _staged_chunks(path) > 0  # written meanwhile, not after
    finally:
        save.kill()
        save.wait()


def test_r_bound_2_a_save_killed_midway_leaves_no_replay_and_is_removed_later(tmp_path):
    """R-BOUND-2: a save killed after its first chunk leaves no replay any reader lists or
    finds; the replay of that name saved before stays whole; the next save removes the
    unfinished rows and the request bodies only they used."""
    path = tmp_path / "workbench.db"
    with Store(path) as store:
        session_id, _ = store.save_session(tiny_session(6_001), format="native",
                                           content_hash="long-6001", source_path=None)
        # an earlier replay of the same name (another configuration)
        before = stream_replay(store.session(session_id), store=store, session_id=session_id,
                               name="long", config=budget_96k_config()).info
        assert before is not None
    save = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from workbench.services.replay import replay_and_save
        from workbench.storage.store import Store
        replay_and_save(Store({str(path)!r}), {session_id!r}, name="long")
        """)], cwd=ROOT)
    try:
        wait_until(lambda: _staged_chunks(path) > 0 or save.poll() is not None, seconds=300,
                   what="the save's first committed chunk")
        assert save.poll() is None, "the save ended before its first chunk was seen"
    finally:
        save.kill()
        save.wait()
    assert _staged_chunks(path) > 0  # what the killed save wrote is in the file
    with Store(path) as store:
        assert store.replays.list(session_id) == (before,)
        assert store.replays.find(session_id, "long") == before
        opened = store.replays.open(before.id)
        assert len(opened) == before.step_count
        other = _small_session_stored(store, "after")
        replay_and_save(store, other)  # the next streamed save removes the leftover rows
        assert _staged_chunks(path) == 0
        assert store.replays.list(session_id) == (before,)
        assert store.replays.open(before.id).request(opened.steps[-1].final_request_ref or "")


def test_r_bound_2_stored_request_lines_are_the_value_delta_lines(tmp_path):
    """R-BOUND-2: the request lines the writer carries from step to step are byte for byte the
    lines the value-by-value delta writes for the same skeletons (a replay with compactions,
    trims and folds, whose requests change in the middle and shrink)."""
    from workbench.storage._chunks import Chunk, lines, skeletons

    with Store(tmp_path / "workbench.db") as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        info, _ = replay_and_save(store, session_id, config=budget_96k_config())
        assert info.compactions_applied > 0
        rows = store.db.execute("SELECT c.requests FROM step_chunks c JOIN replays r ON "
                                "r.n = c.replay_n WHERE r.id = ? ORDER BY c.c", [info.id])
        checked = 0
        for (blob,) in rows.fetchall():
            stored = lines(blob)
            chunk = Chunk(0)
            for ref, skeleton in skeletons(stored):
                chunk.add_request(ref, skeleton)
            assert lines(chunk.row(final=True)["requests"]) == stored
            checked += len(stored)
        assert checked == info.step_count


def _save_calls(messages: int) -> tuple[int, int]:
    """(function calls of saving a streamed replay beyond the replay itself, steps) for a
    session of ``messages`` tiny messages whose requests grow with the history."""
    session = tiny_session(messages)
    store = Store(":memory:")
    try:
        session_id, _ = store.save_session(session, format="native", content_hash=f"c{messages}",
                                           source_path=None)
        loaded = store.session(session_id)
        warm = tiny_session(31)  # imports, vocabulary and templates: paid before either count
        stream_replay(warm)
        stream_replay(warm, store=store, session_id=session_id, name="warm")
        counted = []
        for save in (False, True):
            profile = cProfile.Profile()
            profile.enable()
            stream_replay(loaded, store=store if save else None, session_id=session_id,
                          name="x")
            profile.disable()
            counted.append(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]
        return counted[1] - counted[0], len(loaded.messages) // 3
    finally:
        store.close()


def test_r_bound_2_saving_work_grows_with_the_steps_not_their_square():
    """R-BOUND-2: the Python function calls a save adds to its replay grow linearly: four times
    the steps (each request four times longer) cost per step at most 1.15 times the calls of
    the smaller save (a writer that visits every message of every request grows four times)."""
    small, small_steps = _save_calls(1_201)
    large, large_steps = _save_calls(4_801)
    growth = (large / large_steps) / (small / small_steps)
    print(json.dumps({"calls_per_step": [small / small_steps, large / large_steps],
                      "growth": growth}))
    assert large_steps == 4 * small_steps
    assert growth <= 1.15, f"save calls per step grew {growth:.2f}x for 4x the steps"
