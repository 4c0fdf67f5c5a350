"""The evidence layer of the store: named replays with their preparations, stages, decisions,
final requests, archives, configuration and template snapshot (R-PREP-5, R-UI-1).

A replay is saved in one transaction under a name, per session; saving the same name again
replaces it. Reopening must stay fast on a 2,000-step replay, so :func:`open_replay` reads only the
per-step scalar columns (what the usage and failure views need for every step) and each step's full
:class:`ContextPreparation` is parsed when that step is looked at. Final requests are stored as a
zlib-compressed skeleton of ids into de-duplicated message rows: consecutive steps resend almost
the same messages, and storing each request whole would grow with the square of the session.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from iris.errors import StorageError
from iris.preparation.records import ContextPreparation, Decision, MessageMark, PreparedRequest
from iris.session import Message
from pydantic import BaseModel, ConfigDict, TypeAdapter
from sqlite_utils import Database

from .store import write_transaction

__all__ = [
    "ArchiveRecord",
    "EvidenceBundle",
    "ReplayInfo",
    "RequestWriter",
    "StepRow",
    "StoredReplay",
    "decisions_of_kind",
    "delete_replay",
    "find_replay",
    "list_replays",
    "load_preparation_by_id",
    "open_replay",
    "replay_id_for",
    "save_replay",
]

_DECISION = TypeAdapter(Decision)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ArchiveRecord(_Frozen):
    """One applied compaction's lossless archive and the checkpoint that replaced it."""

    n: int
    """The N of ``history-N.md`` (1 for the first compaction of the replay)."""
    step_index: int | None = None
    """The step whose preparation applied it."""
    path: str
    text: str
    checkpoint_text: str = ""


class EvidenceBundle(_Frozen):
    """Everything one replay produced, in the shape the store saves."""

    preparations: tuple[ContextPreparation, ...]
    requests: Mapping[str, PreparedRequest] = {}
    """Final requests by ``final_request_ref``."""
    archives: tuple[ArchiveRecord, ...] = ()
    configuration_snapshot_id: str = ""
    configuration_hash: str | None = None
    configuration_json: Mapping[str, Any] | None = None
    configuration_yaml: str = ""
    template_snapshot_id: str | None = None
    template_sources: Mapping[str, str] | None = None
    summariser: str = "extractive"
    extras: Mapping[str, Any] = {}
    """Replay-wide figures (thresholds, run usage) kept as JSON for the views."""


class ReplayInfo(_Frozen):
    """One row of the replay list."""

    id: str
    name: str
    session_id: str
    configuration_hash: str | None
    template_snapshot_id: str | None
    configuration_snapshot_id: str
    summariser: str
    created_at: str
    step_count: int
    ready_count: int
    failed_count: int
    cancelled_count: int
    compactions_applied: int
    final_tokens: int
    record_schema_version: int
    extras_json: str = "{}"

    @property
    def extras(self) -> dict[str, Any]:
        return json.loads(self.extras_json)


class StepRow(_Frozen):
    """The scalar columns of one preparation (no JSON parsing needed)."""

    step_index: int
    preparation_id: str
    phase: str
    response_message_index: int
    final_input_tokens: int
    provider_prompt_tokens: int | None
    provider_usage_kind: str
    input_budget: int
    pressure_line: int
    reminder_line: int | None
    compaction_applied: bool
    message_count: int
    error_stage: str | None
    error_kind: str | None
    error_message: str | None
    final_request_ref: str | None


def replay_id_for(session_id: str, name: str) -> str:
    """Deterministic id of the replay ``name`` of a session (saving the name again replaces it)."""
    digest = hashlib.sha256(f"{session_id}\x00{name}".encode()).hexdigest()
    return f"replay-{digest[:16]}"


