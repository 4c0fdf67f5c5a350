"""The one write path of a replay: its row, each step (preparation, stages, decisions, final
request), its archives and, at the end, its counts and facts. The caller owns the transaction:
the repository runs a whole replay in one, the evidence sink one per step.

Final requests are stored as a zlib-compressed skeleton of ids into de-duplicated message rows:
consecutive steps resend almost the same messages, and storing each request whole would grow with
the square of the session. The message bodies themselves are compressed and kept once per store
(``request_bodies``, by content hash), so replays of one session share them. A preparation's
record is kept compressed and without its decisions (the decisions table holds them).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Mapping
from typing import Any

from iris.preparation.records import ContextPreparation, PreparedRequest
from pydantic import BaseModel

from ..records import ArchiveRecord, EvidenceBundle, ReplayFacts, ReplayInfo
from ._sql import SQLDatabase, canonical
from .migrations import STEP_FIGURE_COLUMNS, pack

__all__ = ["ReplayWriter"]



def _final_request(prep: Any) -> int:
    """The last step's request on the whole-request basis every page states (the raw local
    estimate for a step without one)."""
    whole = prep.whole_request_tokens
    return prep.final_input_tokens if whole is None else whole

class ReplayWriter:
    """Writes one replay; rows are buffered and written by :meth:`flush` (and :meth:`finish`)."""

    def __init__(self, db: SQLDatabase, replay_id: str, *, session_id: str, name: str,
                 summariser: str, created: str) -> None:
        self.db, self.replay_id, self.summariser = db, replay_id, summariser
        self._session_id, self._name, self._created = session_id, name, created
        self._bundle = EvidenceBundle(preparations=(), summariser=summariser)
        self._steps: list[ContextPreparation] = []
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._ids: dict[str, int] = {}
        self._memo: dict[int, tuple[object, int]] = {}  # id(obj) → (obj, row): objects are shared
        self._refs: set[str] = set()
        self._bodies: dict[str, str] = {}  # content hash → body text, not yet written

    def begin(self, bundle: EvidenceBundle) -> None:
        """Replace any replay of this name (cascades remove its rows) and write the replay row and
        its configuration and template snapshots."""
        self._bundle = bundle.model_copy(update={"preparations": ()})
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
        self._insert("replays", [self._info_row()])

    def add_step(self, prep: ContextPreparation, request: PreparedRequest | None) -> None:
        self._steps.append(prep)
        self._buffer("preparations", _step_row(self.replay_id, prep))
        for position, stage in enumerate(prep.stages):
            self._buffer("stages", {
                "replay_id": self.replay_id, "step_index": prep.step_index, "position": position,
                "name": stage.name, "status": stage.status,
                "before_input_tokens": stage.before_input_tokens,
                "after_input_tokens": stage.after_input_tokens,
                "decision_count": len(stage.decisions), "note": stage.note})
            for i, decision in enumerate(stage.decisions):
                self._buffer("decisions", {
                    "replay_id": self.replay_id, "step_index": prep.step_index,
                    "stage": stage.name, "position": i, "kind": decision.kind,
                    "message_index": decision.message_index, "ref": decision.ref,
                    "reason": decision.reason, "json": decision.model_dump_json()})
        ref = prep.final_request_ref
        if request is not None and ref:
            self._add_request(ref, request)
        if len(self._rows.get("decisions", ())) > 2000:
            self.flush()

    def add_requests(self, requests: Mapping[str, PreparedRequest]) -> None:
        """Requests no step pointed at (kept so they read back by their reference)."""
        for ref in sorted(set(requests) - self._refs):
            self._add_request(ref, requests[ref])

    def add_archives(self, archives: Iterable[ArchiveRecord]) -> None:
        for a in archives:
            self._buffer("archives", {"replay_id": self.replay_id, **a.model_dump(),
                                      "text": pack(a.text)})

    def flush(self) -> None:
        if self._bodies:  # compressed only when the store does not hold them yet
            wanted = list(self._bodies)
            held = {r[0] for r in self.db.execute(
                "SELECT hash FROM request_bodies WHERE hash IN (SELECT value FROM json_each(?))",
                [json.dumps(wanted)]).fetchall()}
            for digest in wanted:
                if digest not in held:
                    self._buffer("request_bodies", {"hash": digest,
                                                    "body": pack(self._bodies[digest])})
            self._bodies = {}
        for table in ("preparations", "stages", "decisions", "request_bodies", "request_messages",
                      "requests", "archives"):
            rows = self._rows.pop(table, None)
            if rows:
                self._insert(table, rows)

    def finish(self, facts: ReplayFacts | None = None) -> ReplayInfo:
        """Flush and write the replay's counts (and ``facts``, when given); request bodies no
        replay uses any more (those of a replay this one replaced) are removed."""
        self.flush()
        forget_unused_bodies(self.db)
        if facts is not None:
            self._bundle = self._bundle.model_copy(update={"facts": facts})
        row = self._info_row()
        self.db.execute(f"UPDATE replays SET {', '.join(f'{k} = ?' for k in row if k != 'id')} "
                        "WHERE id = ?", [*(v for k, v in row.items() if k != "id"), self.replay_id])
        return ReplayInfo.from_row(row)

    # ------------------------------------------------------------------------------ helpers

    def _buffer(self, table: str, row: dict[str, Any]) -> None:
        self._rows.setdefault(table, []).append(row)

    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        columns = list(rows[0])
        verb = "INSERT OR IGNORE" if table in ("requests", "request_bodies") else "INSERT"
        self.db.conn.executemany(
            f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            [[r[c] for c in columns] for r in rows])

    def _info_row(self) -> dict[str, Any]:
        bundle, preps = self._bundle, self._steps
        phases = [p.phase for p in preps]
        return {
            "id": self.replay_id, "name": self._name, "session_id": self._session_id,
            "configuration_hash": bundle.configuration_hash,
            "template_snapshot_id": bundle.template_snapshot_id,
            "configuration_snapshot_id": bundle.configuration_snapshot_id or (
                preps[0].configuration_snapshot_id if preps else ""),
            "summariser": self.summariser, "created_at": self._created, "step_count": len(preps),
            "ready_count": phases.count("ready"), "failed_count": phases.count("failed"),
            "cancelled_count": phases.count("cancelled"),
            "compactions_applied": sum(1 for p in preps if p.compaction_applied),
            "final_tokens": _final_request(preps[-1]) if preps else 0,
            "record_schema_version": preps[0].schema_version if preps else 1,
            "extras_json": bundle.facts.model_dump_json(),
        }

    def _blob_id(self, obj: Any) -> int:
        hit = self._memo.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        body = obj.model_dump_json() if isinstance(obj, BaseModel) else canonical(obj)
        digest = hashlib.sha256(body.encode()).hexdigest()
        row = self._ids.get(digest)
        if row is None:
            row = self._ids[digest] = len(self._ids)
            self._bodies[digest] = body
            self._buffer("request_messages", {"replay_id": self.replay_id, "id": row,
                                              "hash": digest})
        self._memo[id(obj)] = (obj, row)
        return row

    def _add_request(self, ref: str, request: PreparedRequest) -> None:
        if ref in self._refs:
            return
        self._refs.add(ref)
        # Marks as plain lists (origin, history index, key, marks): a model dump per message and
        # step was most of the saving time of a long replay.
        skeleton = {"m": [self._blob_id(m) for m in request.messages],
                    "t": [self._blob_id(t) for t in request.tools],
                    "k": [[k.origin, k.history_index, k.key, list(k.marks)] for k in request.marks],
                    "d": list(request.dropped)}
        text = json.dumps(skeleton, separators=(",", ":"), ensure_ascii=False)
        self._buffer("requests", {"replay_id": self.replay_id, "ref": ref,
                                  "skeleton": zlib.compress(text.encode(), 6)})


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
        **{name: getattr(prep, name) for name, _ in STEP_FIGURE_COLUMNS},
        "record": pack(prep.model_copy(update={"stages": tuple(
            s.model_copy(update={"decisions": ()}) for s in prep.stages)}).model_dump_json()),
    }


def forget_unused_bodies(db: SQLDatabase) -> None:
    """Remove request bodies that no replay's requests point at any more."""
    db.execute("DELETE FROM request_bodies WHERE NOT EXISTS (SELECT 1 FROM request_messages m "
               "WHERE m.hash = request_bodies.hash)")
