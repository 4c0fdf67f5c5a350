"""Smaller bounds and honest messages on odd input (R-BOUND-1, R-SES-2): concurrent imports of
two files with one session id, non-regular files given as a file, a UTF-8 byte order mark, terminal
escapes in listed titles, a full disk naming the store file."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from evidence_builders import bundle
from iris.errors import SessionFormatError, StorageError
from iris.session import Message, Session, SessionHeader, TextBlock

from workbench.importers import load_session
from workbench.importers.native import dump_session
from workbench.storage.store import Store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_sessions" / "bugfix.jsonl"


def _session(session_id: str, text: str, title: str = "", turns: int = 1) -> Session:
    pairs = [(Message(role="user", content=(TextBlock(text=f"{text} {i}"),)),
              Message(role="assistant", content=(TextBlock(text="ok"),))) for i in range(turns)]
    return Session(header=SessionHeader(session_id=session_id, title=title or session_id),
                   messages=tuple(m for pair in pairs for m in pair))


# ------------------------------------------------------------------ concurrent imports


def test_r_ses_2_concurrent_imports_of_one_session_id_all_succeed_with_distinct_ids(tmp_path):
    """R-SES-2: six processes import six different files carrying the same session id at the
    same moment into one store: each is stored (one keeps the id, the others get a suffix), as
    when they are imported one after the other; no "UNIQUE constraint failed"."""
    # thousands of messages: each insert holds the write lock long enough for the others to
    # choose their id meanwhile
    files = [dump_session(_session("same-id", f"text {i}", turns=3000), tmp_path / f"f{i}.jsonl")
             for i in range(6)]
    db = tmp_path / "store.db"
    Store(db).close()
    go = tmp_path / "go"
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        sys.path[:0] = [{str(ROOT / "core")!r}, {str(ROOT)!r}]
        from workbench.storage.store import Store
        store = Store({str(db)!r})
        print("ready", flush=True)
        while not Path({str(go)!r}).exists():
            time.sleep(0.002)
        print(store.import_file(sys.argv[1]).session_id)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(f)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for f in files]
    for p in procs:  # every process has opened the store and waits for the signal
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [err for _, err in outs]
    ids = sorted(out.strip() for out, _ in outs)
    assert len(set(ids)) == 6 and "same-id" in ids
    assert all(i == "same-id" or i.startswith("same-id-") for i in ids)
    with Store(db) as store:
        assert len(store.list_sessions()) == 6


# ------------------------------------------------------------------ what the path is


def test_r_ses_2_a_folder_given_as_a_file_says_it_is_a_folder(tmp_path):
    """R-SES-2: a directory is "a folder, not a file", not "no such file"."""
    with pytest.raises(SessionFormatError, match="is a folder, not a file"):
        load_session(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_r_ses_2_a_fifo_given_as_a_file_says_it_is_a_named_pipe(tmp_path):
    """R-SES-2: a named pipe is refused as such (and nothing blocks reading it)."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(SessionFormatError, match="is a named pipe"):
        load_session(fifo)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_r_ses_2_a_device_given_as_a_file_says_it_is_a_device():
    """R-SES-2: /dev/zero is "a device, not a regular file" (it would be read for ever)."""
    with pytest.raises(SessionFormatError, match="is a device"):
        load_session("/dev/zero")


def test_r_ses_2_a_missing_file_is_still_no_such_file(tmp_path):
    with pytest.raises(SessionFormatError, match="no such file"):
        load_session(tmp_path / "absent.jsonl")


# ------------------------------------------------------------------ byte order mark


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_r_ses_2_a_utf8_byte_order_mark_is_accepted_and_stripped(tmp_path, gz):
    """R-SES-2: a transcript saved with a UTF-8 BOM (Windows editors) imports exactly like the
    same file without it: same format, messages and content hash."""
    import gzip

    data = SAMPLE.read_bytes()
    path = tmp_path / ("bom.jsonl.gz" if gz else "bom.jsonl")
    path.write_bytes(gzip.compress(b"\xef\xbb\xbf" + data) if gz else b"\xef\xbb\xbf" + data)
    plain, with_bom = load_session(SAMPLE), load_session(path)
    assert with_bom.format == plain.format
    assert with_bom.session.messages == plain.session.messages
    assert with_bom.content_hash == plain.content_hash


# ------------------------------------------------------------------ terminal escapes


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], check=False, capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)


def test_r_ses_2_sessions_listing_escapes_terminal_sequences(tmp_path):
    """R-SES-2: a title holding ESC sequences, a bell, a C1 control and a bidi override is listed
    escaped (as inspect's JSON spells them), in the table and in --csv."""
    title = "hi \x1b[31mRED\x1b[0m \x07 \x9b2J \u202eevil"
    path = dump_session(_session("esc", "x", title=title), tmp_path / "esc.jsonl")
    assert _cli(tmp_path / "home", "import", str(path)).returncode == 0
    for args in (("sessions",), ("sessions", "--csv")):
        out = _cli(tmp_path / "home", *args).stdout
        assert "esc" in out
        assert not any(c in out for c in "\x1b\x07\x9b\u202e"), repr(out)
        assert "\\u001b[31mRED" in out and "\\u202eevil" in out


# ------------------------------------------------------------------ full disk


def _fill(store: Store) -> None:
    """Let the store's file grow by no more than a few pages, with no free page left inside it
    (VACUUM; a compressed replay of a few hundred steps fits in the free pages a new store has):
    SQLite then answers every larger write with SQLITE_FULL, "database or disk is full", as on a
    full disk."""
    store.db.execute("VACUUM")
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages + 2}")


def test_r_ses_2_a_full_disk_names_the_store_file(tmp_path):
    """R-SES-2: importing a session and saving a replay on a full disk fail with a StorageError
    naming the store file and saying the disk is full; nothing is half written."""
    db = tmp_path / "store.db"
    big = dump_session(_session("big", "x" * 200_000), tmp_path / "big.jsonl")
    with Store(db) as store:
        store.save_session(_session("s1", "small"), format="native", content_hash="sha256:1",
                           source_path=None)
        _fill(store)
        with pytest.raises(StorageError) as err:
            store.import_file(big)
        assert str(db) in str(err.value) and "full" in str(err.value)
        with pytest.raises(StorageError) as err:
            store.replays.save(bundle(steps=200), session_id="s1", name="default")
        assert str(db) in str(err.value) and "full" in str(err.value)
        assert [s.id for s in store.list_sessions()] == ["s1"]
        assert not store.replays.list("s1")
