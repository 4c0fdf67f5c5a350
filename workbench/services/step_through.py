"""What the Step-through page reads from the store (R-UI-2): one step of a saved replay with its
preparation, its final request and the session's recorded messages, and the replay's step
timeline, drawn once per saved replay and kept in the store's cache."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from iris.frozen import FrozenModel
from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.session import Message
from pydantic import ConfigDict

from ..records import RecordedMark, recorded_marks
from ..storage.store import Store
from ..storage.stored import StoredReplay
from .replay import open_saved, session_messages
from .truth import TruthStep, recorded_compactions, truth_steps

__all__ = ["OpenedStep", "open_step", "over_steps", "step_timeline"]

T = TypeVar("T")


class OpenedStep(FrozenModel):
    """One step of a saved replay as the Step-through page shows it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # frozen, extra="forbid" from FrozenModel

    replay: StoredReplay
    prep: ContextPreparation
    request: PreparedRequest | None
    """The final request as it would be sent (None: the step did not become ready)."""
    originals: tuple[Message, ...]
    """The session's recorded messages (what a changed request message was before)."""


def open_step(store: Store, session_id: str, replay_id: str, step: int) -> OpenedStep:
    """Step ``step`` of the saved replay ``replay_id`` of ``session_id`` (``StorageError`` for a
    step the replay does not have)."""
    replay = open_saved(store, replay_id)
    prep = replay.preparation(step)
    request = replay.request(prep.final_request_ref) if prep.final_request_ref else None
    return OpenedStep(replay=replay, prep=prep, request=request,
                      originals=session_messages(store, session_id))


def step_timeline(store: Store, session_id: str, replay: StoredReplay,
                  draw: Callable[[tuple[TruthStep, ...], tuple[RecordedMark, ...]], T]) -> T:
    """``draw(steps, marks)`` of the replay's steps (with their whole-request figures) and the
    agent's recorded compactions placed on them, made once per saved replay and kept in the
    store's cache until the replay is saved again: a 2,000-step timeline is the same at every
    step, so moving one step does not draw it again."""
    def make() -> T:
        steps = truth_steps(replay)
        return draw(steps, recorded_marks(recorded_compactions(store, session_id, replay), steps))
    return store.replays.cached(replay.id, "step timeline", make)


def over_steps(store: Store, session_id: str, replay: StoredReplay, name: str,
               make: Callable[[Iterator[tuple[ContextPreparation, PreparedRequest | None]],
                               tuple[Message, ...]], T]) -> T:
    """``make(steps, messages)`` over every step of the saved replay (each preparation with its
    final request, read as ``make`` iterates) and the session's messages, kept in the store's cache
    under ``name`` until the replay is saved again (e.g. the context breakdown of every step)."""
    def steps() -> Iterator[tuple[ContextPreparation, PreparedRequest | None]]:
        for k in range(len(replay)):
            prep = replay.preparation(k)
            yield prep, replay.request(prep.final_request_ref) if prep.final_request_ref else None
    return store.replays.cached(replay.id, name,
                                lambda: make(steps(), session_messages(store, session_id)))
