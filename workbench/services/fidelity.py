"""What each compaction of a saved replay lost (R-FID-2): the agent's recorded compactions and
the replay's own, scored against the stored session (docs/fidelity.md)."""

from __future__ import annotations

from ..fidelity import ReplayLosses, replay_losses
from ..storage.store import Store
from ..storage.stored import StoredReplay

__all__ = ["saved_losses"]


def saved_losses(store: Store, session_id: str, replay: StoredReplay | None = None) -> ReplayLosses:
    """The loss records of ``session_id``'s recorded compactions and of ``replay``'s own."""
    return replay_losses(store.session(session_id), replay)
