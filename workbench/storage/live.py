"""A stored session that grows while its agent writes the transcript (``workbench watch``).

An import stores a file's content once, under its content hash; a transcript that grows has a new
hash at every write. For a watched file the store keeps one session per source file instead: the
grown transcript replaces the stored session's row in place, under the same id, and only the
messages whose stored form changed are written (new ones appended; the last one, which an agent may
still be completing, rewritten). Everything is one write transaction: a reader sees the session as
it was or as it is now, never half of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from iris.session import Session

from ..importers import SkippedLine
from ._fast_json import canonical_dump
from ._sql import guard, write_transaction
from .store import Store

__all__ = ["session_of_source", "update_session"]


def session_of_source(store: Store, source_path: str | Path) -> str | None:
    """The id of the session last stored from ``source_path`` (a resolved path), or None."""
    with guard("looking up a source file", store.path):
        rows = list(store.db.query(
            "SELECT id FROM sessions WHERE source_path = ? ORDER BY imported_at DESC, id LIMIT 1",
            [str(source_path)]))
    return rows[0]["id"] if rows else None


def update_session(store: Store, session_id: str, session: Session, *, format: str,
                   content_hash: str, source_path: str,
                   unplaced: Sequence[SkippedLine] = ()) -> int:
    """Replace the stored session ``session_id`` by ``session`` (the same transcript, grown);
    returns how many message rows were written (0 when the content is the one stored)."""
    if store.content_hash(session_id) == content_hash:
        return 0
    with guard(f"updating session {session_id!r}", store.path):
        row = dict(store.session_row(session, format, content_hash, source_path, unplaced))
        row.pop("id")
        row.pop("estimated_tokens")  # counted again by whatever next tokenises the session
        texts = [canonical_dump(m) for m in session.messages]
        with write_transaction(store.db):
            stored = {r["idx"]: r["json"] for r in store.db.query(
                "SELECT idx, json FROM messages WHERE session_id = ?", [session_id])}
            changed = [(session_id, i, m.role, text) for i, (m, text)
                       in enumerate(zip(session.messages, texts, strict=True)) if stored.get(i) != text]
            store.db.conn.executemany(
                "INSERT OR REPLACE INTO messages (session_id, idx, role, json) VALUES (?, ?, ?, ?)",
                changed)
            store.db.execute("DELETE FROM messages WHERE session_id = ? AND idx >= ?",
                             [session_id, len(texts)])
            columns = ", ".join(f"{name} = ?" for name in row)
            store.db.execute(f"UPDATE sessions SET {columns}, estimated_tokens = NULL WHERE id = ?",
                             [*row.values(), session_id])
    return len(changed)
