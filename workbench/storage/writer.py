"""The one write path of a replay: its row, each step (preparation, stages, decisions, final
request), its archives and, at the end, its counts and facts. The caller owns the transaction:
the repository runs a whole replay in one, the evidence sink one per step.

Steps are kept in chunks of consecutive steps (:mod:`._chunks`): one row of compressed streams
per :data:`~._chunks.CHUNK_STEPS` steps, so what repeats between steps is compressed against the
step before it. A final request is stored as a skeleton of ids into the replay's parts (the
message list written as its change from the previous request): consecutive steps resend almost
the same messages, and storing each request whole would grow with the square of the session.
The message bodies themselves are compressed and kept once per store (``request_bodies``, by
content hash), so replays of one session share them.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from iris.frozen import UNCHANGED
from iris.preparation.records import ContextPreparation, PreparedRequest
from pydantic import BaseModel

from ..records import ArchiveRecord, EvidenceBundle, ReplayFacts, ReplayInfo
from ._chunks import Chunk, as_column, dumps, prefix_key, store_bodies
from ._skeleton import SkeletonCarry
from ._sql import SQLDatabase, canonical, guard, write_transaction
from .migrations import RECORD_FIELDS_IN_STEPS, STEP_COLUMNS, STEP_FIGURE_COLUMNS, pack

__all__ = ["ReplayWriter", "forget_unused_bodies", "staged_name"]

_IN_STEPS: set[str] = set(RECORD_FIELDS_IN_STEPS)


def _final_request(prep: Any) -> int:
    """The last step's request on the whole-request basis every page states (the raw local
    estimate for a step without one)."""
    whole = prep.whole_request_tokens
    return prep.final_input_tokens if whole is None else whole


class ReplayWriter:
    """Writes one replay; rows are buffered and written by :meth:`flush` (and :meth:`finish`)."""

    def __init__(self, db: SQLDatabase, replay_id: str, *, session_id: str, name: str,
                 summariser: str, created: str, staging: str | None = None) -> None:
        self.db, self.replay_id, self.summariser = db, replay_id, summariser
        self._session_id, self._name, self._created = session_id, name, created
        # ``staging``: the replay is written under a row of its own, marked as being saved
        # (``replays.saving``), that takes the replay's id and name only when it is finished
        self.staging = staging
        self.row_id = staged_name(replay_id, staging) if staging else replay_id
        self._bundle = EvidenceBundle(preparations=(), summariser=summariser)
        # the counts the replay row states, kept as the steps pass (a streamed replay holds no
        # step once its chunk is written)
        self._phases = {"ready": 0, "failed": 0, "cancelled": 0}
        self._count = self._compactions = self._final_tokens = 0
        self._first: tuple[str, int] | None = None  # its configuration snapshot, schema version
        self._n = 0  # the replay's integer key, set by begin
        self._chunk = Chunk(0)
        self._indexes: set[int] = set()
        self._rows: dict[str, list[tuple[Any, ...]]] = {}
        self._ids: dict[bytes, int] = {}
        # the previous request's skeleton: a step's request costs what it adds to it
        self._carry = SkeletonCarry(self._part)
        self._refs: set[str] = set()
        self._bodies: dict[bytes, str] = {}  # digest → body text of parts not yet written
        self._parts: list[tuple[int, bytes]] = []  # (part id, digest) not yet written

    def begin(self, bundle: EvidenceBundle) -> None:
        """Replace any replay of this name (cascades remove its rows; a staged replay replaces
        it when it finishes) and write the replay row and its configuration and template
        snapshots."""
        self._bundle = bundle.evolve(**UNCHANGED, preparations=())
        if not self.staging:
            self.db.execute("DELETE FROM replays WHERE id = ?", [self.replay_id])
        if bundle.configuration_hash and bundle.configuration_json is not None:
            self.db.execute("INSERT OR IGNORE INTO configurations (hash, json, yaml, created_at) "
                            "VALUES (?, ?, ?, ?)", [bundle.configuration_hash,
                                                    canonical(dict(bundle.configuration_json)),
                                                    bundle.configuration_yaml, self._created])
        if bundle.template_snapshot_id and bundle.template_sources is not None:
            self.db.execute("INSERT OR IGNORE INTO template_snapshots (id, sources_json, "
                            "created_at) VALUES (?, ?, ?)",
                            [bundle.template_snapshot_id, canonical(dict(bundle.template_sources)),
                             self._created])
        row: dict[str, Any] = self._info_row()
        if self.staging:
            row |= {"id": self.row_id, "name": staged_name(self._name, self.staging),
                    "saving": self.staging}
        cursor = self.db.execute(f"INSERT INTO replays ({', '.join(row)}) VALUES "
                                 f"({', '.join('?' * len(row))})", list(row.values()))
        self._n = int(cursor.lastrowid or 0)

    def add_step(self, prep: ContextPreparation, request: PreparedRequest | None) -> None:
        if prep.step_index in self._indexes:  # what the per-step key refused before chunks
            raise sqlite3.IntegrityError("UNIQUE constraint failed: preparations.replay_id, "
                                         "preparations.step_index")
        self._indexes.add(prep.step_index)
        self._count += 1
        self._phases[prep.phase] = self._phases.get(prep.phase, 0) + 1
        self._compactions += bool(prep.compaction_applied)
        self._final_tokens = _final_request(prep)
        if self._first is None:
            self._first = (prep.configuration_snapshot_id, prep.schema_version)
        chunk = self._chunk
        stages = [[s.name, s.before_input_tokens, s.after_input_tokens] for s in prep.stages]
        marks = [[s.name, i, d.kind, d.message_index]
                 for s in prep.stages for i, d in enumerate(s.decisions)]
        row = _step_row(prep)
        chunk.add_step(dumps([row[c] for c in STEP_COLUMNS]),
                       dumps([prep.step_index, marks, stages]),
                       prep.model_dump_json(exclude=_IN_STEPS))
        self._buffer("preparation_ids", (prefix_key(prep.preparation_id), self._n,
                                         prep.step_index, chunk.number, chunk.steps - 1))
        ref = prep.final_request_ref
        if request is not None and ref:
            self._add_request(ref, request)
        if chunk.full:
            self._write_chunk(final=True)
            self._chunk = Chunk(chunk.number + 1)

    def add_requests(self, requests: Mapping[str, PreparedRequest]) -> None:
        """Requests no step pointed at (kept so they read back by their reference)."""
        for ref in sorted(set(requests) - self._refs):
            self._add_request(ref, requests[ref])

    def add_archives(self, archives: Iterable[ArchiveRecord]) -> None:
        for a in archives:
            self._buffer("archives", (self.row_id, a.n, a.step_index, a.path, pack(a.text),
                                      a.checkpoint_text))

    def flush(self, *, final: bool = False) -> None:
        """Write what is buffered, and the chunk still filling (finished when ``final``: no
        step follows)."""
        if not self._chunk.empty:
            self._write_chunk(final=final)
        self._write_parts()
        self._write_rows()

    def finish(self, facts: ReplayFacts | None = None) -> ReplayInfo:
        """Flush and write the replay's counts (and ``facts``, when given); request bodies no
        replay uses any more (those of a replay this one replaced) are removed."""
        self.flush(final=True)
        if self.staging:  # the replay it replaces goes, this one takes its id and name
            self.db.execute("PRAGMA defer_foreign_keys = ON")  # archives follow the id below
            self.db.execute("DELETE FROM replays WHERE id = ?", [self.replay_id])
            self.db.execute("UPDATE archives SET replay_id = ? WHERE replay_id = ?",
                            [self.replay_id, self.row_id])
        forget_unused_bodies(self.db)
        if facts is not None:
            self._bundle = self._bundle.evolve(**UNCHANGED, facts=facts)
        row = self._info_row()
        values = {k: v for k, v in row.items() if k != "id" or self.staging}
        sets = ", ".join([*(f"{k} = ?" for k in values), *(["saving = NULL"] if self.staging else [])])
        self.db.execute(f"UPDATE replays SET {sets} WHERE n = ?", [*values.values(), self._n])
        return ReplayInfo.from_row(row)

    def abandon(self) -> None:
        """Remove what a staged replay wrote (its row, and through the cascades every row below
        it) and the request bodies only it used."""
        self.db.execute("DELETE FROM replays WHERE n = ? AND saving IS NOT NULL", [self._n])
        forget_unused_bodies(self.db)

    # ------------------------------------------------------------------------------ helpers

    def _buffer(self, table: str, row: tuple[Any, ...]) -> None:
        self._rows.setdefault(table, []).append(row)

    def _write_chunk(self, *, final: bool) -> None:
        """Write the chunk (finished when ``final``, with the bodies, ids and archives buffered
        since the last one): a transaction of its own unless the caller holds one, so a staged
        replay holds the store's write lock one chunk at a time."""
        chunk = self._chunk
        with guard("saving a replay", self.db), write_transaction(self.db):
            self.db.execute("INSERT OR REPLACE INTO step_chunks (replay_n, c, steps, marks, "
                            "records, requests) VALUES (?, ?, ?, ?, ?, ?)",
                            [self._n, chunk.number, *chunk.row(final=final).values()])
            if final:  # bodies, ids and archives do not pile up in memory over a long replay
                self._write_parts()
                self._write_rows()

    def _write_rows(self) -> None:
        for table, sql in _INSERTS.items():
            rows = self._rows.pop(table, None)
            if rows:
                self.db.conn.executemany(sql, rows)

    def _write_parts(self) -> None:
        if not self._parts:
            return
        numbers = store_bodies(self.db.conn, self._bodies, pack)
        self.db.conn.executemany("INSERT INTO request_parts (replay_n, id, body_n) VALUES "
                                 "(?, ?, ?)", [(self._n, part, numbers[digest])
                                               for part, digest in self._parts])
        self._bodies, self._parts = {}, []

    def _info_row(self) -> dict[str, Any]:
        bundle, first, phases = self._bundle, self._first, self._phases
        return {
            "id": self.replay_id, "name": self._name, "session_id": self._session_id,
            "configuration_hash": bundle.configuration_hash,
            "template_snapshot_id": bundle.template_snapshot_id,
            "configuration_snapshot_id": bundle.configuration_snapshot_id or (
                first[0] if first else ""),
            "summariser": self.summariser, "created_at": self._created, "step_count": self._count,
            "ready_count": phases["ready"], "failed_count": phases["failed"],
            "cancelled_count": phases["cancelled"], "compactions_applied": self._compactions,
            "final_tokens": self._final_tokens,
            "record_schema_version": first[1] if first else 1,
            "extras_json": bundle.facts.model_dump_json(),
        }

    def _part(self, obj: Any) -> int:
        """The part id of a message or tool schema, by the digest of its body (the body is
        written with the next chunk when it is new)."""
        body = obj.model_dump_json() if isinstance(obj, BaseModel) else canonical(obj)
        digest = hashlib.sha256(body.encode()).digest()
        part = self._ids.get(digest)
        if part is None:
            part = self._ids[digest] = len(self._ids)
            self._bodies[digest] = body
            self._parts.append((part, digest))
        return part

    def _add_request(self, ref: str, request: PreparedRequest) -> None:
        if ref in self._refs:
            return
        self._refs.add(ref)
        chunk = self._chunk
        chunk.add_stored_request(ref, self._carry.step(request, whole=not chunk.requests))


