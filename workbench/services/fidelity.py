"""What each compaction of a saved replay lost (R-FID-2): the agent's recorded compactions and
the replay's own, scored against the stored session (docs/fidelity.md)."""

from __future__ import annotations

from iris.fidelity import LossRecord

from ..analysis.fidelity import ReplayLosses, replay_losses
from ..storage.store import Store
from ..storage.stored import StoredReplay
from .truth import recorded_compactions

__all__ = ["saved_losses", "step_losses"]


def saved_losses(store: Store, session_id: str, replay: StoredReplay | None = None) -> ReplayLosses:
    """The loss records of ``session_id``'s recorded compactions and of ``replay``'s own, made
    once per saved replay (kept in the store's cache until the replay is saved again)."""
    if replay is None:
        return store.cached(session_id, "fidelity", lambda: replay_losses(store.session(session_id)))
    return store.replays.cached(replay.id, "fidelity",
                                lambda: replay_losses(store.session(session_id), replay))


def step_losses(store: Store, session_id: str, replay: StoredReplay, step: int
                ) -> tuple[LossRecord, ...]:
    """The loss records of the compactions whose first compacted step is ``step`` (the replay's
    own applied there, the agent's recorded one sent from there); none for any other step, which
    costs no scoring."""
    steps = {c.step_index for c in replay.checkpoints}
    steps |= {m.step for m in recorded_compactions(store, session_id, replay)}
    if step not in steps:
        return ()
    return saved_losses(store, session_id, replay).at_step(step)