def _now() -> datetime:
    return datetime.now(UTC)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _guard(action: str):
    """Turn SQLite errors into a StorageError naming the action (decorator)."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except sqlite3.Error as exc:
                raise StorageError(f"{action} failed ({exc})") from None
            except (OverflowError, UnicodeEncodeError) as exc:  # values SQLite cannot hold
                raise StorageError(f"{action} failed: a value SQLite cannot store ({exc}); "
                                   "imports refuse such values (docs/robustness.md)") from None
        return inner
    return wrap


# -------------------------------------------------------------------------------- writing


@_guard("saving a replay")
def save_replay(db: Database, bundle: EvidenceBundle, *, session_id: str, name: str,
                clock: Callable[[], datetime] = _now) -> ReplayInfo:
    """Save (or replace) the replay ``name`` of ``session_id``; one transaction."""
    replay_id = replay_id_for(session_id, name)
    created = clock().astimezone(UTC).isoformat(timespec="microseconds")
    info = _info_row(bundle, replay_id, session_id, name, created)
    # BEGIN IMMEDIATE: two processes saving replays at once queue for the write lock instead of
    # one failing with "database is locked" when its deferred transaction cannot be upgraded
    with write_transaction(db):
        db.execute("DELETE FROM replays WHERE id = ?", [replay_id])
        _save_snapshots(db, bundle, created)
        db["replays"].insert(info)
        db["preparations"].insert_all((_step_row(replay_id, p) for p in bundle.preparations),
                                      batch_size=200)
        db["stages"].insert_all(_stage_rows(replay_id, bundle.preparations), batch_size=500)
        db["decisions"].insert_all(_decision_rows(replay_id, bundle.preparations), batch_size=500)
        _save_requests(db, replay_id, bundle.requests)
        db["archives"].insert_all({"replay_id": replay_id, **a.model_dump()} for a in bundle.archives)
    return ReplayInfo(**info)


def _info_row(bundle: EvidenceBundle, replay_id: str, session_id: str, name: str,
              created: str) -> dict[str, Any]:
    preps = bundle.preparations
    phases = [p.phase for p in preps]
    return {
        "id": replay_id, "name": name, "session_id": session_id,
        "configuration_hash": bundle.configuration_hash,
        "template_snapshot_id": bundle.template_snapshot_id,
        "configuration_snapshot_id": bundle.configuration_snapshot_id or (
            preps[0].configuration_snapshot_id if preps else ""),
        "summariser": bundle.summariser, "created_at": created, "step_count": len(preps),
        "ready_count": phases.count("ready"), "failed_count": phases.count("failed"),
        "cancelled_count": phases.count("cancelled"),
        "compactions_applied": sum(1 for p in preps if p.compaction_applied),
        "final_tokens": preps[-1].final_input_tokens if preps else 0,
        "record_schema_version": preps[0].schema_version if preps else 1,
        "extras_json": _canonical(dict(bundle.extras)),
    }


def _save_snapshots(db: Database, bundle: EvidenceBundle, created: str) -> None:
    if bundle.configuration_hash and bundle.configuration_json is not None:
        db.execute("INSERT OR IGNORE INTO configurations (hash, json, yaml, created_at) "
                   "VALUES (?, ?, ?, ?)", [bundle.configuration_hash,
                                           _canonical(dict(bundle.configuration_json)),
                                           bundle.configuration_yaml, created])
    if bundle.template_snapshot_id and bundle.template_sources is not None:
        db.execute("INSERT OR IGNORE INTO template_snapshots (id, sources_json, created_at) "
                   "VALUES (?, ?, ?)", [bundle.template_snapshot_id,
                                        _canonical(dict(bundle.template_sources)), created])


def _step_row(replay_id: str, prep: ContextPreparation) -> dict[str, Any]:
    error = prep.error
    return {
        "replay_id": replay_id, "step_index": prep.step_index,
        "preparation_id": prep.preparation_id, "phase": prep.phase,
        "response_message_index": prep.response_message_index,
        "final_input_tokens": prep.final_input_tokens,
        "provider_prompt_tokens": prep.provider_prompt_tokens,
        "provider_usage_kind": prep.provider_usage_kind, "input_budget": prep.input_budget,
        "pressure_line": prep.pressure_line, "reminder_line": prep.reminder_line,
        "compaction_applied": int(prep.compaction_applied), "message_count": prep.message_count,
        "error_stage": error.stage if error else None, "error_kind": error.kind if error else None,
        "error_message": error.message if error else None,
        "final_request_ref": prep.final_request_ref,
        "json": prep.model_dump_json(),
    }


def _stage_rows(replay_id: str, preps: Iterable[ContextPreparation]) -> Iterable[dict[str, Any]]:
    for prep in preps:
        for position, stage in enumerate(prep.stages):
            yield {"replay_id": replay_id, "step_index": prep.step_index, "position": position,
                   "name": stage.name, "status": stage.status,
                   "before_input_tokens": stage.before_input_tokens,
                   "after_input_tokens": stage.after_input_tokens,
                   "decision_count": len(stage.decisions), "note": stage.note}


def _decision_rows(replay_id: str, preps: Iterable[ContextPreparation]) -> Iterable[dict[str, Any]]:
    for prep in preps:
        for stage in prep.stages:
            for position, decision in enumerate(stage.decisions):
                yield {"replay_id": replay_id, "step_index": prep.step_index, "stage": stage.name,
                       "position": position, "kind": decision.kind,
                       "message_index": decision.message_index, "ref": decision.ref,
                       "reason": decision.reason, "json": decision.model_dump_json()}


class RequestWriter:
    """Writes final requests of one replay: each distinct message/tool body once, each request as
    a compressed skeleton of ids (state kept across calls so a streaming sink can use it too)."""

    def __init__(self, db: Database, replay_id: str) -> None:
        self.db, self.replay_id = db, replay_id
        self._ids: dict[str, int] = {}
        self._memo: dict[int, tuple[object, int]] = {}  # id(obj) → (obj, row): objects are shared
        self._bodies: list[tuple[str, int, str, str]] = []
        self._skeletons: list[tuple[str, str, bytes]] = []

    def _blob_id(self, obj: Any) -> int:
        hit = self._memo.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        body = obj.model_dump_json() if isinstance(obj, BaseModel) else _canonical(obj)
        digest = hashlib.sha256(body.encode()).hexdigest()
        row = self._ids.get(digest)
        if row is None:
            row = self._ids[digest] = len(self._ids)
            self._bodies.append((self.replay_id, row, digest, body))
        self._memo[id(obj)] = (obj, row)
        return row

    def add(self, ref: str, request: PreparedRequest) -> None:
        # Marks as plain lists (origin, history index, key, marks): a model dump per message and
        # step was most of the saving time of a long replay.
        skeleton = {"m": [self._blob_id(m) for m in request.messages],
                    "t": [self._blob_id(t) for t in request.tools],
                    "k": [[k.origin, k.history_index, k.key, list(k.marks)] for k in request.marks],
                    "d": list(request.dropped)}
        text = json.dumps(skeleton, separators=(",", ":"), ensure_ascii=False)
        self._skeletons.append((self.replay_id, ref, zlib.compress(text.encode(), 6)))

    def flush(self) -> None:
        self.db.conn.executemany("INSERT INTO request_messages (replay_id, id, hash, json) "
                                 "VALUES (?,?,?,?)", self._bodies)
        self.db.conn.executemany("INSERT OR IGNORE INTO requests (replay_id, ref, skeleton) "
                                 "VALUES (?, ?, ?)", self._skeletons)
        self._bodies, self._skeletons = [], []


def _save_requests(db: Database, replay_id: str, requests: Mapping[str, PreparedRequest]) -> None:
    writer = RequestWriter(db, replay_id)
    for ref in sorted(requests):
        writer.add(ref, requests[ref])
    writer.flush()


def _mark(row: list[Any] | dict[str, Any]) -> MessageMark:
    if isinstance(row, dict):  # skeletons written before marks were stored as lists
        return MessageMark.model_validate(row)
    origin, history_index, key, marks = row
    return MessageMark(origin=origin, history_index=history_index, key=key, marks=tuple(marks))


@_guard("deleting a replay")
def delete_replay(db: Database, replay_id: str) -> bool:
    """Delete a replay and everything below it; False when it did not exist."""
    with db.atomic():
        for table in ("archives", "requests", "request_messages", "decisions", "stages",
                      "preparations"):
            db.execute(f"DELETE FROM {table} WHERE replay_id = ?", [replay_id])
        return db.execute("DELETE FROM replays WHERE id = ?", [replay_id]).rowcount > 0


# -------------------------------------------------------------------------------- reading

_INFO_FIELDS = ", ".join(ReplayInfo.model_fields)
_STEP_FIELDS = ", ".join(StepRow.model_fields)


@_guard("listing replays")
def list_replays(db: Database, session_id: str | None = None) -> tuple[ReplayInfo, ...]:
    """Stored replays (of one session, or all), oldest first then by name."""
    where, args = ("WHERE session_id = ?", [session_id]) if session_id else ("", [])
    rows = db.query(f"SELECT {_INFO_FIELDS} FROM replays {where} ORDER BY created_at, name", args)
    return tuple(ReplayInfo(**r) for r in rows)


def find_replay(db: Database, session_id: str, name: str) -> ReplayInfo | None:
    """The replay ``name`` of a session, or None."""
    wanted = replay_id_for(session_id, name)
    return next((r for r in list_replays(db, session_id) if r.id == wanted), None)


@_guard("reading a preparation")
def load_preparation_by_id(db: Database, preparation_id: str) -> ContextPreparation:
    """A stored preparation by its id (R-PREP-5)."""
    rows = list(db.query("SELECT json FROM preparations WHERE preparation_id = ? LIMIT 1",
                         [preparation_id]))
    if not rows:
        raise StorageError(f"no stored preparation {preparation_id!r}")
    return ContextPreparation.model_validate_json(rows[0]["json"])


@_guard("querying decisions")
def decisions_of_kind(db: Database, replay_id: str,
                      kinds: Sequence[str]) -> tuple[tuple[int, str, Decision], ...]:
    """``(step, stage, decision)`` for every decision of the given kinds, in step order."""
    marks = ",".join("?" for _ in kinds)
    rows = db.query(f"SELECT step_index, stage, json FROM decisions WHERE replay_id = ? AND kind IN "
                    f"({marks}) ORDER BY step_index, stage, position", [replay_id, *kinds])
    return tuple((r["step_index"], r["stage"], _DECISION.validate_json(r["json"])) for r in rows)


def open_replay(db: Database, replay_id: str) -> StoredReplay:
    """A stored replay, ready to step through (reads only the per-step scalars)."""
    return StoredReplay(db, replay_id)


class StoredReplay:
    """A reopened replay: scalars for every step now, full records one step at a time."""

    def __init__(self, db: Database, replay_id: str) -> None:
        self.db = db
        try:
            rows = list(db.query(f"SELECT {_INFO_FIELDS} FROM replays WHERE id = ?", [replay_id]))
            if not rows:
                raise StorageError(f"no stored replay {replay_id!r}")
            self.info = ReplayInfo(**rows[0])
            self.steps: tuple[StepRow, ...] = tuple(StepRow(**r) for r in db.query(
                f"SELECT {_STEP_FIELDS} FROM preparations WHERE replay_id = ? ORDER BY step_index",
                [replay_id]))
        except sqlite3.Error as exc:
            raise StorageError(f"reading replay {replay_id!r} failed ({exc})") from None
        self.preparation = functools.lru_cache(maxsize=64)(self._preparation)
        self.request = functools.lru_cache(maxsize=16)(self._request)

    @property
    def id(self) -> str:
        return self.info.id

    def __len__(self) -> int:
        return len(self.steps)

    def _preparation(self, step_index: int) -> ContextPreparation:
        rows = list(self.db.query("SELECT json FROM preparations WHERE replay_id = ? AND "
                                  "step_index = ?", [self.id, step_index]))
        if not rows:
            raise StorageError(f"replay {self.info.name!r} has no step {step_index}")
        return ContextPreparation.model_validate_json(rows[0]["json"])

    def _request(self, ref: str) -> PreparedRequest | None:
        rows = list(self.db.query("SELECT skeleton FROM requests WHERE replay_id = ? AND ref = ?",
                                  [self.id, ref]))
        if not rows:
            return None
        skeleton = json.loads(zlib.decompress(rows[0]["skeleton"]))
        wanted = sorted(set(skeleton["m"]) | set(skeleton["t"]))
        bodies = {r["id"]: r["json"] for r in self.db.query(
            "SELECT id, json FROM request_messages WHERE replay_id = ? AND id IN "
            "(SELECT value FROM json_each(?))", [self.id, json.dumps(wanted)])}
        return PreparedRequest(
            messages=tuple(Message.model_validate_json(bodies[i]) for i in skeleton["m"]),
            tools=tuple(json.loads(bodies[i]) for i in skeleton["t"]),
            marks=tuple(_mark(k) for k in skeleton["k"]),
            dropped=tuple(skeleton["d"]))

    def archives(self) -> tuple[ArchiveRecord, ...]:
        rows = self.db.query("SELECT n, step_index, path, text, checkpoint_text FROM archives "
                             "WHERE replay_id = ? ORDER BY n", [self.id])
        return tuple(ArchiveRecord(**r) for r in rows)

    def decisions_of_kind(self, *kinds: str) -> tuple[tuple[int, str, Decision], ...]:
        return decisions_of_kind(self.db, self.id, kinds)

    def configuration_yaml(self) -> str:
        if not self.info.configuration_hash:
            return ""
        rows = list(self.db.query("SELECT yaml FROM configurations WHERE hash = ?",
                                  [self.info.configuration_hash]))
        return rows[0]["yaml"] if rows else ""
