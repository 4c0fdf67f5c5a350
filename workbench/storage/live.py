"""A stored session that grows while its agent writes the transcript (``workbench watch``).

An import stores a file's content once, under its content hash; a transcript that grows has a new
hash at every write. For a watched file the store keeps one session per source file instead: the
grown transcript replaces the stored session's row in place, under the same id, and only the
messages whose stored form changed are written (new ones appended; one an agent is still
completing, e.g. an assistant message whose parallel tool calls arrive line by line, rewritten).
Everything is one write transaction: a reader sees the session as it was or as it is now, never
half of it.

Only growth is written in place (R-LIVE-2): the new content must carry the stored session's id and
hold every stored message, each unchanged or grown (same role and id, its content blocks followed by
more). Content that does not (a file cut short, replaced by another transcript, or with another
beginning) is refused by :func:`update_session` without writing anything, so the stored session and
the replays saved on it stay as they were; the caller stores that content as a new session.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from iris.session import Message, Session, SessionHeader

from ..importers import SkippedLine
from ._fast_json import canonical_dump
from ._sql import guard, write_transaction
from .store import Store

__all__ = ["extends", "session_of_source", "update_session"]


def session_of_source(store: Store, source_path: str | Path) -> str | None:
    """The id of the session last stored (or updated) from ``source_path`` (a resolved path), or
    None; of two stored in the same second, the one stored last."""
    with guard("looking up a source file", store.path):
        rows = list(store.db.query(
            "SELECT id FROM sessions WHERE source_path = ? ORDER BY imported_at DESC, rowid DESC "
            "LIMIT 1",
            [str(source_path)]))
    return rows[0]["id"] if rows else None


def _grown(stored: Message, new: Message) -> bool:
    """True when ``new`` is ``stored`` completed: same role and id, its content blocks first."""
    return (stored.role == new.role and stored.id == new.id
            and new.content[:len(stored.content)] == stored.content)


def extends(stored_id: str, stored: Sequence[str], session: Session, texts: Sequence[str]) -> bool:
    """True when ``session`` (its messages' stored forms ``texts``) is the stored session grown:
    the same session id (``stored_id``, the stored header's), and every stored message (their
    stored forms ``stored``, in order) unchanged or grown into the message at its place."""
    if session.header.session_id != stored_id or len(texts) < len(stored):
        return False
    return all(old == text or _grown(Message.model_validate_json(old), new)
               for old, text, new in zip(stored, texts, session.messages, strict=False))


def update_session(store: Store, session_id: str, session: Session, *, format: str,
                   content_hash: str, source_path: str,
                   unplaced: Sequence[SkippedLine] = ()) -> int | None:
    """Replace the stored session ``session_id`` by ``session`` when it is the same transcript
    grown (:func:`extends`); returns how many message rows were written (0 when the content is the
    one stored), or None when ``session`` does not extend the stored session: nothing is written."""
    if store.content_hash(session_id) == content_hash:
        return 0
    with guard(f"updating session {session_id!r}", store.path):
        row = dict(store.session_row(session, format, content_hash, source_path, unplaced))
        row.pop("id")
        row.pop("estimated_tokens")  # counted again by whatever next tokenises the session
        texts = [canonical_dump(m) for m in session.messages]
        with write_transaction(store.db):
            header = list(store.db.query("SELECT header_json FROM sessions WHERE id = ?",
                                         [session_id]))
            stored = [r["json"] for r in store.db.query(
                "SELECT json FROM messages WHERE session_id = ? ORDER BY idx", [session_id])]
            if not header or not extends(
                    SessionHeader.model_validate_json(header[0]["header_json"]).session_id,
                    stored, session, texts):
                return None
            changed = [(session_id, i, m.role, text) for i, (m, text)
                       in enumerate(zip(session.messages, texts, strict=True))
                       if i >= len(stored) or stored[i] != text]
            store.db.conn.executemany(
                "INSERT OR REPLACE INTO messages (session_id, idx, role, json) VALUES (?, ?, ?, ?)",
                changed)
            columns = ", ".join(f"{name} = ?" for name in row)
            store.db.execute(f"UPDATE sessions SET {columns}, estimated_tokens = NULL WHERE id = ?",
                             [*row.values(), session_id])
    return len(changed)