_INSERTS = {
    "preparation_ids": "INSERT INTO preparation_ids (key, replay_n, step_index, c, line) "
                       "VALUES (?, ?, ?, ?, ?)",
    "archives": "INSERT INTO archives (replay_id, n, step_index, path, text, checkpoint_text) "
                "VALUES (?, ?, ?, ?, ?, ?)",
}


def _step_row(prep: ContextPreparation) -> dict[str, Any]:
    """A step's scalar columns and whole-request figures, as their columns held them."""
    error = prep.error
    return {
        "step_index": prep.step_index, "preparation_id": prep.preparation_id,
        "phase": prep.phase, "response_message_index": prep.response_message_index,
        "final_input_tokens": prep.final_input_tokens,
        "provider_prompt_tokens": prep.provider_prompt_tokens,
        "provider_usage_kind": prep.provider_usage_kind, "input_budget": prep.input_budget,
        "pressure_line": prep.pressure_line, "reminder_line": prep.reminder_line,
        "compaction_applied": int(prep.compaction_applied), "message_count": prep.message_count,
        "error_stage": error.stage if error else None, "error_kind": error.kind if error else None,
        "error_message": error.message if error else None,
        "final_request_ref": prep.final_request_ref,
        **{name: as_column(kind, getattr(prep, name)) for name, kind in STEP_FIGURE_COLUMNS},
    }


def staged_name(final: str, token: str) -> str:
    """The id (or name) a staged replay's row has while it is being saved."""
    return f"{final}~saving-{token}"


def forget_unused_bodies(db: SQLDatabase) -> None:
    """Remove request bodies that no replay's requests point at any more."""
    db.execute("DELETE FROM request_bodies WHERE NOT EXISTS (SELECT 1 FROM request_parts p "
               "WHERE p.body_n = request_bodies.n)")
