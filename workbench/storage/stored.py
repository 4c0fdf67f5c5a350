"""A replay reopened from the store: the scalar columns of every step at once, the full record of
a step, its final request, archives and snapshots when asked for. It reads as the
:class:`~workbench.analysis.replay_reader.ReplayReader` the views accept, like an in-memory replay.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from iris.compaction.thresholds import Thresholds
from iris.errors import StorageError
from iris.preparation.records import ContextPreparation, Decision, MessageMark, PreparedRequest
from iris.session import Message
from pydantic import TypeAdapter

from ..records import ArchiveRecord, CompactionFacts, ReplayFacts, ReplayInfo, StepRow
from ._chunks import lines, prefix_key, skeletons
from ._sql import SQLDatabase, query
from .migrations import RECORD_FIELDS_IN_STEPS, STEP_COLUMNS, STEP_FIGURE_COLUMNS, unpack

__all__ = ["StoredReplay", "decisions_of_kind", "preparation_by_id"]

_DECISION = TypeAdapter(Decision)
_INFO_FIELDS = ", ".join([*(f for f in ReplayInfo.model_fields if f != "facts"), "extras_json"])
_STEP_FIELDS = tuple(StepRow.model_fields)


def _replay_key(db: SQLDatabase, replay_id: str) -> int | None:
    rows = query(db, f"reading replay {replay_id!r}", "SELECT n FROM replays WHERE id = ?",
                 [replay_id])
    return rows[0]["n"] if rows else None


def _streams(db: SQLDatabase, replay_n: int, stream: str) -> list[tuple[int, list[str]]]:
    """``(chunk, lines)`` of one stream of every chunk of a replay, in order."""
    return [(r["c"], lines(r[stream])) for r in query(
        db, "reading a replay's steps", f"SELECT c, {stream} FROM step_chunks WHERE replay_n = ? "
        "ORDER BY c", [replay_n])]


def _chunk(db: SQLDatabase, replay_n: int, c: int, stream: str) -> list[str]:
    rows = query(db, "reading a replay's steps", f"SELECT {stream} FROM step_chunks WHERE "
                 "replay_n = ? AND c = ?", [replay_n, c])
    return lines(rows[0][stream]) if rows else []


def _steps(step_lines: Sequence[str]) -> list[dict[str, Any]]:
    """The scalar columns and figures of each line of a chunk's ``steps`` stream."""
    return [dict(zip(STEP_COLUMNS, values, strict=True))
            for values in json.loads(f"[{','.join(step_lines)}]")]


def _record(step: dict[str, Any], record_line: str) -> ContextPreparation:
    """A step's preparation: its ``records`` line with the fields its ``steps`` line holds."""
    data = json.loads(record_line)
    for field in RECORD_FIELDS_IN_STEPS:
        data[field] = step[field]
    return ContextPreparation.model_validate(data)


def _decision(record: dict[str, Any], stage: str, position: int) -> Decision:
    found = next(s for s in record["stages"] if s["name"] == stage)
    return _DECISION.validate_python(found["decisions"][position])


#: One decision's mark: (step, stage, position, kind, message index, chunk, line in the chunk).
_Mark = tuple[int, str, int, str, int | None, int, int]


def _marks(db: SQLDatabase, replay_n: int) -> list[_Mark]:
    """Every decision's mark of a replay, by step, stage name, then position."""
    found: list[_Mark] = []
    for c, marks_lines in _streams(db, replay_n, "marks"):
        for line, text in enumerate(marks_lines):
            step, marks, _ = json.loads(text)
            found += [(step, stage, position, kind, index, c, line)
                      for stage, position, kind, index in marks]
    found.sort(key=lambda x: x[:3])
    return found


def _decisions(marks: Sequence[_Mark], record_line: Callable[[int, int], str],
               kinds: Sequence[str], before_step: int | None,
               message_indexes: Sequence[int] | None) -> tuple[tuple[int, str, Decision], ...]:
    """The decisions the marks of the given kinds (before a step, about some messages) point
    at; only the records of steps with a match are parsed."""
    wanted, about = set(kinds), None if message_indexes is None else set(message_indexes)
    parsed: dict[tuple[int, int], dict[str, Any]] = {}
    out: list[tuple[int, str, Decision]] = []
    for step, stage, position, kind, index, c, line in marks:
        if kind not in wanted or (about is not None and index not in about) or (
                before_step is not None and step >= before_step):
            continue
        if (c, line) not in parsed:
            parsed[c, line] = json.loads(record_line(c, line))
        out.append((step, stage, _decision(parsed[c, line], stage, position)))
    return tuple(out)


