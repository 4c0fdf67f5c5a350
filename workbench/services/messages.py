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
from ..storage.store import SessionRow, Store

__all__ = ["OpenedSession", "open_session", "subagent_calls"]


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
    children: tuple[SessionRow, ...] = ()
    """Its stored sub-agents (sessions whose parent it is)."""
    subagents: tuple[dict[str, Any], ...] = ()
    """Each tool call that ran a sub-agent with the sub-agent's figures
    (``workbench.analysis.session_counts.subagent_figures``)."""
    compaction_requests: tuple[dict[str, Any], ...] = ()
    """The recorded compactions whose summary call is recorded (``session_counts.compaction_requests``)."""


def _children(store: Store, session_id: str) -> tuple[dict[str, Session], dict[str, str]]:
    """The stored sub-agents of ``session_id`` by their recorded session id, and each one's
    stored id (what a link opens)."""
    sessions: dict[str, Session] = {}
    ids: dict[str, str] = {}
    for c in store.children(session_id):
        child = store.session(c.id)
        sessions[child.header.session_id] = child
        ids[child.header.session_id] = c.id
    return sessions, ids


def subagent_calls(store: Store, session_id: str) -> dict[str, dict[str, Any]]:
    """Each tool call of the stored session that ran a sub-agent, by call id: the figures of
    :func:`~workbench.analysis.session_counts.subagent_figures` and ``stored_id``, the stored
    session the sub-agent's card links to (None while its transcript is not imported). Kept in
    the store's cache until the session or one of its sub-agents changes."""
    children = tuple((c.id, store.content_hash(c.id)) for c in store.children(session_id))

    def make() -> dict[str, dict[str, Any]]:
        stored, ids = _children(store, session_id)
        return {r["call_id"]: {**r, "stored_id": ids.get(r["session_id"])}
                for r in subagent_figures(store.session(session_id), stored)}
    return store.cached(session_id, ("subagent calls", children), make)


def open_session(store: Store, session_id: str) -> OpenedSession:
    """The stored session ``session_id`` (``StorageError`` when it is not stored)."""
    row = store.row_of(session_id)
    session = store.session(session_id)
    estimator = default_estimator()
    children = tuple(store.children(session_id))
    return OpenedSession(title=row.title, session=session, estimator=estimator,
                         estimated_tokens=store.session_tokens(session_id, session.messages, estimator),
                         unplaced=store.unplaced(session_id), parent_id=row.parent_id,
                         children=children,
                         subagents=tuple(subagent_calls(store, session_id).values()),
                         compaction_requests=tuple(compaction_requests(session)))
