"""The cost of a saved replay, read from the store: :func:`workbench.pricing.stored_replay_cost`
over the replay's step rows with their whole-request figures (:mod:`workbench.services.truth`),
and its plain-language lines, cached until the replay is saved again (the Usage page)."""

from __future__ import annotations

from pathlib import Path

from iris.session import Session
from iris.tokens import TokenEstimator

from ..pricing import ReplayCost, cost_lines
from ..pricing import stored_replay_cost as _priced
from ..pricing.subagents import with_subagents
from ..storage.store import Store
from ..storage.stored import StoredReplay
from .truth import truth_steps

__all__ = ["saved_cost", "saved_cost_lines", "session_subagents", "stored_replay_cost"]


def stored_replay_cost(session: Session, stored: StoredReplay, *,
                       estimator: TokenEstimator | None = None) -> ReplayCost:
    """The cost of a saved replay (``services.replay.open_saved``) of ``session``."""
    return _priced(session, stored, truth_steps(stored), estimator=estimator)


def saved_cost_lines(store: Store, session_id: str, replay_id: str) -> list[str]:
    """:func:`workbench.pricing.cost_lines` of a saved replay, cached until it is saved again."""
    return list(store.replays.cached(replay_id, "cost lines",
                                     lambda: _saved_lines(store, session_id, replay_id)))


def saved_cost(store: Store, session_id: str, replay_id: str) -> ReplayCost:
    """The cost record the Usage page states for a saved replay: the one ``workbench replay
    --summary-json`` writes for it (its sub-agents billed beside it)."""
    cost = stored_replay_cost(store.session(session_id), store.replays.open(replay_id))
    return with_subagents(cost, session_subagents(store, session_id))


def _saved_lines(store: Store, session_id: str, replay_id: str) -> tuple[str, ...]:
    try:
        cost = saved_cost(store, session_id, replay_id)
    except Exception as exc:  # noqa: BLE001 -- a price that cannot be computed is a note, not a crash
        return (f"Cost: could not be computed ({exc}).",)
    return tuple(cost_lines(cost))


def session_subagents(store: Store, session_id: str) -> tuple[Session, ...]:
    """The sub-agents of a stored session, billed beside it: its stored children (sub-agent
    files imported with it; not the agent's recorded compaction requests), else those of the
    Claude Code transcript it was imported from, while that file is there (its
    ``subagents/`` folder or its ``agent_progress`` lines)."""
    from ..importers.claude_agents import is_compaction_request
    from ..importers.claude_progress import subagent_sessions

    children = [c for c in store.children(session_id)
                if not is_compaction_request(store.header(c.id).agent_id)]
    if children:
        return tuple(store.session(c.id) for c in children)
    row = store.row_of(session_id)
    source = Path(row.source_path) if row.source_path else None
    if row.format != "claude_code" or row.parent_id is not None \
            or source is None or not source.is_file():
        return ()
    return subagent_sessions(source)
