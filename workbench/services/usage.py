"""What the Usage page reads from the store (R-UI-5, R-TOK-6): the saved replay with its truth rows
and recorded compactions, and whether the session's estimate error means anything (a session whose
text is mostly redaction placeholders)."""

from __future__ import annotations

from ..analysis.replay_report import ErrorMeaning, error_meaning
from ..storage.store import Store
from .truth import ReplayTruth, replay_truth

__all__ = ["OpenedUsage", "open_usage"]


class OpenedUsage(ReplayTruth):
    """A saved replay as the Usage page shows it."""

    meaning: ErrorMeaning
    """Whether the session's estimate error means anything (redacted text)."""
    compaction_request: bool = False
    """The session is an agent's recorded compaction call (``SessionHeader.is_compaction_request``)."""


def open_usage(store: Store, session_id: str, replay_id: str) -> OpenedUsage:
    """The saved replay ``replay_id`` of ``session_id`` with what the Usage page needs."""
    truth = replay_truth(store, session_id, replay_id)
    session = store.session(session_id)
    return OpenedUsage(replay=truth.replay, steps=truth.steps, marks=truth.marks, runs=truth.runs,
                       meaning=error_meaning(session),
                       compaction_request=session.header.is_compaction_request)
