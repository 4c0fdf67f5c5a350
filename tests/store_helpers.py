"""Helpers for tests that start from a prepared store (see the ``long_store`` fixture)."""

from __future__ import annotations

import shutil
from pathlib import Path


def copy_store(source: Path, home: Path) -> None:
    """Copy a prepared store (database, WAL and lock files) into ``home``."""
    home.mkdir(parents=True, exist_ok=True)
    for file in source.glob("workbench.db*"):
        shutil.copy(file, home / file.name)
