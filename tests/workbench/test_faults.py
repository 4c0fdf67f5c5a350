"""Faults: concurrent imports into one store, a process killed in the middle of an import,
a 50 MB single tool output, a summariser endpoint that hangs, and a corrupt store file (R-SES-5,
R-RED-8, R-CMP-8, R-PREP-1). Real processes, a real SQLite file and a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from iris.compaction import OpenAICompatibleSummariser
from iris.config import parse_config
from iris.replay import replay
from iris.session import (
    Session,
)
from streamlit.testing.v1 import AppTest

from workbench.importers.native import dump_session, load_native
from workbench.storage.store import Store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
APP = str(ROOT / "workbench" / "ui" / "app.py")
sys.path.insert(0, str(ROOT / "bench"))
from synth import synth_session

IMPORT = textwrap.dedent("""
    import sys, time
    from workbench.storage.store import Store
    db, path, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    time.sleep(max(0.0, start - time.time()))  # both processes begin together
    with Store(db) as store:
        out = store.import_file(path)
    print(out.session_id, out.created)
""")


def _run_together(db: Path, files: list[Path]) -> list[subprocess.CompletedProcess]:
    start = time.time() + 3.0
    procs = [subprocess.Popen([sys.executable, "-c", IMPORT, str(db), str(f), str(start)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for f in files]
    return [subprocess.CompletedProcess(p.args, p.wait(timeout=120), *p.communicate()) for p in procs]


def test_r_ses_5_two_processes_importing_into_one_store_both_succeed(tmp_path):
    """Two processes import different files into the same store at the same moment: both succeed
    and both sessions are stored whole."""
    db = tmp_path / "workbench.db"
    Store(db).close()  # created and migrated once, as `make run` does before any import
    done = _run_together(db, [SAMPLES / "long_session.jsonl", SAMPLES / "bugfix.jsonl"])
    assert [p.returncode for p in done] == [0, 0], [p.stderr for p in done]
    with Store(db) as store:
        stored = {s.id: s.message_count for s in store.list_sessions()}
        assert len(stored) == 2
        for sid, count in stored.items():
            assert len(store.session(sid).messages) == count


SAVE_REPLAYS = textwrap.dedent("""
    import sys, time
    # tests/: the evidence builders, after the engine's folder (tests/iris, a folder of tests,
    # would otherwise be found as a namespace package named iris)
    sys.path[:0] = [sys.argv[4].rsplit("/", 1)[0] + "/core"]
    sys.path.append(sys.argv[4])
    from evidence_builders import bundle
    from workbench.storage.store import Store
    db, who, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    evidence = bundle(steps=60)
    with Store(db) as store:
        time.sleep(max(0.0, start - time.time()))  # both processes begin together
        for i in range(4):
            store.replays.save(evidence, session_id="s1", name=f"{who}-{i}")
    print("saved")
""")


def test_r_prep_5_two_processes_saving_replays_at_once_both_succeed(tmp_path):
    """R-PREP-5 (evidence is stored): two processes saving replays into one store at the same
    moment both succeed (BEGIN IMMEDIATE waits for the write lock instead of failing with
    "database is locked"), and every replay is stored whole."""
    from evidence_builders import messages
    from iris.session import SessionHeader

    db = tmp_path / "workbench.db"
    with Store(db) as store:
        store.save_session(Session(header=SessionHeader(session_id="s1"), messages=messages()),
                           format="native", content_hash="sha256:s1", source_path=None)
    start = time.time() + 3.0
    procs = [subprocess.Popen([sys.executable, "-c", SAVE_REPLAYS, str(db), who, str(start),
                               str(ROOT / "tests")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for who in ("a", "b")]
    done = [subprocess.CompletedProcess(p.args, p.wait(timeout=120), *p.communicate()) for p in procs]
    assert [p.returncode for p in done] == [0, 0], [p.stderr[-2000:] for p in done]
    with Store(db) as store:
        replays = store.replays.list("s1")
        assert sorted(r.name for r in replays) == [f"{w}-{i}" for w in "ab" for i in range(4)]
        for info in replays:
            assert info.step_count == 60
            stored = store.replays.open(info.id)
            assert len(stored) == 60 and stored.preparation(59).step_index == 59


def test_r_ses_5_same_file_imported_twice_at_once_is_stored_once(tmp_path):
    """Both processes import the same file at once: both succeed, one session is stored."""
    db = tmp_path / "workbench.db"
    done = _run_together(db, [SAMPLES / "bugfix.jsonl"] * 2)
    assert [p.returncode for p in done] == [0, 0], [p.stderr for p in done]
    assert len({p.stdout.split()[0] for p in done}) == 1
    with Store(db) as store:
        assert len(store.list_sessions()) == 1


KILLER = textwrap.dedent("""
    import os, signal, sys
    import workbench.storage.store as store_module
    real, seen = store_module.canonical_dump, [0]
    def dying(message):  # the stored text of each message row
        seen[0] += 1
        if seen[0] == 700:  # after the first batch of messages went into the open transaction
            os.kill(os.getpid(), signal.SIGKILL)
        return real(message)
    store_module.canonical_dump = dying
    with store_module.Store(sys.argv[1]) as store:
        store.import_file(sys.argv[2])
