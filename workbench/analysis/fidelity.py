"""What each compaction of a replay lost, for every surface that shows it (R-FID-1, R-FID-2).

The engine's :mod:`iris.fidelity` computes one loss record from a session, the span a compaction
replaced and its checkpoint. This module gathers those records for a replay, whether computed in
memory (``iris.replay.Replay``) or reopened from the store (a reader with ``archives()``): the
agent's recorded compactions and the replay's own. It also gives the JSON object
``--summary-json`` writes and the rows of the notebook's and the batch's ``fidelity`` table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from iris.fidelity import (
    FactFate,
    LossRecord,
    applied_loss_record,
    recorded_loss_records,
)
from iris.frozen import FrozenModel
from iris.replay import Replay
from iris.session import Session

from ..records import ArchiveRecord, CompactionFacts

__all__ = ["ReplayLosses", "fidelity_rows", "lost_rows", "recall_means", "replay_losses"]


class _StoredLike(Protocol):
    @property
    def checkpoints(self) -> Sequence[CompactionFacts]: ...

    def archives(self) -> tuple[ArchiveRecord, ...]: ...


class ReplayLosses(FrozenModel):
    """The loss records of one replay: the agent's recorded compactions and the replay's own."""

    recorded: tuple[LossRecord, ...] = ()
    replay: tuple[LossRecord, ...] = ()

    @property
    def all(self) -> tuple[LossRecord, ...]:
        return (*self.recorded, *self.replay)

    def at_step(self, step: int) -> tuple[LossRecord, ...]:
        """The records of the compactions whose first compacted step is ``step``."""
        return tuple(r for r in self.all if r.step == step)


def _own(session: Session, replay: Replay | _StoredLike) -> tuple[LossRecord, ...]:
    if isinstance(replay, Replay):
        return tuple(applied_loss_record(session, n=n, step=c.step_index,
                                         archived=c.archived_messages,
                                         first_kept=c.first_kept_message,
                                         checkpoint=c.checkpoint_text)
                     for n, c in enumerate(replay.checkpoints, start=1))
    texts: Mapping[int, str] = {a.n: a.checkpoint_text for a in replay.archives()}
    return tuple(applied_loss_record(session, n=c.n, step=c.step_index,
                                     archived=c.archived_messages,
                                     first_kept=c.first_kept_message,
                                     checkpoint=texts.get(c.n, ""))
                 for c in replay.checkpoints)


def replay_losses(session: Session, replay: Replay | _StoredLike | None = None) -> ReplayLosses:
    """The loss records of ``session``'s recorded compactions and of ``replay``'s own (none
    when ``replay`` is None)."""
    recorded = recorded_loss_records(session)
    return ReplayLosses(recorded=recorded, replay=_own(session, replay) if replay is not None else ())


def fidelity_rows(losses: ReplayLosses, **extra: Any) -> list[dict[str, Any]]:
    """One row per compaction and fact kind (plus an ``all`` row per compaction): the
    ``fidelity`` table of the notebook and the batch output; ``extra`` columns lead each row."""
    rows: list[dict[str, Any]] = []
    for record in losses.all:
        base = {**extra, "source": record.source, "n": record.n, "step": record.step}
        lost = record.lost()
        for kind, counts in record.kinds().items():
            rows.append({**base, "kind": kind, **counts.model_dump(),
                         "recall_needed_later": _ratio(counts.needed_later_kept,
                                                       counts.needed_later),
                         **_recovery([f for f in lost if f.fact.kind == kind])})
        rows.append({**base, "kind": "all", "facts": len(record.fates),
                     "kept": sum(f.kept for f in record.fates),
                     "needed_later": record.needed_later,
                     "needed_later_kept": record.needed_later_kept,
                     "recall_needed_later": record.recall_needed_later,
                     "never_recovered": record.never_recovered,
                     "recovery_tokens": record.recovery_tokens})
    return rows


def _recovery(lost: Sequence[FactFate]) -> dict[str, int]:
    """``never_recovered`` and ``recovery_tokens`` of some lost facts (each returning text once)."""
    texts = {(f.recovery.message, f.recovery.how): f.recovery.tokens
             for f in lost if f.recovery is not None}
    return {"never_recovered": sum(f.recovery is None for f in lost),
            "recovery_tokens": sum(texts.values())}


def lost_rows(record: LossRecord) -> list[dict[str, Any]]:
    """The needed-later-but-lost facts of ``record``, the never-recovered ones first: kind, fact,
    where it was stated, the step that needed it, and when (``recovered_at_step``, None for
    never), how (``recovered_by``) and at what cost (``recovery_tokens``) the session got it back
    (docs/fidelity.md)."""
    return [{"kind": f.fact.kind, "fact": f.fact.text, "stated_at_message": f.fact.message,
             "needed_at_step": f.needed_step, "needed_at_message": f.needed_message,
             "recovered_at_step": f.recovered_at_step,
             "recovered_by": f.recovery.how if f.recovery is not None else None,
             "recovery_tokens": f.recovery.tokens if f.recovery is not None else None}
            for f in record.lost(never_recovered_first=True)]


def _ratio(kept: int, needed: int) -> float | None:
    return kept / needed if needed else None


def recall_means(frame: Any) -> list[dict[str, Any]]:
    """Per configuration and source (``replay``, ``recorded``) of a ``fidelity`` table (a
    DataFrame of the batch output or of :func:`fidelity_rows`): compactions, the mean of their
    ``recall_needed_later`` (compactions that needed nothing later left out) and the recall of
    needed-later paths and commands over all of them."""
    out: list[dict[str, Any]] = []
    if frame is None or len(frame) == 0:
        return out
    for (configuration, source), group in frame.groupby(["configuration", "source"], sort=True):
        whole = group[group["kind"] == "all"]
        pc = group[group["kind"].isin(["paths", "commands"])]
        needed = int(pc["needed_later"].sum())
        recalls = whole["recall_needed_later"].dropna()
        out.append({"configuration": configuration, "source": source,
                    "compactions": len(whole),
                    "mean_recall_needed_later": float(recalls.mean()) if len(recalls) else None,
                    "recall_paths_commands": (int(pc["needed_later_kept"].sum()) / needed
                                              if needed else None)})
    return out
