"""The workbench store as the engine's evidence sink (R-PREP-5): each published preparation is
written as it arrives, under a named replay, and can be read back by its id.

``iris.preparation.publisher.Publisher`` hands every snapshot to ``sink.save(preparation,
request)``; this sink writes that step (preparation row, stages, decisions, final request) in its
own small transaction, so a crash keeps every step already published. :meth:`StoreSink.finish`
writes the replay's counts. A replay saved in one piece uses :func:`workbench.evidence.save_replay`
instead; both produce the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from iris.preparation.records import ContextPreparation, PreparedRequest
from sqlite_utils import Database

from .replays import (
    EvidenceBundle,
    ReplayInfo,
    RequestWriter,
    _decision_rows,
    _info_row,
    _now,
    _stage_rows,
    _step_row,
    replay_id_for,
)

__all__ = ["StoreSink"]


class StoreSink:
    """An ``EvidenceSink`` writing into the replay ``name`` of ``session_id`` (replacing it)."""

    def __init__(self, db: Database, *, session_id: str, name: str, summariser: str = "extractive",
                 clock: Callable[[], datetime] = _now) -> None:
        self.db = db
        self.replay_id = replay_id_for(session_id, name)
        self._session_id, self._name, self._summariser = session_id, name, summariser
        self._created = clock().astimezone(UTC).isoformat(timespec="microseconds")
        self._preparations: list[ContextPreparation] = []
        self._requests = RequestWriter(db, self.replay_id)
        with db.atomic():
            db.execute("DELETE FROM replays WHERE id = ?", [self.replay_id])
            db["replays"].insert(self._row())

    def _row(self) -> dict[str, object]:
        bundle = EvidenceBundle(preparations=tuple(self._preparations), summariser=self._summariser)
        return _info_row(bundle, self.replay_id, self._session_id, self._name, self._created)

    def save(self, preparation: ContextPreparation, request: PreparedRequest | None) -> str | None:
        """Write one step; returns the evidence reference of its final request (its content hash,
        the key it is read back by; None without a request), also written as the stored
        preparation's ``final_request_ref``."""
        ref = request.ref if request is not None else None
        preparation = preparation.model_copy(update={"final_request_ref": ref})
        with self.db.atomic():
            self.db["preparations"].insert(_step_row(self.replay_id, preparation))
            self.db["stages"].insert_all(_stage_rows(self.replay_id, (preparation,)))
            self.db["decisions"].insert_all(_decision_rows(self.replay_id, (preparation,)))
            if request is not None and ref:
                self._requests.add(ref, request)
                self._requests.flush()
        self._preparations.append(preparation)
        return ref

    def finish(self) -> ReplayInfo:
        """Write the replay's counts (steps, phases, compactions, final tokens)."""
        row = self._row()
        with self.db.atomic():
            self.db["replays"].update(self.replay_id, {k: v for k, v in row.items() if k != "id"})
        return ReplayInfo(**row)
