"""Which files of a directory are session files (for ``workbench import DIR``)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SESSION_SUFFIXES", "is_session_file", "session_files"]

#: File name endings imported from a directory (each also gzip-compressed, with ``.gz``).
SESSION_SUFFIXES = (".jsonl", ".json", ".traj", ".ndjson")


def is_session_file(path: Path) -> bool:
    """A visible file whose name ends in a session suffix (optionally followed by ``.gz``)."""
    name = path.name.lower().removesuffix(".gz")
    return not path.name.startswith(".") and name.endswith(SESSION_SUFFIXES)


def session_files(directory: Path) -> list[Path]:
    """Every session file under ``directory``, recursively, in path order; hidden files and
    folders (``.git``, ``.venv``, …) are skipped."""
    found = []
    for path in directory.rglob("*"):
        rel = path.relative_to(directory).parts
        if any(part.startswith(".") for part in rel[:-1]):
            continue
        if path.is_file() and is_session_file(path):
            found.append(path)
    return sorted(found)
