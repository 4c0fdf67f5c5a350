"""A replay saved in the store, as a :class:`~workbench.notebook.NotebookReplay` (R-TRUTH-2).

The records are read back, not computed again: every step's preparation, the applied compactions
with the checkpoint each wrote, the agent's recorded compactions as the replay placed them, the
calibration and the summary usage, and each final request when a view asks for it. So the
notebook and the report of a saved replay state that replay's figures, whatever summariser made
it (a recorded or remote summary cannot be produced again offline).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iris.config import parse_config
from iris.errors import StorageError
from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.replay import AppliedCompaction, Replay

from ..storage.store import Store, open_store
from ..storage.stored import StoredReplay

__all__ = ["saved_notebook_replay", "saved_replay"]


def _checkpoints(saved: StoredReplay, preparations: dict[int, ContextPreparation]
                 ) -> tuple[AppliedCompaction, ...]:
    texts = {a.n: a.checkpoint_text for a in saved.archives()}
    return tuple(AppliedCompaction(
        step_index=c.step_index, preparation_id=preparations[c.step_index].preparation_id,
        cut_index=c.cut_index if c.cut_index is not None else 0,
        first_kept_message=c.first_kept_message, archived_messages=c.archived_messages,
        archive_name=c.archive, checkpoint_text=texts.get(c.n, ""), summary_usage=c.summary_usage)
        for c in saved.checkpoints if c.step_index in preparations)


def saved_notebook_replay(store: Store, replay_id: str) -> Any:
    """The saved replay ``replay_id`` of ``store`` as a NotebookReplay labelled with its name
    (``StorageError`` for a replay the store does not have). Its final requests are read from
    the store when a view asks for one."""
    from . import NotebookReplay

    saved = store.replays.open(replay_id)
    info, facts = saved.info, saved.info.facts
    config = parse_config(saved.configuration_yaml() or "{}", source=f"replay {info.name!r}")
    session = store.session(info.session_id)
    preparations = tuple(saved.preparation(s.step_index) for s in saved.steps)
    by_step = {p.step_index: p for p in preparations}
    if facts.thresholds is None:
        raise StorageError(f"replay {info.name!r} ({replay_id}) was saved before its budget and "
                           "lines were stored: replay the session again to report it")
    result = Replay(
        session_id=preparations[0].session_id if preparations else info.session_id,
        configuration_snapshot_id=info.configuration_snapshot_id, thresholds=facts.thresholds,
        preparations=preparations, requests={},
        archives={a.path: a.text for a in saved.archives()},
        checkpoints=_checkpoints(saved, by_step), run_usage=facts.run_usage,
        cancelled=facts.cancelled, observation_failures=facts.observation_failures,
        baseline=facts.baseline, recorded_compactions=facts.recorded_compactions,
        calibration=facts.calibration)

    def request_of(preparation: ContextPreparation) -> PreparedRequest | None:
        ref = preparation.final_request_ref
        return saved.request(ref) if ref else None

    def cost_of() -> Any:
        from ..services.costs import saved_cost

        return saved_cost(store, info.session_id, info.id)

    return NotebookReplay(session, config, result, label=info.name, summariser=info.summariser,
                          request_of=request_of, saved_id=info.id,
                          template_snapshot_id=info.template_snapshot_id, cost_of=cost_of)


def saved_replay(replay_id: str, *, store_path: str | Path | None = None) -> Any:
    """The replay saved under ``replay_id`` (see ``workbench replays``) in the store at
    ``store_path`` (default: the workbench's own), read back as it was saved; the store stays
    open while the replay reads requests from it."""
    return saved_notebook_replay(open_store(store_path), replay_id)
