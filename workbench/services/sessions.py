"""The stored sessions as the pages read them (R-SES-5): the session list, one session, its header and
how many of its lines the import could not place. A page hands over the store the sidebar opened;
the store's methods are called by services, never by a page."""

from __future__ import annotations

from iris.session import Session, SessionHeader

from ..storage.store import SessionRow, Store

__all__ = ["session_header", "session_rows", "stored_session", "unplaced_count"]


def session_rows(store: Store) -> list[SessionRow]:
    """Every stored session, newest import first (the Sessions page's table)."""
    return store.list_sessions()


def stored_session(store: Store, session_id: str) -> Session:
    """The stored session, read once and then kept in the store's cache."""
    return store.session(session_id)


def session_header(store: Store, session_id: str) -> SessionHeader:
    """The stored session's header, without reading its messages."""
    return store.header(session_id)


def unplaced_count(store: Store, session_id: str) -> int:
    """How many lines of the session's transcript its import could not place (R-TWIN-1)."""
    return store.row_of(session_id).unplaced_count
