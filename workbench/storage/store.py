"""The SQLite evidence store: imported sessions (and, through later migrations, preparations,
configurations and template snapshots) kept in one file so reopening the workbench shows them.

Location: ``$WORKBENCH_HOME/workbench.db``; ``WORKBENCH_HOME`` defaults to
``~/.local/share/context-workbench`` (``make run`` uses the repository's ``.workbench/``). The file
runs in WAL mode so the Streamlit server and a CLI import can use it at the same time. Every import
is one transaction: a session is stored whole or not at all (R-SES-5), and a file whose content
hash is already stored is not stored again.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Generator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from functools import cached_property
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypedDict, TypeVar

from iris.errors import StorageError
from iris.frozen import FrozenModel
from iris.session import (
    Message,
    ModelSwitch,
    RecordedCompaction,
    RecordedMicrocompaction,
    Session,
    SessionHeader,
    StepSnapshot,
    SubagentCall,
    ToolCallBlock,
)
from iris.tokens import TokenEstimator, default_estimator

from ..importers import SkippedLine, load_session
from ..importers._fast import paused_gc
from ..importers.registry import with_tool_dialect
from ._fast_json import canonical_dump
from ._sql import canonical, disk_is_full, failed_writing, guard, typed, write_transaction
from .cache import StoreCache
from .migrations import apply_migrations, pending_migrations

if TYPE_CHECKING:
    from .replays import ReplayRepository

__all__ = [
    "DB_NAME",
    "ImportOutcome",
    "Progress",
    "SessionRow",
    "Store",
    "default_db_path",
    "open_store",
    "workbench_home",
    "write_transaction",
]

T = TypeVar("T")
DB_NAME = "workbench.db"
DEFAULT_HOME = Path("~/.local/share/context-workbench")

#: ``progress(fraction, label)``: fraction in [0, 1] of the current import.
Progress = Callable[[float, str], None]


def _no_progress(fraction: float, label: str) -> None:
    """A progress callback that shows nothing."""


def workbench_home() -> Path:
    """The data directory: ``$WORKBENCH_HOME`` or ``~/.local/share/context-workbench``."""
    env = os.environ.get("WORKBENCH_HOME")
    return Path(env).expanduser() if env else DEFAULT_HOME.expanduser()


def default_db_path() -> Path:
    return workbench_home() / DB_NAME


_Frozen = FrozenModel


class _SessionInsert(TypedDict):
    """One row of the ``sessions`` table, as an import writes it."""

    id: str
    title: str
    format: str
    source_path: str | None
    content_hash: str
    message_count: int
    response_count: int
    tool_call_count: int
    estimated_tokens: int | None
    imported_at: str
    header_json: str
    extras_json: str
    unplaced_count: int
    unplaced_json: str
    parent_id: str | None


class SessionRow(_Frozen):
    """One row of the session list."""

    id: str
    title: str
    format: str
    source_path: str | None
    content_hash: str
    message_count: int
    response_count: int
    tool_call_count: int
    estimated_tokens: int | None
    """Local estimate of the whole session as one request (messages + framing), as ``inspect`` reports;
    None until something counted the session's messages (its first replay, the Messages page or
    :meth:`Store.session_tokens`): an import does not tokenise the transcript."""
    imported_at: str
    """UTC ISO 8601 timestamp of the import."""
    unplaced_count: int = 0
    """Lines the import read but could not place in the conversation (R-TWIN-1; listed with
    their reasons by :meth:`Store.unplaced`)."""
    parent_id: str | None = None
    """The session this one belongs to (a sub-agent's or compaction request's parent), or None."""


class ImportOutcome(_Frozen):
    """What one ``import_file`` did."""

    session_id: str
    created: bool
    """False when the same content (hash) was already stored: nothing was written."""
    skipped: tuple[SkippedLine, ...] = ()
    format: str = ""
    title: str = ""
    message_count: int = 0
    warnings: tuple[SkippedLine, ...] = ()
    """What the import kept or left out that is worth knowing (e.g. "no per-request usage")."""
    unplaced: tuple[SkippedLine, ...] = ()
    """Lines read but not placed in the conversation, each with why (R-TWIN-1)."""
    subagents: tuple[str, ...] = ()
    """Sub-agent sessions stored with it from its ``agent_progress`` lines (R-TWIN-2)."""


class Store:
    """A workbench store on one SQLite file (created and migrated on open)."""

    def __init__(self, path: str | Path | None = None, *,
                 estimator: TokenEstimator | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        self._estimator = estimator
        self._clock = clock or (lambda: datetime.now(UTC))
        self.read_only = _read_only(self.path)
        """True when the store's folder or file is not writable: opened for reading only (nothing
        is created or migrated; a write fails with a StorageError saying so)."""
        # imported here, not with this module: a replay of a file opens no store
        from sqlite_utils import Database

        conn: sqlite3.Connection | None = None
        try:
            if self.read_only:
                conn = _connect_read_only(self.path)
                database = Database(conn)
                self.db = typed(database)
                _check_schema(self.path, database)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # Streamlit reruns scripts on worker threads: one connection may cross threads.
                conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
                database = Database(conn)
                self.db = typed(database)
                # Two processes opening a new store at once; an in-memory store has no other
                # opener (and no folder for a lock file).
                in_memory = str(self.path) == ":memory:"
                with nullcontext() if in_memory else _opening_lock(self.path):
                    self.db.enable_wal()
                    apply_migrations(database)
            self.db.execute("PRAGMA foreign_keys=ON;")
        except (sqlite3.DatabaseError, OSError, StorageError) as exc:
            if conn is not None:  # a store that did not open holds no file open
                conn.close()
            if isinstance(exc, StorageError):
                raise
            raise StorageError(_open_error(self.path, exc)) from None

        self.cache = StoreCache()
        """Values derived from stored rows, keyed by what makes them stale."""

    @cached_property
    def replays(self) -> ReplayRepository:
        """Saved replays: save, list, find, open, delete (built on first use: their records
        import the replay engine, which an import of a transcript does not need)."""
        from .replays import ReplayRepository

        return ReplayRepository(self.db, self.cache)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def estimator(self) -> TokenEstimator:
        if self._estimator is None:
            self._estimator = default_estimator()
        return self._estimator

    def _storage_errors(self, action: str) -> AbstractContextManager[None]:
        return guard(action, self.path)

    # ---------------------------------------------------------------- writing

    def import_file(self, path: str | Path, *, format: str | None = None, lenient: bool = False,
                    progress: Progress | None = None) -> ImportOutcome:
        """Import one transcript. Raises SessionFormatError (bad file) or StorageError; either way
        nothing is written."""
        # No cyclic collection until the session is stored and freed: resumed while the session
        # was alive, the collector's first pass would scan every record of it (a tenth of a big
        # import) to find no garbage.
        with paused_gc():
            return self._import_file(Path(path), format, lenient, progress or _no_progress)

    def _import_file(self, path: Path, format: str | None, lenient: bool, report: Progress) -> ImportOutcome:
        report(0.0, f"reading {Path(path).name}")
        result = load_session(path, format=format, lenient=lenient)
        report(0.4, f"storing {len(result.session.messages)} messages")
        session_id, created = self.save_session(
            result.session, format=result.format, content_hash=result.content_hash,
            source_path=str(Path(path).resolve()), progress=report, unplaced=result.unplaced)
        children = self._progress_subagents(path, result) if created else ()
        report(1.0, "stored" if created else "already stored")
        return ImportOutcome(session_id=session_id, created=created, skipped=result.skipped,
                             format=result.format, title=result.session.header.title,
                             message_count=len(result.session.messages), warnings=result.warnings,
                             unplaced=result.unplaced, subagents=children)

    def _progress_subagents(self, path: Path, result: Any) -> tuple[str, ...]:
        """A main Claude Code transcript without its ``subagents/`` folder holds its sub-agents'
        conversations in ``agent_progress`` lines: each is stored as the child a sub-agent file
        would be (``<sessionId>/agent-<agentId>``, its parent the session), its content hash
        derived from the parent's and the agent id."""
        from ..importers._source import strip_gz
        from ..importers.claude_progress import subagent_sessions

        session = result.session
        folder = path.parent / strip_gz(path.name).removesuffix(".jsonl") / "subagents"
        if result.format != "claude_code" or not session.subagents or folder.is_dir() \
                or session.header.parent_id is not None:
            return ()
        stored: list[str] = []
        for child in subagent_sessions(path):
            digest = sha256(f"{result.content_hash}/{child.header.session_id}".encode()).hexdigest()
            child_id, _ = self.save_session(child, format=result.format,
                                            content_hash=f"sha256:{digest}",
                                            source_path=str(path.resolve()))
            stored.append(child_id)
        return tuple(stored)

    def save_session(self, session: Session, *, format: str, content_hash: str,
                     source_path: str | None, progress: Progress | None = None,
                     unplaced: Sequence[SkippedLine] = ()) -> tuple[str, bool]:
        """Store a session in one transaction; returns ``(id, created)``. ``unplaced`` are the
        lines its import could not place (kept with the session, shown with it)."""
        existing = self._id_for_hash(content_hash)
        if existing is not None:
            return existing, False
        with self._storage_errors("storing a session"):  # its id is looked up in SQLite too
            row = self.session_row(session, format, content_hash, source_path, unplaced)
        report: Progress = progress or _no_progress
        report(0.8, "writing")
        wanted = session.header.session_id or content_hash[-12:]
        try:
            with self._storage_errors(f"storing session {row['id']!r}"), write_transaction(self.db):
                # Chosen again under the write lock: another process may have stored the same
                # content, or another file with the same session id, since the row was built.
                existing = self._id_for_hash(content_hash)
                if existing is not None:
                    return existing, False
                row["id"] = self._free_id(wanted, content_hash)
                # plain SQL: sqlite-utils' insert reads the table's schema first (a third of a
                # small import's writing)
                self.db.execute(f"INSERT INTO sessions ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                list(row.values()))
                self.db.conn.executemany(  # plain executemany: sqlite-utils' per-value checks cost more
                    "INSERT INTO messages (session_id, idx, role, json) VALUES (?, ?, ?, ?)",
                    ((row["id"], i, m.role, canonical_dump(m))
                     for i, m in enumerate(session.messages)))
        except StorageError:
            # another process stored the same content meanwhile (unique content hash): that is
            # the "already stored" outcome, not a failure
            existing = self._id_for_hash(content_hash)
            if existing is None:
                raise
            return existing, False
        return row["id"], True

    def delete_session(self, session_id: str) -> bool:
        """Delete a session, its messages and (through the schema's cascades) its replays, then
        the request bodies no other replay shares; False when it did not exist."""
        with self._storage_errors(f"deleting session {session_id!r}"), self.db.atomic():
            self.db.execute("DELETE FROM messages WHERE session_id = ?", [session_id])
            cursor = self.db.execute("DELETE FROM sessions WHERE id = ?", [session_id])
            from .writer import forget_unused_bodies

            forget_unused_bodies(self.db)
            return cursor.rowcount > 0

    # ---------------------------------------------------------------- reading

    def list_sessions(self) -> list[SessionRow]:
        """Every stored session, newest import first (ties by title)."""
        fields = ", ".join(SessionRow.model_fields)
        with self._storage_errors("listing sessions"):
            rows = self.db.query(f"SELECT {fields} FROM sessions ORDER BY imported_at DESC, title, id")
            return [SessionRow(**r) for r in rows]

    def row_of(self, session_id: str) -> SessionRow:
        """The stored session's row of the session list (its counts, title and source)."""
        fields = ", ".join(SessionRow.model_fields)
        with self._storage_errors(f"reading session {session_id!r}"):
            rows = list(self.db.query(f"SELECT {fields} FROM sessions WHERE id = ?", [session_id]))
        if not rows:
            raise StorageError(f"{self.path}: no stored session {session_id!r}")
        return SessionRow(**rows[0])

    def unplaced(self, session_id: str) -> tuple[SkippedLine, ...]:
        """The lines the session's import read but could not place, each with why (R-TWIN-1)."""
        with self._storage_errors(f"reading session {session_id!r}"):
            rows = list(self.db.query("SELECT unplaced_json FROM sessions WHERE id = ?", [session_id]))
        if not rows:
            return ()
        return tuple(SkippedLine.model_validate(x) for x in json.loads(rows[0]["unplaced_json"]))

    def children(self, session_id: str) -> list[SessionRow]:
        """The stored sessions whose parent is ``session_id`` (its sub-agents), by id."""
        fields = ", ".join(SessionRow.model_fields)
        with self._storage_errors(f"reading the sub-agents of session {session_id!r}"):
            rows = self.db.query(f"SELECT {fields} FROM sessions WHERE parent_id = ? ORDER BY id",
                                 [session_id])
            return [SessionRow(**r) for r in rows]

    def content_hash(self, session_id: str) -> str:
        """The stored session's content hash ("" when there is none): what makes values derived
        from it stale."""
        with self._storage_errors(f"reading session {session_id!r}"):
            rows = list(self.db.query("SELECT content_hash FROM sessions WHERE id = ?", [session_id]))
        return rows[0]["content_hash"] if rows else ""

    def cached(self, session_id: str, key: object, make: Callable[[], T]) -> T:
        """``make()`` of a stored session, kept in the store's cache while the session is."""
        return self.cache.get_or_make((session_id, self.content_hash(session_id), key), make)

    def header(self, session_id: str) -> SessionHeader:
        """The stored session's header (without reading its messages)."""
        with self._storage_errors(f"reading session {session_id!r}"):
            rows = list(self.db.query("SELECT header_json FROM sessions WHERE id = ?", [session_id]))
        if not rows:
            raise StorageError(f"{self.path}: no stored session {session_id!r}")
        return SessionHeader.model_validate_json(rows[0]["header_json"])

    def recorded_compactions(self, session_id: str) -> tuple[RecordedCompaction, ...]:
        """The compactions the transcript records (none for an unknown session)."""
        with self._storage_errors(f"reading session {session_id!r}"):
            rows = list(self.db.query("SELECT extras_json FROM sessions WHERE id = ?", [session_id]))
        if not rows:
            return ()
        return tuple(RecordedCompaction.model_validate(x)
                     for x in json.loads(rows[0]["extras_json"]).get("compactions") or ())

    def session(self, session_id: str) -> Session:
        """The stored session, exactly as it was saved: read once, then from the store's cache
        while the session is stored (the one way to read a session)."""
        return self.cached(session_id, "session", lambda: self._read_session(session_id))

    def messages(self, session_id: str) -> tuple[Message, ...]:
        """The recorded messages of a stored session (cached while the session is stored)."""
        return self.session(session_id).messages

    def session_tokens(self, session_id: str, messages: Sequence[Message] | None = None,
                       estimator: TokenEstimator | None = None) -> int:
        """The session-wide estimate (the figure ``workbench inspect`` reports), counted the first
        time it is asked for and stored. Pass the ``messages`` and the ``estimator`` a replay (or a
        page) has just counted them with: the estimate then reuses those counts."""
        known = self.row_of(session_id).estimated_tokens
        if known is not None:
            return known
        messages = self.session(session_id).messages if messages is None else messages
        tokens = (estimator or self.estimator).request_tokens(messages)
        if self.read_only:  # counted, not kept
            return tokens
        with self._storage_errors(f"storing the estimate of session {session_id!r}"), \
                write_transaction(self.db):
            self.db.execute("UPDATE sessions SET estimated_tokens = ? WHERE id = ?", [tokens, session_id])
        return tokens

    def _read_session(self, session_id: str) -> Session:
        """The stored session read from the database (:meth:`session` keeps it)."""
        with self._storage_errors(f"reading session {session_id!r}"):
            rows = list(self.db.query("SELECT header_json, extras_json FROM sessions WHERE id = ?",
                                      [session_id]))
            if not rows:
                raise StorageError(f"{self.path}: no stored session {session_id!r}")
            messages = tuple(Message.model_validate_json(r["json"]) for r in self.db.query(
                "SELECT json FROM messages WHERE session_id = ? ORDER BY idx", [session_id]))
        extras = json.loads(rows[0]["extras_json"])
        return with_tool_dialect(Session(
            header=SessionHeader.model_validate_json(rows[0]["header_json"]),
            messages=messages,
            model_switches=tuple(ModelSwitch.model_validate(x) for x in extras["model_switches"]),
            compactions=tuple(RecordedCompaction.model_validate(x) for x in extras["compactions"]),
            context_snapshots=tuple(StepSnapshot.model_validate(x) for x in extras["context_snapshots"]),
            subagents=tuple(SubagentCall.model_validate(x) for x in extras.get("subagents", ())),
            microcompactions=tuple(RecordedMicrocompaction.model_validate(x)
                                   for x in extras.get("microcompactions", ())),
        ))

    # ---------------------------------------------------------------- helpers

    def _id_for_hash(self, content_hash: str) -> str | None:
        with self._storage_errors("looking up a content hash"):
            rows = list(self.db.query("SELECT id FROM sessions WHERE content_hash = ?", [content_hash]))
        return rows[0]["id"] if rows else None

    def _free_id(self, wanted: str, content_hash: str) -> str:
        """The header's session id, suffixed with the hash when another file already uses it."""
        taken = {r["id"] for r in self.db.query("SELECT id FROM sessions WHERE id LIKE ?", [wanted + "%"])}
        if wanted not in taken:
            return wanted
        return f"{wanted}-{content_hash.split(':')[-1][:8]}"

    def session_row(self, session: Session, format: str, content_hash: str,
                    source_path: str | None, unplaced: Sequence[SkippedLine] = ()) -> _SessionInsert:
        """The ``sessions`` row of ``session`` (what an import writes; a live update too)."""
        header = session.header
        messages = session.messages
        responses, calls = _counts(messages)
        extras = {
            "model_switches": [s.model_dump(mode="json", exclude_none=True) for s in session.model_switches],
            "compactions": [c.model_dump(mode="json", exclude_none=True) for c in session.compactions],
            "context_snapshots": [s.model_dump(mode="json", exclude_none=True)
                                  for s in session.context_snapshots],
            "subagents": [s.model_dump(mode="json", exclude_none=True) for s in session.subagents],
            "microcompactions": [m.model_dump(mode="json", exclude_none=True)
                                 for m in session.microcompactions],
        }
        return {
            "id": self._free_id(header.session_id or content_hash[-12:], content_hash),  # provisional
            "title": header.title or header.session_id,
            "format": format,
            "source_path": source_path,
            "content_hash": content_hash,
            "message_count": len(messages),
            "response_count": responses,
            "tool_call_count": calls,
            "estimated_tokens": None,  # counted once, by whatever first tokenises the session
            "imported_at": self._clock().astimezone(UTC).isoformat(timespec="seconds"),
            "header_json": canonical(header.model_dump(mode="json", exclude_none=True)),
            "extras_json": canonical(extras),
            "unplaced_count": len(unplaced),
            "unplaced_json": canonical([u.model_dump(mode="json") for u in unplaced]),
            "parent_id": header.parent_id,
        }


def _counts(messages: Sequence[Message]) -> tuple[int, int]:
    """The responses and distinct tool calls of a session, as ``session.index`` counts them,
    without building the index (its pydantic records are a fifth of a large import's time)."""
    responses, calls = 0, set[str]()
    for message in messages:
        if message.role != "assistant":
            continue
        responses += not message.compaction_provided
        calls.update(block.id for block in message.content if isinstance(block, ToolCallBlock))
    return responses, len(calls)


@contextmanager
def _opening_lock(db_path: Path) -> Generator[None]:
    """Serialise switching to WAL and migrating between processes (SQLite answers a concurrent
    journal-mode switch with "database is locked" at once, and two processes would both apply the
    same pending migration). An advisory lock on ``<db>.lock``; no lock where fcntl is missing."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; opening concurrently stays unsupported there
        yield
        return
    with open(db_path.with_name(db_path.name + ".lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK)


def _read_only(path: Path) -> bool:
    """True when the store's existing folder, or its existing file, cannot be written (a read-only
    mount, or permissions): SQLite could not create its journal there."""
    folder = path.parent
    if not folder.is_dir():
        return False
    return not _writable(folder) or (path.is_file() and not _writable(path))


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the store at ``path``: ``mode=ro``, or, when SQLite cannot open
    the write-ahead log's index read-only (no ``-shm`` file, and none can be made), ``immutable=1``
    (the file as its last checkpoint left it; nothing can change it while the folder is read-only)."""
    if not path.exists():
        raise StorageError(
            f"{path.parent}: no workbench store yet ({path.name} is missing) and the folder is "
            "read-only, so none can be made; import into a writable WORKBENCH_HOME first, or "
            "point WORKBENCH_HOME at one")
    uri = path.resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False, timeout=30)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        conn.close()
        conn = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)
    return conn


