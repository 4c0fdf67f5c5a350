"""What the Sessions page shows, as plain functions of records: the table of stored sessions and
the lines a lenient import skipped (imports themselves are ``workbench.services.imports``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import pandas as pd

from ..analysis.words import counted
from ..importers import SkippedLine
from .markup import one_line

__all__ = ["AUTO_FORMAT", "SESSION_COLUMNS", "chosen_format", "import_line", "paths_from_text", "sessions_frame",
           "skipped_frame", "unplaced_frame", "unplaced_notice"]

#: The format box's first choice: let the importers recognise the file.
AUTO_FORMAT = "detect automatically"
SESSION_COLUMNS = ["Title", "Format", "Messages", "Responses", "Unplaced lines", "Tokens (est.)", "Imported at",
                   "Parent", "ID"]


class SessionRow(Protocol):
    """What the table needs of a stored session (``workbench.storage.store.SessionRow``)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def message_count(self) -> int: ...
    @property
    def response_count(self) -> int: ...
    @property
    def estimated_tokens(self) -> int | None: ...
    @property
    def imported_at(self) -> str: ...
    @property
    def unplaced_count(self) -> int: ...
    @property
    def parent_id(self) -> str | None: ...


class Imported(Protocol):
    """What the import line needs of an import (``workbench.storage.store.ImportOutcome``)."""

    @property
    def created(self) -> bool: ...
    @property
    def title(self) -> str | None: ...
    @property
    def session_id(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def message_count(self) -> int: ...
    @property
    def unplaced(self) -> tuple[SkippedLine, ...]: ...


class Skipped(Protocol):
    """What the skipped-line table needs of an import (``workbench.storage.store.ImportOutcome``)."""

    @property
    def skipped(self) -> tuple[SkippedLine, ...]: ...


def sessions_frame(sessions: Sequence[SessionRow]) -> pd.DataFrame:
    """The session list, one row per stored session."""
    rows = [[s.title, s.format, s.message_count, s.response_count, s.unplaced_count, s.estimated_tokens,
             s.imported_at.replace("T", " ").removesuffix("+00:00") + " UTC", s.parent_id or "", s.id]
            for s in sessions]
    return pd.DataFrame(rows, columns=SESSION_COLUMNS)


def skipped_frame(outcome: Skipped) -> pd.DataFrame:
    """Every line a lenient import skipped, with its problem."""
    return pd.DataFrame([[s.line, s.problem] for s in outcome.skipped], columns=["Line", "Problem"])


def unplaced_frame(lines: Sequence[SkippedLine]) -> pd.DataFrame:
    """Every line an import read but could not place in the conversation, with why."""
    return pd.DataFrame([[u.line, u.problem] for u in lines], columns=["Line", "Why it is not placed"])


def unplaced_notice(count: int) -> str | None:
    """The warning a session with unplaced lines carries on every page that shows it (R-TWIN-1);
    None when every line was placed."""
    if not count:
        return None
    return (f"{counted(count, 'line')} of this transcript could not be placed in the conversation and are not "
            "in it (each is listed with why on the Sessions page and by `workbench inspect --json`).")


def import_line(outcome: Imported) -> str:
    """The one line an import reports: new or already stored, title, format and size, and the
    lines it could not place when there are any."""
    verb = "Imported" if outcome.created else "Already stored (same content)"
    unplaced = f", {counted(len(outcome.unplaced), 'unplaced line')}" if outcome.unplaced else ""
    return (f"{verb}: {one_line(outcome.title or outcome.session_id)} — {outcome.format}, "
            f"{counted(outcome.message_count, 'message')}{unplaced}")


def paths_from_text(text: str) -> list[str]:
    """The non-blank lines of the paths box, each with ``~`` expanded."""
    return [str(Path(p.strip()).expanduser()) for p in text.splitlines() if p.strip()]


def chosen_format(choice: str) -> str | None:
    """The importer format of the format box's choice (None: detect automatically)."""
    return None if choice == AUTO_FORMAT else choice
