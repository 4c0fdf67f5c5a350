"""What the Messages page reads from the store (R-SES-1, R-SES-2): one stored session with its
title, the local token estimator and the session-wide estimate (counted once and stored)."""

from __future__ import annotations

from typing import Any

from iris.frozen import FrozenModel
from iris.session import Session
from iris.tokens import TokenEstimator, default_estimator
from pydantic import ConfigDict

from ..analysis.session_counts import compaction_requests, subagent_figures
from ..importers import SkippedLine
from ..storage.store import SessionSummary, Store

__all__ = ["OpenedSession", "open_session"]


class OpenedSession(FrozenModel):
    """One stored session as the Messages page shows it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # frozen, extra="forbid" from FrozenModel

    title: str
    session: Session
    estimator: TokenEstimator
    """The local estimator every per-message estimate on the page uses."""
    estimated_tokens: int
    """The session-wide local estimate (what ``workbench inspect`` reports)."""
    unplaced: tuple[SkippedLine, ...] = ()
    """The lines its import could not place in the conversation, each with why (R-TWIN-1)."""
    parent_id: str | None = None
    """The session this one belongs to (a sub-agent's parent), or None."""
    children: tuple[SessionSummary, ...] = ()
    """Its stored sub-agents (sessions whose parent it is)."""
    subagents: tuple[dict[str, Any], ...] = ()
    """Each tool call that ran a sub-agent with the sub-agent's figures
    (``workbench.analysis.session_counts.subagent_figures``)."""
    compaction_requests: tuple[dict[str, Any], ...] = ()
    """The recorded compactions whose summary call is recorded (``session_counts.compaction_requests``)."""


def open_session(store: Store, session_id: str) -> OpenedSession:
    """The stored session ``session_id`` (``StorageError`` when it is not stored)."""
    summary = store.get_summary(session_id)
    session = store.session(session_id)
    estimator = default_estimator()
    children = tuple(store.children(session_id))
    stored = {(child := store.session(c.id)).header.session_id: child for c in children}
    return OpenedSession(title=summary.title, session=session, estimator=estimator,
                         estimated_tokens=store.session_tokens(session_id, session.messages, estimator),
                         unplaced=store.unplaced(session_id), parent_id=summary.parent_id,
                         children=children, subagents=tuple(subagent_figures(session, stored)),
                         compaction_requests=tuple(compaction_requests(session)))
