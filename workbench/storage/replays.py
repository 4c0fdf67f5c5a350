"""The replay repository of the store: named replays with their preparations, stages, decisions,
final requests, archives, configuration and template snapshot (R-PREP-5, R-UI-1).

A replay is saved under a name, per session; saving the same name again replaces it (the schema's
cascades remove every row below the old one). There is one write path, :class:`ReplayWriter`:
saving a finished replay runs it in one transaction, the engine's evidence sink
(:meth:`ReplayRepository.sink`) one small transaction per published step. Reopening stays fast on a
2,000-step replay because :class:`~workbench.storage.stored.StoredReplay` reads only the per-step
scalar columns and parses each step's full record when that step is looked at.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Generator, Hashable, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from iris.errors import StorageError
from iris.frozen import UNCHANGED
from iris.preparation.records import ContextPreparation, Decision

from ..records import ArchiveRecord, EvidenceBundle, ReplayFacts, ReplayInfo, StepRow
from ._saving import lock_path, saving_lock, unheld
from ._sql import SQLDatabase, guard, query, write_transaction
from .cache import StoreCache
from .stored import StoredReplay, decisions_of_kind, preparation_by_id
from .writer import ReplayWriter, forget_unused_bodies

__all__ = [
    "ArchiveRecord",
    "EvidenceBundle",
    "ReplayFacts",
    "ReplayInfo",
    "ReplayRepository",
    "StepRow",
    "StoredReplay",
    "replay_id_for",
]

T = TypeVar("T")
_INFO_FIELDS = ", ".join([*(f for f in ReplayInfo.model_fields if f != "facts"), "extras_json"])


def replay_id_for(session_id: str, name: str) -> str:
    """Deterministic id of the replay ``name`` of a session (saving the name again replaces it)."""
    digest = hashlib.sha256(f"{session_id}\x00{name}".encode()).hexdigest()
    return f"replay-{digest[:16]}"


def _now() -> datetime:
    return datetime.now(UTC)


class ReplayRepository:
    """Saved replays of one store (``store.replays``)."""

    def __init__(self, db: SQLDatabase, cache: StoreCache | None = None) -> None:
        self._db = db
        self._cache = cache if cache is not None else StoreCache()

    # ------------------------------------------------------------------------------ writing

    def save(self, bundle: EvidenceBundle, *, session_id: str, name: str,
             clock: Callable[[], datetime] = _now) -> ReplayInfo:
        """Save (or replace) the replay ``name`` of ``session_id`` in one transaction."""
        replay_id = replay_id_for(session_id, name)
        with guard("saving a replay", self._db), write_transaction(self._db):
            writer = ReplayWriter(self._db, replay_id, session_id=session_id, name=name,
                                  summariser=bundle.summariser, created=_stamp(clock))
            writer.begin(bundle)
            for prep in bundle.preparations:
                ref = prep.final_request_ref
                writer.add_step(prep, bundle.requests.get(ref) if ref else None)
            writer.add_requests(bundle.requests)
            writer.add_archives(bundle.archives)
            info = writer.finish()
        self._cache.forget(replay_id)
        return info

    def sink(self, *, session_id: str, name: str, summariser: str = "extractive",
             clock: Callable[[], datetime] = _now) -> StoreSink:
        """An evidence sink for the engine's publisher: each step is written as it arrives."""
        replay_id = replay_id_for(session_id, name)
        self._cache.forget(replay_id)
        return StoreSink(ReplayWriter(self._db, replay_id, session_id=session_id, name=name,
                                      summariser=summariser, created=_stamp(clock)))

    @contextmanager
    def streamed(self, header: EvidenceBundle, *, session_id: str, name: str,
                 clock: Callable[[], datetime] = _now) -> Generator[StoreSink]:
        """Save (or replace) the replay ``name`` step by step as the engine publishes it.
        ``header`` gives the configuration, templates and summariser (its preparations are not
        read); the block ends with ``sink.finish(facts)``. Steps are written a chunk at a time,
        each chunk in a short transaction of its own (other processes write between them), under
        a row marked as being saved: no reader lists it, and the replay it replaces stays, until
        ``finish`` swaps them in one transaction. An error in the block removes what was
        written; a save that died (a killed process) leaves a row the next streamed save
        removes."""
        replay_id = replay_id_for(session_id, name)
        with guard("saving a replay", self._db):
            lock = lock_path(self._db)
        self._forget_abandoned(lock)
        with saving_lock(lock):
            writer = ReplayWriter(self._db, replay_id, session_id=session_id, name=name,
                                  summariser=header.summariser, created=_stamp(clock),
                                  staging=secrets.token_hex(8))
            sink = StoreSink(writer, header=header, each_step=False)
            try:
                with guard("saving a replay", self._db):
                    yield sink
                    if not sink.finished:
                        sink.finish()
            except BaseException:
                with suppress(StorageError), guard("removing a replay that was not finished",
                                                   self._db), write_transaction(self._db):
                    writer.abandon()
                raise
        self._cache.forget(replay_id)

    def _forget_abandoned(self, lock: Path | None) -> None:
        """Remove the rows of staged replays whose save died, when no save is running."""
        if not query(self._db, "listing replays", "SELECT 1 FROM replays WHERE saving IS NOT "
                     "NULL LIMIT 1"):
            return
        with unheld(lock) as free:
            if free:
                with guard("removing replays that were not finished", self._db), \
                        write_transaction(self._db):
                    self._db.execute("DELETE FROM replays WHERE saving IS NOT NULL")
                    forget_unused_bodies(self._db)

    def delete(self, replay_id: str) -> bool:
        """Delete a replay and (through the schema's cascades) every row below it, then the request
        bodies no other replay shares; False when it did not exist."""
        with guard("deleting a replay", self._db), write_transaction(self._db):
            deleted = self._db.execute("DELETE FROM replays WHERE id = ?", [replay_id]).rowcount > 0
            forget_unused_bodies(self._db)
        self._cache.forget(replay_id)
        return deleted

    # ------------------------------------------------------------------------------ reading

    def list(self, session_id: str | None = None) -> tuple[ReplayInfo, ...]:
        """Stored replays (of one session, or all), oldest first then by name."""
        where, args = ("AND session_id = ?", [session_id]) if session_id else ("", [])
        rows = query(self._db, "listing replays", f"SELECT {_INFO_FIELDS} FROM replays WHERE "
                     f"saving IS NULL {where} ORDER BY created_at, name", args)
        return tuple(ReplayInfo.from_row(r) for r in rows)

    def find(self, session_id: str, name: str) -> ReplayInfo | None:
        """The replay ``name`` of a session, or None."""
        return self.get(replay_id_for(session_id, name), missing_ok=True)

    def get(self, replay_id: str, *, missing_ok: bool = False) -> ReplayInfo | None:
        """One replay's row (None, or a StorageError naming it, when there is none)."""
        rows = query(self._db, "reading a replay",
                     f"SELECT {_INFO_FIELDS} FROM replays WHERE id = ?", [replay_id])
        if rows:
            return ReplayInfo.from_row(rows[0])
        if missing_ok:
            return None
        raise StorageError(f"no stored replay {replay_id!r}")

    def exists(self, replay_id: str) -> bool:
        return bool(self.saved_at(replay_id))

    def saved_at(self, replay_id: str) -> str:
        """When the replay was last saved ("" when there is none): what makes cached values of it
        stale."""
        rows = query(self._db, "reading a replay", "SELECT created_at FROM replays WHERE id = ?",
                     [replay_id])
        return rows[0]["created_at"] if rows else ""

    def open(self, replay_id: str) -> StoredReplay:
        """A stored replay, ready to step through; reopened from the cache until it is saved
        again (by this process or another)."""
        return self.cached(replay_id, "open", lambda: StoredReplay(self._db, replay_id))

    def cached(self, replay_id: str, key: Hashable, make: Callable[[], T]) -> T:
        """``make()`` of a replay, kept in the store's cache until the replay is saved again."""
        return self._cache.get_or_make((replay_id, self.saved_at(replay_id), key), make)

    def preparation_by_id(self, preparation_id: str) -> ContextPreparation:
        """A stored preparation by its id (R-PREP-5)."""
        found = preparation_by_id(self._db, preparation_id)
        if found is None:
            raise StorageError(f"no stored preparation {preparation_id!r}")
        return found

    def decisions_of_kind(self, replay_id: str, kinds: Sequence[str]
                          ) -> tuple[tuple[int, str, Decision], ...]:
        """``(step, stage, decision)`` for every decision of the given kinds, in step order."""
        return decisions_of_kind(self._db, replay_id, kinds)


