"""The replay's private work folder: one fresh folder per run, and no leftovers of killed runs.

A replay without a session folder of its own writes reduced artifacts, tool outputs and archives to
a folder it removes when it ends. That folder is made by :func:`tempfile.mkdtemp` (a random name,
created atomically with mode 0700), so nobody can plant a file, a link or a folder of their own at
its name beforehand. It lives in ``<cache>/replays`` (the user's cache folder, see
:func:`iris.vocabulary.cache_dir`), or directly in the temporary folder when the cache is turned
off (``IRIS_CACHE_DIR=""``) or cannot be made.

A run killed with SIGKILL (or any signal Python does not turn into an exception) cannot remove its
folder. Each folder is named ``run-<pid>-<random>``, and every new run first removes the folders
of this user whose process no longer exists (:func:`clean_dead_work_dirs`). Nothing the engine
records names the folder: reduced bodies refer to it as ``<session_dir>``.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from .errors import StorageError
from .safe_files import ensure_private_dir
from .vocabulary import cache_dir

__all__ = ["claim_work_dir", "clean_dead_work_dirs", "work_root"]

_PREFIX = "run-"
_NAME = re.compile(r"run-(\d+)-[A-Za-z0-9_]+\Z")


def work_root() -> Path:
    """``<cache>/replays`` (private, made when missing), else the temporary folder."""
    cache = cache_dir()
    if cache is not None:
        try:
            return ensure_private_dir(cache / "replays")
        except (OSError, StorageError):
            pass  # a read-only or foreign cache: fall back to a random folder in the temp folder
    return Path(tempfile.gettempdir())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a process of another user holds the number
    return True


def clean_dead_work_dirs(root: Path) -> int:
    """Remove the ``run-<pid>-…`` folders in ``root`` that this user owns and whose process is
    gone; links, other names and other users' folders are left alone. Returns how many."""
    if not hasattr(os, "getuid"):
        return 0  # no cheap liveness check (os.kill would end the process on Windows)
    removed = 0
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    for entry in entries:
        match = _NAME.match(entry.name)
        if match is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
                or _alive(int(match.group(1)))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    return removed


def claim_work_dir() -> Path:
    """A new private folder for one replay (leftovers of dead runs removed first)."""
    root = work_root()
    clean_dead_work_dirs(root)
    return Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=root))
