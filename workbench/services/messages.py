"""What the Messages page reads from the store (R-SES-1, R-SES-2): one stored session with its
title, the local token estimator and the session-wide estimate (counted once and stored)."""

from __future__ import annotations

from iris.frozen import FrozenModel
from iris.session import Session
from iris.tokens import TokenEstimator, default_estimator
from pydantic import ConfigDict

from ..storage.store import Store

__all__ = ["OpenedSession", "open_session"]


class OpenedSession(FrozenModel):
    """One stored session as the Messages page shows it."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    title: str
    session: Session
    estimator: TokenEstimator
    """The local estimator every per-message estimate on the page uses."""
    estimated_tokens: int
    """The session-wide local estimate (what ``workbench inspect`` reports)."""


def open_session(store: Store, session_id: str) -> OpenedSession:
    """The stored session ``session_id`` (``StorageError`` when it is not stored)."""
    title = store.get_summary(session_id).title
    session = store.session(session_id)
    estimator = default_estimator()
    return OpenedSession(title=title, session=session, estimator=estimator,
                         estimated_tokens=store.session_tokens(session_id, session.messages, estimator))