class StoreSink:
    """An ``EvidenceSink`` writing into one named replay (replacing it), one transaction per step,
    so a crash keeps every step already published (``each_step``; otherwise the caller's one
    transaction, :meth:`ReplayRepository.streamed`, and each chunk written once it is full)."""

    def __init__(self, writer: ReplayWriter, *, header: EvidenceBundle | None = None,
                 each_step: bool = True) -> None:
        self._writer, self._each_step = writer, each_step
        self.finished = False
        self.replay_id = writer.replay_id
        with guard("saving a replay", writer.db), write_transaction(writer.db):
            writer.begin(header or EvidenceBundle(preparations=(), summariser=writer.summariser))

    def save(self, preparation: ContextPreparation, request: Any) -> str | None:
        """Write one step; returns the evidence reference of its final request (its content hash,
        the key it is read back by; None without a request), also written as the stored
        preparation's ``final_request_ref``."""
        ref = request.ref if request is not None else None
        preparation = preparation.evolve(**UNCHANGED, final_request_ref=ref)
        if not self._each_step:
            self._writer.add_step(preparation, request)
            return ref
        with guard("saving a replay step", self._writer.db), write_transaction(self._writer.db):
            self._writer.add_step(preparation, request)
            self._writer.flush()
        return ref

    def archive(self, record: ArchiveRecord) -> None:
        """Keep one compaction's archive (written with the chunk of steps it belongs to)."""
        self._writer.add_archives((record,))

    def finish(self, facts: ReplayFacts | None = None) -> ReplayInfo:
        """Write the replay's counts (steps, phases, compactions, final tokens) and its facts."""
        with guard("saving a replay", self._writer.db), write_transaction(self._writer.db):
            info = self._writer.finish(facts)
        self.finished = True
        return info


def _stamp(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(UTC).isoformat(timespec="microseconds")

