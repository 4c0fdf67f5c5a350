"""SQL plumbing shared by the store's modules: turning SQLite errors into StorageErrors, the
immediate write transaction, and the canonical JSON text rows keep."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol, cast

import orjson
from iris.errors import StorageError
from iris.hashing import canonical_json
from pydantic import BaseModel
from sqlite_utils import Database

__all__ = ["SQLDatabase", "canonical", "canonical_dump", "guard", "query", "typed", "write_transaction"]


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


#: orjson with sorted keys writes the text of :func:`canonical` for plain JSON values at a tenth of
#: the cost, except for floats below 1e-4: ``0.00001`` and ``1.5e-6`` where Python writes ``1e-05``
#: and ``1.5e-06`` (:data:`_SHORT_EXPONENT` and ``0.0000`` find both), and NaN and infinities,
#: which it writes as null (so a ``null`` sends the value to ``json.dumps``; pydantic's JSON mode
#: turns some of them into None, not all). It refuses integers beyond 64 bits, lone surrogates,
#: deep nesting and (with these options) anything but the plain types, which ``json.dumps`` treats
#: its own way.
_ORJSON = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
           | orjson.OPT_PASSTHROUGH_SUBCLASS)
_SHORT_EXPONENT = re.compile(rb"e-[1-9](?![0-9])")  # one regex with ``|0\.0000`` is 3x slower
#: Values whose text orjson must write as Python does for the fast writer to be used at all (an
#: orjson before 3.11.7 wrote ``1e16`` for Python's ``1e+16``).
_PROBES = (1e16, -1.5e300, 1e22, 1.2345678901234568e17, 1e-10, 2.5e-300, 1e-4, 0.1, 1e15, -0.0, 2**64 - 1,
           -(2**63), "é\u2028\x7f\x00\x1f\"\\😀", {"b": [True, None], "a": {"é": 1, "B": 2.5}})


def _orjson_writes_canonical() -> bool:
    try:
        return all(orjson.dumps(v, option=_ORJSON).decode() == canonical_json(v) for v in _PROBES)
    except TypeError:
        return False


_FAST_WRITER = _orjson_writes_canonical()


def canonical_dump(model: BaseModel) -> str:
    """``canonical(model.model_dump(mode="json", exclude_none=True))``, the stored form of a
    message: written by orjson when its text is provably the same, else by :func:`canonical`."""
    value = model.model_dump(mode="json", exclude_none=True)
    if not _FAST_WRITER:
        return canonical_json(value)
    try:
        text = orjson.dumps(value, option=_ORJSON)
    except TypeError:  # orjson.JSONEncodeError: a value only json.dumps writes (or refuses itself)
        return canonical_json(value)
    if b"null" in text or b"0.0000" in text or _SHORT_EXPONENT.search(text) is not None:
        return canonical_json(value)
    return text.decode()


def _store_file(db: SQLDatabase) -> str:
    """The file of ``db``'s main database ("" for one in memory or when SQLite cannot say)."""
    try:
        rows = db.execute("PRAGMA database_list").fetchall()
    except sqlite3.Error:
        return ""
    return next((str(r[2]) for r in rows if r[1] == "main" and r[2]), "")


def _prefix(where: object) -> str:
    place = _store_file(typed(where)) if isinstance(where, Database) else where
    return f"{place}: " if place else ""


@contextmanager
def guard(action: str, where: object = "") -> Generator[None]:
    """Turn SQLite errors (and values SQLite cannot hold) into a StorageError naming the action
    and the store file (``where``: its path, or the Database, asked for its file on error)."""
    try:
        yield
    except sqlite3.Error as exc:
        prefix = _prefix(where)
        full = ("; the disk holding the store is full (or the store reached its size limit): "
                "free space and retry, nothing of this action was kept"
                if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL else "")
        raise StorageError(f"{prefix}{action} failed ({exc}){full}") from None
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
