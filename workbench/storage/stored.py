"""A replay reopened from the store: the scalar columns of every step at once, the full record of
a step, its final request, archives and snapshots when asked for. It reads as the
:class:`~workbench.replay_reader.ReplayReader` the views accept, like an in-memory replay.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Sequence
from typing import Any

from iris.compaction.thresholds import Thresholds
from iris.errors import StorageError
from iris.preparation.records import ContextPreparation, Decision, MessageMark, PreparedRequest
from iris.session import Message
from pydantic import TypeAdapter

from ..records import ArchiveRecord, CompactionFacts, ReplayFacts, ReplayInfo, StepRow
from ._sql import SQLDatabase, query
from .migrations import STEP_FIGURE_COLUMNS, unpack

__all__ = ["StoredReplay", "decisions_of_kind", "read_record"]

_DECISION = TypeAdapter(Decision)
_INFO_FIELDS = ", ".join([*(f for f in ReplayInfo.model_fields if f != "facts"), "extras_json"])
_STEP_FIELDS = ", ".join(StepRow.model_fields)


def decisions_of_kind(db: SQLDatabase, replay_id: str, kinds: Sequence[str], *,
                      before_step: int | None = None, message_indexes: Sequence[int] | None = None
                      ) -> tuple[tuple[int, str, Decision], ...]:
    """``(step, stage, decision)`` for every decision of the given kinds, in step order (only
    those before ``before_step`` and about ``message_indexes`` when given; one indexed query)."""
    marks = ",".join("?" for _ in kinds)
    sql = (f"SELECT step_index, stage, json FROM decisions WHERE replay_id = ? AND kind IN "
           f"({marks})")
    args: list[Any] = [replay_id, *kinds]
    if before_step is not None:
        sql, args = sql + " AND step_index < ?", [*args, before_step]
    if message_indexes is not None:
        sql += " AND message_index IN (SELECT value FROM json_each(?))"
        args.append(json.dumps(list(message_indexes)))
    rows = query(db, "querying decisions", sql + " ORDER BY step_index, stage, position", args)
    return tuple((r["step_index"], r["stage"], _DECISION.validate_json(r["json"])) for r in rows)


def read_record(db: SQLDatabase, replay_id: str, step_index: int, record: bytes
                ) -> ContextPreparation:
    """A stored preparation: its compressed record with its decisions put back in place."""
    data = json.loads(unpack(record))
    by_stage: dict[str, list[Any]] = {}
    for r in query(db, "reading a preparation", "SELECT stage, json FROM decisions WHERE "
                   "replay_id = ? AND step_index = ? ORDER BY stage, position",
                   [replay_id, step_index]):
        by_stage.setdefault(r["stage"], []).append(json.loads(r["json"]))
    for stage in data["stages"]:
        stage["decisions"] = by_stage.get(stage["name"], [])
    return ContextPreparation.model_validate(data)


def _mark(row: list[Any] | dict[str, Any]) -> MessageMark:
    if isinstance(row, dict):  # skeletons written before marks were stored as lists
        return MessageMark.model_validate(row)
    origin, history_index, key, marks = row
    return MessageMark(origin=origin, history_index=history_index, key=key, marks=tuple(marks))


class StoredReplay:
    """A reopened replay: scalars for every step now, full records one step at a time."""

    def __init__(self, db: SQLDatabase, replay_id: str) -> None:
        self._db = db
        rows = query(db, f"reading replay {replay_id!r}",
                     f"SELECT {_INFO_FIELDS} FROM replays WHERE id = ?", [replay_id])
        if not rows:
            raise StorageError(f"no stored replay {replay_id!r}")
        self.info = ReplayInfo.from_row(rows[0])
        self.steps: tuple[StepRow, ...] = tuple(StepRow(**r) for r in query(
            db, f"reading replay {replay_id!r}", f"SELECT {_STEP_FIELDS} FROM preparations "
            "WHERE replay_id = ? ORDER BY step_index", [replay_id]))
        self.preparation = functools.lru_cache(maxsize=64)(self._preparation)
        self.request = functools.lru_cache(maxsize=16)(self._request)
        self._figures: dict[tuple[str, ...], dict[int, dict[str, Any]]] = {}

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def facts(self) -> ReplayFacts:
        return self.info.facts

    @property
    def thresholds(self) -> Thresholds | None:
        return self.info.facts.thresholds

    @property
    def checkpoints(self) -> tuple[CompactionFacts, ...]:
        return self.info.facts.compactions

    def __len__(self) -> int:
        return len(self.steps)

    def _preparation(self, step_index: int) -> ContextPreparation:
        rows = query(self._db, "reading a preparation", "SELECT record FROM preparations WHERE "
                     "replay_id = ? AND step_index = ?", [self.id, step_index])
        if not rows:
            raise StorageError(f"replay {self.info.name!r} has no step {step_index}")
        return read_record(self._db, self.id, step_index, rows[0]["record"])

    def _request(self, ref: str) -> PreparedRequest | None:
        rows = query(self._db, "reading a request", "SELECT skeleton FROM requests WHERE "
                     "replay_id = ? AND ref = ?", [self.id, ref])
        if not rows:
            return None
        skeleton = json.loads(zlib.decompress(rows[0]["skeleton"]))
        wanted = sorted(set(skeleton["m"]) | set(skeleton["t"]))
        bodies = {r["id"]: unpack(r["body"]) for r in query(
            self._db, "reading a request", "SELECT m.id, b.body FROM request_messages m JOIN "
            "request_bodies b ON b.hash = m.hash WHERE m.replay_id = ? AND m.id IN "
            "(SELECT value FROM json_each(?))", [self.id, json.dumps(wanted)])}
        return PreparedRequest(
            messages=tuple(Message.model_validate_json(bodies[i]) for i in skeleton["m"]),
            tools=tuple(json.loads(bodies[i]) for i in skeleton["t"]),
            marks=tuple(_mark(k) for k in skeleton["k"]),
            dropped=tuple(skeleton["d"]))

    def request_parts(self) -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
        """Every final request's message part ids and tool part ids by request reference, in one
        query and without reading a body. A replay stores each distinct part once, so two
        requests share a message exactly when they share its id (what a prompt-cache model
        compares)."""
        out: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        for r in query(self._db, "reading requests", "SELECT ref, skeleton FROM requests WHERE "
                       "replay_id = ?", [self.id]):
            skeleton = json.loads(zlib.decompress(r["skeleton"]))
            out[r["ref"]] = (tuple(skeleton["m"]), tuple(skeleton["t"]))
        return out

    def part_messages(self, ids: Sequence[int]) -> dict[int, Message]:
        """The messages stored under the given part ids (as in :meth:`request_parts`)."""
        return {r["id"]: Message.model_validate_json(unpack(r["body"])) for r in query(
            self._db, "reading request parts", "SELECT m.id, b.body FROM request_messages m JOIN "
            "request_bodies b ON b.hash = m.hash WHERE m.replay_id = ? AND m.id IN "
            "(SELECT value FROM json_each(?))", [self.id, json.dumps(list(ids))])}

    def archives(self) -> tuple[ArchiveRecord, ...]:
        rows = query(self._db, "reading archives", "SELECT n, step_index, path, text, "
                     "checkpoint_text FROM archives WHERE replay_id = ? ORDER BY n", [self.id])
        return tuple(ArchiveRecord.model_validate({**r, "text": unpack(r["text"])}) for r in rows)

    def decisions_of_kind(self, *kinds: str, before_step: int | None = None,
                          message_indexes: Sequence[int] | None = None
                          ) -> tuple[tuple[int, str, Decision], ...]:
        return decisions_of_kind(self._db, self.id, kinds, before_step=before_step,
                                 message_indexes=message_indexes)

    def step_figures(self, fields: Sequence[str]) -> dict[int, dict[str, Any]]:
        """Whole-request figures of every step by step index, in one query (no record is
        opened); ``fields`` are names of :data:`STEP_FIGURE_COLUMNS`."""
        key = tuple(fields)
        unknown = set(key) - {name for name, _ in STEP_FIGURE_COLUMNS}
        if unknown:
            raise ValueError(f"not a stored step figure: {', '.join(sorted(unknown))}")
        if key not in self._figures:
            rows = query(self._db, "reading step figures", f"SELECT step_index, {', '.join(key)} "
                         "FROM preparations WHERE replay_id = ?", [self.id])
            self._figures[key] = {r.pop("step_index"): r for r in rows}
        return self._figures[key]

    def stage_savings(self, names: Sequence[str]) -> dict[int, dict[str, int]]:
        """Tokens each named stage removed, by step index then stage name."""
        marks = ",".join("?" for _ in names)
        rows = query(self._db, "reading stages", "SELECT step_index, name, before_input_tokens, "
                     f"after_input_tokens FROM stages WHERE replay_id = ? AND name IN ({marks})",
                     [self.id, *names])
        saved: dict[int, dict[str, int]] = {}
        for r in rows:
            saved.setdefault(r["step_index"], {})[r["name"]] = max(
                r["before_input_tokens"] - r["after_input_tokens"], 0)
        return saved

    def configuration_yaml(self) -> str:
        if not self.info.configuration_hash:
            return ""
        rows = query(self._db, "reading a configuration", "SELECT yaml FROM configurations "
                     "WHERE hash = ?", [self.info.configuration_hash])
        return rows[0]["yaml"] if rows else ""

    def template_sources(self) -> dict[str, str] | None:
        """The template snapshot's sources, or None when the replay kept none."""
        snapshot_id = self.info.template_snapshot_id
        if not snapshot_id:
            return None
        rows = query(self._db, "reading a template snapshot", "SELECT sources_json FROM "
                     "template_snapshots WHERE id = ?", [snapshot_id])
        return json.loads(rows[0]["sources_json"]) if rows else None
