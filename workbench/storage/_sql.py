"""SQL plumbing shared by the store's modules: turning SQLite errors into StorageErrors, the
immediate write transaction, and the canonical JSON text rows keep."""

from __future__ import annotations

import errno
import shutil
import sqlite3
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from iris.errors import StorageError
from iris.hashing import canonical_json

if TYPE_CHECKING:  # imported where a store is opened: sqlite-utils is slow to import
    from sqlite_utils import Database

__all__ = ["SQLDatabase", "canonical", "disk_is_full", "failed_writing", "guard", "query", "typed",
           "write_transaction"]


class SQLDatabase(Protocol):
    """The part of sqlite-utils' ``Database`` the store uses, with the types its rows and
    parameters really have (the library annotates them as bare ``Sequence`` and ``dict``, which
    strict type checking cannot read). :func:`typed` gives a ``Database`` this type."""

    @property
    def conn(self) -> sqlite3.Connection: ...

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None,
              ) -> Iterator[dict[str, Any]]: ...

    def execute(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] | None = None,
                ) -> sqlite3.Cursor: ...

    def table(self, table_name: str, **kwargs: Any) -> Any: ...

    def atomic(self) -> AbstractContextManager[Any]: ...

    def enable_wal(self) -> None: ...

    def close(self) -> None: ...


def typed(db: Database) -> SQLDatabase:
    """``db`` as the :class:`SQLDatabase` it is (the one place the library's loose types are
    narrowed)."""
    return cast("SQLDatabase", db)


def canonical(value: Any) -> str:
    """The JSON text the store keeps: :func:`iris.hashing.canonical_json`."""
    return canonical_json(value)


def _store_file(db: SQLDatabase) -> str:
    """The file of ``db``'s main database ("" for one in memory or when SQLite cannot say)."""
    try:
        rows = db.execute("PRAGMA database_list").fetchall()
    except sqlite3.Error:
        return ""
    return next((str(r[2]) for r in rows if r[1] == "main" and r[2]), "")


def _place(where: object) -> str:
    from sqlite_utils import Database

    return str(_store_file(typed(where)) if isinstance(where, Database) else where or "")


def _prefix(where: object) -> str:
    place = _place(where)
    return f"{place}: " if place else ""


def failed_writing(exc: BaseException) -> bool:
    """True for SQLite's "database or disk is full" and "disk I/O error" (any of its variants), and
    the system's "no space left on device"."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return code is not None and code & 0xFF in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR)
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


def disk_is_full(path: str | Path) -> bool:
    """True when the file system holding the store file ``path`` has less than 1 MiB free (a write
    SQLite reports as "disk I/O error", e.g. growing its write-ahead log's index, is then the full
    disk)."""
    path = Path(path)
    try:
        return shutil.disk_usage(path if path.is_dir() else path.parent).free < 1 << 20
    except OSError:
        return False


def _why(exc: sqlite3.Error, place: str) -> str:
    """What a SQLite error means for the user, after SQLite's own words ("" when nothing to add)."""
    code = getattr(exc, "sqlite_errorcode", None) or 0
    if code == sqlite3.SQLITE_FULL or (failed_writing(exc) and place and disk_is_full(place)):
        return ("; the disk holding the store is full (or the store reached its size limit): "
                "free space and retry, nothing of this action was kept")
    if code & 0xFF == sqlite3.SQLITE_READONLY:
        return ("; the store is read-only (its folder or file cannot be written): reading works, "
                "writing needs a writable WORKBENCH_HOME")
    return ""


@contextmanager
def guard(action: str, where: object = "") -> Generator[None]:
    """Turn SQLite errors (and values SQLite cannot hold) into a StorageError naming the action
    and the store file (``where``: its path, or the Database, asked for its file on error)."""
    try:
        yield
    except sqlite3.Error as exc:
        place = _place(where)
        prefix = f"{place}: " if place else ""
        raise StorageError(f"{prefix}{action} failed ({exc}){_why(exc, place)}") from None
    except UnicodeEncodeError as exc:  # str → UTF-8 for SQLite: a lone UTF-16 surrogate
        prefix = _prefix(where)
        raise StorageError(
            f"{prefix}{action} failed: text holds a lone UTF-16 surrogate "
            f"({exc.object[exc.start:exc.end]!r}); importing a file replaces them with U+FFFD "
            "(docs/robustness.md)") from None
    except OverflowError as exc:
        prefix = _prefix(where)
        raise StorageError(f"{prefix}{action} failed: a value SQLite cannot store ({exc}); "
                           "imports refuse such values (docs/robustness.md)") from None


def query(db: SQLDatabase, action: str, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """Every row of ``sql`` as dicts, SQLite errors as a StorageError naming ``action``."""
    with guard(action, db):
        return list(db.query(sql, list(args)))


@contextmanager
def write_transaction(db: SQLDatabase) -> Generator[None]:
    """One write transaction that takes the write lock at BEGIN (waiting up to the busy timeout):
    a deferred one that reads first cannot be upgraded once another process has committed (WAL),
    which made one of two concurrent imports (or replay saves) fail with "database is locked".
    Inside a transaction the caller already holds, it is a savepoint of that transaction."""
    if db.conn.in_transaction:
        with db.atomic():
            yield
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        with db.atomic():  # a savepoint inside the immediate transaction
            yield
    except BaseException:
        if db.conn.in_transaction:
            db.conn.rollback()
        raise
    db.conn.commit()
