"""The store's folder and the files around it: a read-only WORKBENCH_HOME is read (R-SES-5), a full
disk is named as such instead of "disk I/O error" (R-SES-5), the live heartbeat is never written
through a symbolic link and an upload's temporary copy is removed after its import (R-BOUND-2).

Read-only and full folders are real file systems: a tmpfs mounted under the test's folder (then
remounted read-only, or filled), since permissions do not stop root; without root, the read-only
folder is made by its mode and the full-disk test is skipped (no mount)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Generator
from pathlib import Path

import pytest
from iris.errors import StorageError
from iris.safe_files import SymlinkRefusedError
from streamlit.testing.v1 import AppTest

from workbench.services.live import Watcher
from workbench.services.replay import replay_session
from workbench.storage.store import Store, open_store

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
SAMPLE = ROOT / "sample_sessions" / "bugfix.jsonl"
SESSION = "bugfix-tally-march"
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


def _mount(folder: Path, *options: str) -> None:
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(folder)],
                          check=False, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


@contextlib.contextmanager
def _tmpfs(folder: Path, size: str) -> Generator[Path]:
    folder.mkdir(parents=True)
    _mount(folder, f"size={size}", "mode=0755")
    try:
        yield folder
    finally:
        # lazily: a file a failed assertion left open must not leave the mount behind
        subprocess.run(["umount", "--lazy", str(folder)], check=True, capture_output=True)


@pytest.fixture
def sealable(tmp_path: Path) -> Generator[tuple[Path, Callable[[], None]]]:
    """A folder to fill, and the call that makes it read-only: a tmpfs remounted read-only as
    root, the folder's and its files' modes otherwise."""
    folder = tmp_path / "home"
    if ROOT_USER:
        with _tmpfs(folder, "32m"):
            def seal() -> None:
                subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True,
                               capture_output=True)
                assert not os.access(folder, os.W_OK)

            yield folder, seal
        return
    folder.mkdir()

    def chmod_seal() -> None:
        for f in folder.iterdir():
            f.chmod(0o444)
        folder.chmod(0o555)

    try:
        yield folder, chmod_seal
    finally:
        folder.chmod(0o755)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], check=False,
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


# ------------------------------------------------------------------ read-only WORKBENCH_HOME


def test_r_ses_5_a_read_only_home_is_read_by_sessions_replays_and_report(
        sealable: tuple[Path, Callable[[], None]], tmp_path: Path):
    """R-SES-5: a store whose folder became read-only is listed (`sessions`, `replays`) and
    reported (`report SESSION`, `report --replay`); nothing is created in it, and an import is
    refused with a StorageError saying the store is read-only."""
    home, seal = sealable
    with Store(home / "workbench.db") as store:
        store.import_file(SAMPLE)
        replay = store.replays.save(replay_session(store.session(SESSION))[1], session_id=SESSION,
                                    name="keep")
    seal()
    before = sorted(p.name for p in home.iterdir())

    listed = _cli(home, "sessions")
    assert listed.returncode == 0 and SESSION in listed.stdout, listed.stderr
    replays = _cli(home, "replays")
    assert replays.returncode == 0 and replay.id in replays.stdout, replays.stderr
    for args, out in ((("report", SESSION), "session.html"), (("report", "--replay", replay.id),
                                                               "replay.html")):
        done = _cli(home, *args, "--out", str(tmp_path / out))
        assert done.returncode == 0, done.stderr
        assert SESSION in (tmp_path / out).read_text(encoding="utf-8")
    refused = _cli(home, "import", str(ROOT / "sample_sessions" / "unanswered.jsonl"))
    assert refused.returncode != 0
    assert str(home / "workbench.db") in refused.stderr and "read-only" in refused.stderr
    assert sorted(p.name for p in home.iterdir()) == before


def test_r_ses_5_an_empty_read_only_home_is_no_store_yet_not_a_damaged_one(
        sealable: tuple[Path, Callable[[], None]]):
    """R-SES-5: a read-only WORKBENCH_HOME with no store in it says there is no store yet and the
    folder is read-only; it is not called a damaged database."""
    home, seal = sealable
    seal()
    with pytest.raises(StorageError) as err:
        Store(home / "workbench.db")
    message = str(err.value)
    assert message.startswith(f"{home}: no workbench store yet") and "read-only" in message
    assert "damaged" not in message and "not a SQLite" not in message
    listed = _cli(home, "sessions")
    assert listed.returncode != 0 and "no workbench store yet" in listed.stderr
    assert list(home.iterdir()) == []


def test_r_ses_5_a_read_only_store_of_an_older_schema_is_refused_by_name(
        sealable: tuple[Path, Callable[[], None]]):
    """R-SES-5: a read-only store that still needs a migration is not migrated (it cannot be) nor
    read with the wrong schema: a StorageError names the store and the missing migration."""
    home, seal = sealable
    db = home / "workbench.db"
    with Store(db) as store:
        last = store.db.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid DESC "
                                "LIMIT 1").fetchone()[0]
        store.db.execute("DELETE FROM _sqlite_migrations WHERE name = ?", [last])
        store.db.conn.commit()
    seal()
    with pytest.raises(StorageError) as err:
        Store(db)
    assert str(err.value).startswith(f"{db}: ") and last in str(err.value)
    assert "read-only" in str(err.value)


# ------------------------------------------------------------------ full disk


def _fill(folder: Path) -> None:
    """Take every free byte of the file system holding ``folder``."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except OSError as exc:
        assert exc.errno == 28  # ENOSPC
    try:
        while True:
            os.write(fd, b"x")
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.mark.skipif(not ROOT_USER, reason="mounting a small tmpfs needs root")
def test_r_ses_5_a_full_disk_is_said_to_be_full_not_a_disk_io_error(tmp_path: Path):
    """R-SES-5: on a really full file system (a 1 MiB tmpfs), opening the store, where SQLite
    answers "disk I/O error" (it cannot size its write-ahead log's index), and importing a session
    fail with a StorageError naming the store file and saying the disk is full; what was stored
    stays."""
    with _tmpfs(tmp_path / "small", "1m") as home:
        db = home / "workbench.db"
        with Store(db) as store:
            store.import_file(SAMPLE)
        _fill(home)
        with pytest.raises(StorageError) as err:
            Store(db)
        assert str(err.value).startswith(f"{db}: ") and "disk holding it is full" in str(err.value)
        assert "damaged" not in str(err.value)
        filler = home / "filler"
        os.truncate(filler, filler.stat().st_size - 400_000)  # room to open, not to import
        with Store(db) as store:
            _fill(home)
            with pytest.raises(StorageError) as err:
                store.import_file(ROOT / "sample_sessions" / "long_session.jsonl")
            assert str(err.value).startswith(f"{db}: ") and "disk holding the store is full" in str(err.value)
            assert [s.id for s in store.list_sessions()] == [SESSION]