""")


def test_r_ses_5_import_killed_midway_leaves_no_half_session(tmp_path):
    """A process SIGKILLed while writing a session leaves a store that opens, holds no part of that
    session, and imports the same file again cleanly."""
    src = dump_session(synth_session(responses=450, seed=3), tmp_path / "synth.jsonl")
    db = tmp_path / "workbench.db"
    with Store(db) as store:
        kept = store.import_file(SAMPLES / "bugfix.jsonl").session_id
    proc = subprocess.run([sys.executable, "-c", KILLER, str(db), str(src)], capture_output=True, timeout=300, check=False)
    assert proc.returncode == -signal.SIGKILL
    with Store(db) as store:
        assert [s.id for s in store.list_sessions()] == [kept]
        orphans = list(store.db.query("SELECT COUNT(*) AS n FROM messages WHERE session_id != ?", [kept]))
        assert orphans[0]["n"] == 0
        again = store.import_file(src)
        assert again.created and len(store.session(again.session_id).messages) == again.message_count


def test_r_red_8_fifty_megabyte_tool_output_stays_within_inline_budget(tmp_path):
    """R-RED-8: one 50 MB tool result is saved to a file with a preview in the request; the request
    stays far under its budget and the replay's extra memory stays within a few times the output."""
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        from measure import peak_rss_bytes, reset_peak, rss_bytes
        from iris.replay import ReplayEnvironment, replay
        from iris.session import *
        line = "    total = compute_total(invoice, tax_rate) + 42  # keep the rounding stable\\n"
        big = line * (50 * 1024 * 1024 // len(line))
        msgs = (Message(role="user", content=(TextBlock(text="show the log"),)),
                Message(role="assistant", content=(ToolCallBlock(id="c1", name="Bash",
                        arguments={"command": "cat build.log"}),)),
                Message(role="tool", content=(ToolResultBlock(call_id="c1", text=big),)),
                Message(role="assistant", content=(TextBlock(text="done"),)))
        s = Session(header=SessionHeader(session_id="big", limits=ModelLimits(context=200000, output=8000)),
                    messages=msgs)
        reset_peak(); base = rss_bytes()
        r = replay(s, environment=ReplayEnvironment(work_dir=sys.argv[2]))
        p = r.preparations[-1]
        req = r.request(p)
        print(p.phase, p.final_input_tokens, p.input_budget, (peak_rss_bytes() - base), len(big),
              max(len(b.text) for m in req.messages for b in m.content if b.type == "tool_result"))
    """)
    out = subprocess.run([sys.executable, "-c", script, str(ROOT / "bench"), str(tmp_path / "s")],
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    phase, tokens, budget, peak, size, shown = out.stdout.split()
    assert phase == "ready" and int(tokens) < int(budget) // 10
    assert int(shown) <= 51_200  # the preview, not the body (inline budget 50 KiB)
    assert int(peak) < 6 * int(size), f"peak {int(peak) / 2**20:.0f} MB for a {int(size) / 2**20:.0f} MB output"
    saved = list((tmp_path / "s" / "tool-outputs").iterdir())
    assert len(saved) == 1 and saved[0].stat().st_size == int(size)


class _Hanging(BaseHTTPRequestHandler):
    release = threading.Event()

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.release.wait(60)  # never answers while the test runs

    def log_message(self, *args):
        pass


def test_r_cmp_8_hanging_summariser_hits_timeout_and_the_replay_goes_on():
    """R-CMP-8/R-PREP-1: an endpoint that never answers costs `timeout_seconds` per attempt; the
    step is failed in stage compaction with kind 'timeout', nothing is compacted, and every later
    step is still prepared."""
    session = load_native(SAMPLES / "long_session.jsonl")
    first = replay(session, parse_config({"compaction": {"input_budget_tokens": 96000}})).checkpoints[0].step_index
    end = session.index.batches[first + 1].assistant_message + 1
    head = Session(header=session.header, messages=session.messages[:end])
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hanging)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cfg = parse_config({"compaction": {"input_budget_tokens": 96000, "timeout_seconds": 0.5}})
        started = time.perf_counter()
        r = replay(head, cfg, summariser=OpenAICompatibleSummariser(
            f"http://127.0.0.1:{server.server_port}/v1", "hangs"))
        elapsed = time.perf_counter() - started
    finally:
        _Hanging.release.set()
        server.shutdown()
        server.server_close()
    failed = [p for p in r.preparations if p.phase == "failed"]
    assert failed and all(p.error is not None and p.error.kind == "timeout"
                          and p.error.stage == "compaction" for p in failed)
    assert not r.checkpoints and len(r.preparations) == len(head.index.batches)
    assert elapsed < 0.5 * len(failed) + 30


def _corrupt(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    db = home / "workbench.db"
    db.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))  # a damaged header, not a database
    return db


def test_r_ses_5_corrupt_store_cli_gives_a_clear_error(tmp_path):
    """A corrupt store file: the CLI prints one line naming the file, exits non-zero, no traceback."""
    db = _corrupt(tmp_path / "home")
    env = {**os.environ, "WORKBENCH_HOME": str(tmp_path / "home")}
    env.pop("WORKBENCH_DEBUG", None)
    for args in (["sessions"], ["import", str(SAMPLES / "bugfix.jsonl")]):
        out = subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True,
                             text=True, env=env, timeout=120, check=False)
        assert out.returncode != 0
        assert str(db) in out.stderr and "Traceback" not in out.stderr + out.stdout
    with pytest.raises(sqlite3.DatabaseError):  # and the file was left as it was
        sqlite3.connect(db).execute("SELECT * FROM sqlite_master").fetchall()


@pytest.mark.parametrize("page_file", ["step_through.py", "sessions.py", "compaction.py"])
def test_r_ses_5_corrupt_store_page_shows_an_error_not_a_traceback(page_file, workbench_home):
    """A corrupt store file: every page shows a message naming the file instead of crashing."""
    db = _corrupt(workbench_home)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(str(ROOT / "pages" / page_file)).run()
    assert not at.exception
    assert any(str(db) in e.value for e in at.error)
