"""Old import path of the replay records and repository (:mod:`workbench.storage`); the free
functions over a raw database are kept for callers not yet on ``store.replays``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .records import ArchiveRecord, EvidenceBundle, ReplayFacts, ReplayInfo, StepRow
from .storage.replays import ReplayRepository, StoreSink, replay_id_for
from .storage.stored import StoredReplay

__all__ = ["ArchiveRecord", "EvidenceBundle", "ReplayFacts", "ReplayInfo", "StepRow",
           "StoreSink", "StoredReplay", "decisions_of_kind", "delete_replay", "find_replay",
           "list_replays", "load_preparation_by_id", "open_replay", "replay_id_for",
           "save_replay"]


def save_replay(db: Any, bundle: EvidenceBundle, *, session_id: str, name: str) -> ReplayInfo:
    return ReplayRepository(db).save(bundle, session_id=session_id, name=name)


def delete_replay(db: Any, replay_id: str) -> bool:
    return ReplayRepository(db).delete(replay_id)


def list_replays(db: Any, session_id: str | None = None) -> tuple[ReplayInfo, ...]:
    return ReplayRepository(db).list(session_id)


def find_replay(db: Any, session_id: str, name: str) -> ReplayInfo | None:
    return ReplayRepository(db).find(session_id, name)


def open_replay(db: Any, replay_id: str) -> StoredReplay:
    return StoredReplay(db, replay_id)


def load_preparation_by_id(db: Any, preparation_id: str) -> Any:
    return ReplayRepository(db).preparation_by_id(preparation_id)


def decisions_of_kind(db: Any, replay_id: str, kinds: Sequence[str]) -> Any:
    return ReplayRepository(db).decisions_of_kind(replay_id, kinds)
