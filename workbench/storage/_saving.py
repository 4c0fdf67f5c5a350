"""Which staged replays are still being saved: each save holds a shared advisory lock on
``<store>.saving`` while it writes, so a save that finds staged rows (``replays.saving``) and can
take that lock exclusively knows their saves died (a killed process releases its locks) and
removes them. Where ``fcntl`` is missing (Windows) no lock is taken and leftovers stay: they are
never listed, only their space is kept."""

from __future__ import annotations

import os
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ._sql import SQLDatabase

__all__ = ["lock_path", "saving_lock", "unheld"]


def lock_path(db: SQLDatabase) -> Path | None:
    """The lock file of the store ``db`` is open on (None for a store in memory)."""
    rows = db.execute("PRAGMA database_list").fetchall()
    found = next((str(r[2]) for r in rows if r[1] == "main" and r[2]), "")
    return Path(found + ".saving") if found else None


def _open(path: Path) -> IO[bytes] | None:
    """The lock file, opened without following a symlink planted in its place (None when it
    cannot be opened: no lock, and nothing is removed)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return None
    return os.fdopen(fd, "r+b")


@contextmanager
def saving_lock(path: Path | None) -> Generator[None]:
    """Hold the shared lock of a save in progress while the block runs."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    fh = _open(path) if path is not None else None
    if fh is None:
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_SH)
        yield


@contextmanager
def unheld(path: Path | None) -> Generator[bool]:
    """True inside the block when no save holds the lock (none is running, in any process): the
    exclusive lock is held until the block ends, so none starts meanwhile."""
    try:
        import fcntl
    except ImportError:
        yield False
        return
    fh = _open(path) if path is not None else None
    if fh is None:
        yield False
        return
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