# ------------------------------------------------------------------ the live heartbeat


def _beat_path(home: Path, session_id: str) -> Path:
    return home / "live" / hashlib.sha256(session_id.encode()).hexdigest()[:24]


def test_r_bound_2_the_heartbeat_is_not_written_through_a_planted_link(workbench_home: Path,
                                                                       tmp_path: Path):
    """R-BOUND-2: a symbolic link planted where `watch` writes a session's heartbeat is refused
    (a SymlinkRefusedError naming it); the file it points at is untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    beat = _beat_path(workbench_home, SESSION)
    beat.parent.mkdir(parents=True)
    beat.symlink_to(victim)
    with open_store() as store:
        watcher = Watcher(store, [SAMPLE], replay=False)
        with pytest.raises(SymlinkRefusedError) as err:
            watcher.poll()
    assert str(beat) in str(err.value)
    assert victim.read_text() == "precious\n" and beat.is_symlink()


def test_r_bound_2_the_heartbeat_is_not_written_into_a_linked_live_folder(workbench_home: Path,
                                                                          tmp_path: Path):
    """R-BOUND-2: a `live` folder that is a symbolic link is refused; nothing is written where it
    points."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    workbench_home.mkdir(parents=True)
    (workbench_home / "live").symlink_to(elsewhere, target_is_directory=True)
    with open_store() as store:
        watcher = Watcher(store, [SAMPLE], replay=False)
        with pytest.raises(SymlinkRefusedError) as err:
            watcher.poll()
    assert str(workbench_home / "live") in str(err.value)
    assert list(elsewhere.iterdir()) == []


def test_r_bound_2_the_heartbeat_is_still_written(workbench_home: Path):
    """R-BOUND-2: without links the heartbeat is written as before, with no temporary file left."""
    with open_store() as store:
        Watcher(store, [SAMPLE], replay=False).poll()
    beat = _beat_path(workbench_home, SESSION)
    assert beat.read_text(encoding="utf-8") == f"{SESSION}\n{SAMPLE}\n"
    assert [p.name for p in beat.parent.iterdir()] == [beat.name]


# ------------------------------------------------------------------ uploads


@pytest.mark.parametrize(("data", "imported"), [(SAMPLE.read_bytes(), True),
                                                (b'{"not": "a transcript"\n', False)])
def test_r_bound_2_an_uploaded_file_is_removed_after_its_import(data: bytes, imported: bool,
                                                                tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch):
    """R-BOUND-2: the Sessions page imports an upload from a temporary copy and removes it (and
    its folder) when the import ends, whether it succeeded or failed."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.file_uploader(key="wb_upload").upload("my run.jsonl", data).run()
    at.button(key="wb_import_upload").click().run()
    assert not at.exception
    assert (len(at.success), len(at.error)) == ((1, 0) if imported else (0, 1))
    with open_store() as store:
        sources = [s.source_path for s in store.list_sessions()]
    if imported:
        (source,) = sources
        assert source is not None and Path(source).parent.parent == temp
    assert [p.name for p in temp.iterdir() if p.name.startswith("workbench-upload-")] == []
