"""The cost of a saved replay, read from the store: :func:`workbench.pricing.stored_replay_cost`
over the replay's step rows with their whole-request figures (:mod:`workbench.services.truth`),
and its plain-language lines, cached until the replay is saved again (the Usage page)."""

from __future__ import annotations

from iris.session import Session
from iris.tokens import TokenEstimator

from ..pricing import ReplayCost, cost_lines
from ..pricing import stored_replay_cost as _priced
from ..storage.store import Store
from ..storage.stored import StoredReplay
from .truth import truth_steps

__all__ = ["saved_cost_lines", "stored_replay_cost"]


def stored_replay_cost(session: Session, stored: StoredReplay, *,
                       estimator: TokenEstimator | None = None) -> ReplayCost:
    """The cost of a saved replay (``services.replay.open_saved``) of ``session``."""
    return _priced(session, stored, truth_steps(stored), estimator=estimator)


def saved_cost_lines(store: Store, session_id: str, replay_id: str) -> list[str]:
    """:func:`workbench.pricing.cost_lines` of a saved replay, cached until it is saved again."""
    return list(store.replays.cached(replay_id, "cost lines",
                                     lambda: _saved_lines(store, session_id, replay_id)))


def _saved_lines(store: Store, session_id: str, replay_id: str) -> tuple[str, ...]:
    try:
        cost = stored_replay_cost(store.session(session_id), store.replays.open(replay_id))
    except Exception as exc:  # noqa: BLE001 -- a price that cannot be computed is a note, not a crash
        return (f"Cost: could not be computed ({exc}).",)
    return tuple(cost_lines(cost))
