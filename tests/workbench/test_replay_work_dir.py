"""The replay's work folder is private to one run (R-BOUND-1): a fresh ``tempfile.mkdtemp`` folder
under the user's cache (or the temporary folder), removed when the replay ends however it ends,
and the folders of runs that were killed are removed when the next replay starts. A file or a
folder someone planted at the old fixed name ``$TMPDIR/iris-replay-<uid>`` blocks nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from iris.replay import ReplayObservers, replay
from iris.session import Message, Session, SessionHeader, TextBlock
from iris.work_dir import claim_work_dir, clean_dead_work_dirs, work_root

ROOT = Path(__file__).resolve().parents[2]
SESSION = Session(header=SessionHeader(session_id="s1"),
                  messages=(Message(role="user", content=(TextBlock(text="hi"),)),
                            Message(role="assistant", content=(TextBlock(text="hello"),))))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("IRIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return tmp_path / "cache"


def test_r_bound_1_each_run_gets_a_fresh_private_folder_under_the_cache(cache: Path):
    """R-BOUND-1: two claims give two different folders (mode 0700) under <cache>/replays."""
    first, second = claim_work_dir(), claim_work_dir()
    assert first != second and first.parent == second.parent == cache / "replays"
    assert first.stat().st_mode & 0o777 == 0o700 and first.name.startswith(f"run-{os.getpid()}-")


def test_r_bound_1_a_file_at_the_old_fixed_name_blocks_nothing(cache: Path, monkeypatch):
    """R-BOUND-1: a plain file at $TMPDIR/iris-replay-<uid> (it used to fail every replay with
    FileExistsError) is ignored, with and without a cache folder."""
    planted = Path(tempfile.gettempdir()) / f"iris-replay-{os.getuid()}"
    planted.write_text("not a folder")
    assert replay(SESSION).preparations
    monkeypatch.setenv("IRIS_CACHE_DIR", "")
    assert work_root() == Path(tempfile.gettempdir())
    assert replay(SESSION).preparations
    assert planted.read_text() == "not a folder"
    assert [p.name for p in Path(tempfile.gettempdir()).iterdir()] == [planted.name]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown")
def test_r_bound_1_a_folder_another_user_made_blocks_nothing(cache: Path, monkeypatch):
    """R-BOUND-1: another user's folder at the old fixed name (it used to refuse every replay:
    "owned by another user") is not used and not needed."""
    monkeypatch.setenv("IRIS_CACHE_DIR", "")
    planted = Path(tempfile.gettempdir()) / f"iris-replay-{os.getuid()}"
    planted.mkdir()
    os.chown(planted, 12345, 12345)
    assert replay(SESSION).preparations
    assert not list(planted.iterdir())


def test_r_bound_1_the_folder_is_removed_when_the_replay_fails(cache: Path):
    """R-BOUND-1: a replay that raises still removes its folder."""
    def boom(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replay(SESSION, observers=ReplayObservers(progress=boom))
    assert list((cache / "replays").iterdir()) == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.slow  # starts a process
def test_r_bound_1_leftovers_of_dead_runs_are_removed_and_live_ones_kept(cache: Path):
    """R-BOUND-1: folders of runs whose process is gone are removed at the next start; the
    folders of live runs, other names and links are left alone."""
    root = work_root()
    dead = root / f"run-{_dead_pid()}-abc123"
    (dead / "tool-outputs").mkdir(parents=True)
    (dead / "tool-outputs" / "x.txt").write_text("x" * 1000)
    live = root / f"run-{os.getpid()}-def456"
    live.mkdir()
    other = root / "notes"
    other.mkdir()
    claim_work_dir()
    assert not dead.exists() and live.is_dir() and other.is_dir()
    assert clean_dead_work_dirs(root) == 0


@pytest.mark.slow  # starts a process
def test_r_bound_1_a_replay_killed_with_sigkill_leaves_nothing_after_the_next_start(cache: Path):
    """R-BOUND-1: a real replay process killed with SIGKILL mid-run leaves its folder (nothing
    runs on SIGKILL); the next replay removes it."""
    script = textwrap.dedent(f"""
        import sys, time
        sys.path[:0] = [{str(ROOT / "core")!r}, {str(ROOT)!r}]
        from iris.replay import ReplayObservers, replay
        from workbench.importers import load_session
        session = load_session({str(ROOT / "sample_sessions" / "long_session.jsonl")!r}).session
        def hold(done, total):
            print("running", flush=True)
            time.sleep(60)
        replay(session, observers=ReplayObservers(progress=hold))
    """)
    env = {**os.environ, "IRIS_CACHE_DIR": str(cache)}
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env=env)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "running"
        left = list((cache / "replays").iterdir())
        assert len(left) == 1 and left[0].name.startswith(f"run-{child.pid}-")
    finally:
        child.kill()
        child.wait()
    assert replay(SESSION).preparations
    assert list((cache / "replays").iterdir()) == []