def _check_schema(path: Path, db: Any) -> None:
    """Refuse a read-only store whose schema is older than this version's (it cannot be migrated)."""
    pending = pending_migrations(db)
    if pending:
        raise StorageError(
            f"{path}: the store was made by an older version and needs {len(pending)} upgrade(s) "
            f"({', '.join(pending)}), which cannot be written: its folder or file is read-only; "
            "open it once where it is writable, or point WORKBENCH_HOME at another folder")


def _open_error(path: Path, exc: Exception) -> str:
    """Why the store at ``path`` did not open, in words: a full disk, a folder that is missing (and
    could not be made) or is a file, a store path that is a folder, or a file that is not a SQLite
    database."""
    folder = path.parent
    where = "point WORKBENCH_HOME at another folder"
    if failed_writing(exc) and disk_is_full(path):
        return (f"{path}: cannot open the workbench store: the disk holding it is full ({exc}); "
                f"free space and retry, or {where}")
    if not folder.is_dir():
        blocker = next((p for p in (folder, *folder.parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            return f"{folder}: the store's folder cannot be made: {blocker} is a file, not a folder; {where}"
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return (f"{folder}: the store's folder is missing and could not be created ({reason}); "
                f"create it or {where}")
    if path.is_dir():
        return f"{path}: the store's file is a folder; move it away or {where}"
    if isinstance(exc, OSError):
        return f"{path}: cannot open the workbench store ({exc.strerror or exc}); {where}"
    return (f"{path}: cannot open the workbench store ({exc}). The file is not a SQLite "
            f"database or is damaged; move it away or {where}.")


def open_store(path: str | Path | None = None) -> Store:
    """The default store (``$WORKBENCH_HOME/workbench.db``) or the one at ``path``."""
    return Store(path)
