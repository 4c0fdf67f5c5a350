"""What the Sessions page shows, as plain functions of records: the table of stored sessions and
the lines a lenient import skipped (imports themselves are ``workbench.services.imports``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import pandas as pd

from ..importers import SkippedLine

__all__ = ["SESSION_COLUMNS", "sessions_frame", "skipped_frame"]

SESSION_COLUMNS = ["Title", "Format", "Messages", "Responses", "Tokens (est.)", "Imported at", "ID"]


class SessionRow(Protocol):
    """What the table needs of a stored session (``workbench.storage.store.SessionSummary``)."""

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


class Skipped(Protocol):
    """What the skipped-line table needs of an import (``workbench.storage.store.ImportOutcome``)."""

    @property
    def skipped(self) -> tuple[SkippedLine, ...]: ...


def sessions_frame(summaries: Sequence[SessionRow]) -> pd.DataFrame:
    """The session list, one row per stored session."""
    rows = [[s.title, s.format, s.message_count, s.response_count, s.estimated_tokens,
             s.imported_at.replace("T", " ").removesuffix("+00:00") + " UTC", s.id] for s in summaries]
    return pd.DataFrame(rows, columns=SESSION_COLUMNS)


def skipped_frame(outcome: Skipped) -> pd.DataFrame:
    """Every line a lenient import skipped, with its problem."""
    return pd.DataFrame([[s.line, s.problem] for s in outcome.skipped], columns=["Line", "Problem"])
