"""Old import path of the replay records and of :class:`StoredReplay`; new code imports
:mod:`workbench.records` and reaches saved replays through ``store.replays``."""

from __future__ import annotations

from .records import ArchiveRecord, EvidenceBundle, ReplayFacts, ReplayInfo, StepRow
from .storage.replays import replay_id_for
from .storage.stored import StoredReplay

__all__ = ["ArchiveRecord", "EvidenceBundle", "ReplayFacts", "ReplayInfo", "StepRow",
           "StoredReplay", "replay_id_for"]