def decisions_of_kind(db: SQLDatabase, replay_id: str, kinds: Sequence[str], *,
                      before_step: int | None = None, message_indexes: Sequence[int] | None = None
                      ) -> tuple[tuple[int, str, Decision], ...]:
    """``(step, stage, decision)`` for every decision of the given kinds, in step order (only
    those before ``before_step`` and about ``message_indexes`` when given)."""
    replay_n = _replay_key(db, replay_id)
    if replay_n is None:
        return ()
    @functools.cache
    def records(c: int) -> list[str]:
        return _chunk(db, replay_n, c, "records")

    return _decisions(_marks(db, replay_n), lambda c, line: records(c)[line], kinds,
                      before_step, message_indexes)


def preparation_by_id(db: SQLDatabase, preparation_id: str) -> ContextPreparation | None:
    """A stored preparation by its id (the first replay's, when several hold it), or None."""
    for r in query(db, "reading a preparation", "SELECT p.replay_n, p.c, p.line FROM "
                   "preparation_ids p JOIN replays r ON r.n = p.replay_n WHERE p.key = ? AND "
                   "r.saving IS NULL ORDER BY p.replay_n, p.step_index",
                   [prefix_key(preparation_id)]):
        replay_n, c, line = int(r["replay_n"]), int(r["c"]), int(r["line"])
        step_lines = _chunk(db, replay_n, c, "steps")
        if line < len(step_lines):
            step = _steps(step_lines[line:line + 1])[0]
            if step["preparation_id"] == preparation_id:
                return _record(step, _chunk(db, replay_n, c, "records")[line])
    return None


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
                     f"SELECT n, {_INFO_FIELDS} FROM replays WHERE id = ?", [replay_id])
        if not rows:
            raise StorageError(f"no stored replay {replay_id!r}")
        self._n: int = rows[0].pop("n")
        self.info = ReplayInfo.from_row(rows[0])
        data: list[dict[str, Any]] = []
        self._where: dict[int, tuple[int, int]] = {}  # step index → (chunk, line)
        self._ref_chunk: dict[str, int] = {}  # request ref → chunk of its first step
        for c, step_lines in _streams(db, self._n, "steps"):
            for line, step in enumerate(_steps(step_lines)):
                data.append(step)
                self._where[step["step_index"]] = (c, line)
                if step["final_request_ref"]:
                    self._ref_chunk.setdefault(step["final_request_ref"], c)
        data.sort(key=lambda d: d["step_index"])
        self._data = data
        self._by_step = {d["step_index"]: d for d in data}
        self.steps: tuple[StepRow, ...] = tuple(
            StepRow(**{f: d[f] for f in _STEP_FIELDS}) for d in data)
        self.preparation = functools.lru_cache(maxsize=64)(self._preparation)
        self.request = functools.lru_cache(maxsize=16)(self._request)
        self._lines = functools.lru_cache(maxsize=8)(self._chunk_lines)
        self._figures: dict[tuple[str, ...], dict[int, dict[str, Any]]] = {}
        self._marks: list[_Mark] | None = None

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

    def _chunk_lines(self, c: int, stream: str) -> list[str]:
        return _chunk(self._db, self._n, c, stream)

    def _record_line(self, c: int, line: int) -> str:
        """Line ``line`` of chunk ``c``'s records (read again when a replay streamed into the
        store has grown since the chunk was cached)."""
        found = self._lines(c, "records")
        if line >= len(found):
            self._lines.cache_clear()
            found = self._lines(c, "records")
        return found[line]

    def _preparation(self, step_index: int) -> ContextPreparation:
        where = self._where.get(step_index)
        record_lines = self._lines(where[0], "records") if where is not None else []
        if where is None or where[1] >= len(record_lines):
            raise StorageError(f"replay {self.info.name!r} has no step {step_index}")
        return _record(self._by_step[step_index], record_lines[where[1]])

    def _skeletons(self) -> Iterator[tuple[str, dict[str, list[Any]]]]:
        for _, request_lines in _streams(self._db, self._n, "requests"):
            yield from skeletons(request_lines)

    def _skeleton(self, ref: str) -> dict[str, list[Any]] | None:
        c = self._ref_chunk.get(ref)
        if c is not None:
            found = next((sk for r, sk in skeletons(self._lines(c, "requests")) if r == ref), None)
            if found is not None:
                return found
        return next((sk for r, sk in self._skeletons() if r == ref), None)

    def _request(self, ref: str) -> PreparedRequest | None:
        skeleton = self._skeleton(ref)
        if skeleton is None:
            return None
        bodies = self._bodies(sorted(set(skeleton["m"]) | set(skeleton["t"])))
        return PreparedRequest(
            messages=tuple(Message.model_validate_json(bodies[i]) for i in skeleton["m"]),
            tools=tuple(json.loads(bodies[i]) for i in skeleton["t"]),
            marks=tuple(_mark(k) for k in skeleton["k"]),
            dropped=tuple(skeleton["d"]))

    def _bodies(self, ids: Sequence[int]) -> dict[int, str]:
        return {r["id"]: unpack(r["body"]) for r in query(
            self._db, "reading request parts", "SELECT p.id, b.body FROM request_parts p JOIN "
            "request_bodies b ON b.n = p.body_n WHERE p.replay_n = ? AND p.id IN "
            "(SELECT value FROM json_each(?))", [self._n, json.dumps(list(ids))])}

    def request_parts(self) -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
        """Every final request's message part ids and tool part ids by request reference, without
        reading a body. A replay stores each distinct part once, so two requests share a message
        exactly when they share its id (what a prompt-cache model compares)."""
        parts = {ref: (tuple(sk["m"]), tuple(sk["t"])) for ref, sk in self._skeletons()}
        return dict(sorted(parts.items()))

    def part_messages(self, ids: Sequence[int]) -> dict[int, Message]:
        """The messages stored under the given part ids (as in :meth:`request_parts`)."""
        return {i: Message.model_validate_json(body) for i, body in self._bodies(ids).items()}

    def archives(self) -> tuple[ArchiveRecord, ...]:
        rows = query(self._db, "reading archives", "SELECT n, step_index, path, text, "
                     "checkpoint_text FROM archives WHERE replay_id = ? ORDER BY n", [self.id])
        return tuple(ArchiveRecord.model_validate({**r, "text": unpack(r["text"])}) for r in rows)

    def decisions_of_kind(self, *kinds: str, before_step: int | None = None,
                          message_indexes: Sequence[int] | None = None
                          ) -> tuple[tuple[int, str, Decision], ...]:
        if self._marks is None:  # read once: the Reduction and Step-through pages ask per step
            self._marks = _marks(self._db, self._n)
        return _decisions(self._marks, self._record_line, kinds, before_step, message_indexes)

    def step_figures(self, fields: Sequence[str]) -> dict[int, dict[str, Any]]:
        """Whole-request figures of every step by step index (read with the steps; no record
        is opened); ``fields`` are names of :data:`STEP_FIGURE_COLUMNS`."""
        key = tuple(fields)
        unknown = set(key) - {name for name, _ in STEP_FIGURE_COLUMNS}
        if unknown:
            raise ValueError(f"not a stored step figure: {', '.join(sorted(unknown))}")
        if key not in self._figures:
            self._figures[key] = {d["step_index"]: {f: d[f] for f in key} for d in self._data}
        return self._figures[key]

    def stage_savings(self, names: Sequence[str]) -> dict[int, dict[str, int]]:
        """Tokens each named stage removed, by step index then stage name."""
        wanted, saved = set(names), dict[int, dict[str, int]]()
        for _, marks_lines in _streams(self._db, self._n, "marks"):
            for text in marks_lines:
                step, _, stages = json.loads(text)
                for name, before, after in stages:
                    if name in wanted:
                        saved.setdefault(step, {})[name] = max(before - after, 0)
        return dict(sorted(saved.items()))

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
