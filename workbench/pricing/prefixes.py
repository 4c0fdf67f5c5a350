"""How each replayed request starts compared with the previous request of its model (the
:class:`~workbench.pricing.cache.Prefix` the prompt-cache model prices), for a live replay (its
kept request bodies, or a :class:`~workbench.pricing.cache.PrefixSink` during a replay that keeps
none) and for a saved one (its stored request skeletons: equal part ids are equal messages).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iris.session import Session
from iris.tokens import TokenEstimator, default_estimator

from .billing import response_model
from .cache import Prefix, PrefixSink, prefix_of

__all__ = ["live_prefixes", "prefix_sink", "step_models", "stored_prefixes"]


def step_models(session: Session) -> list[str | None]:
    """The model that answered each step (request batch) of ``session``: the response's own,
    else the one before it, else the session's."""
    out: list[str | None] = []
    model = session.header.model
    for batch in session.index.batches:
        at = batch.assistant_message
        if 0 <= at < len(session.messages):
            model = response_model(session.messages[at], model)
        out.append(model)
    return out


def prefix_sink(session: Session, estimator: TokenEstimator | None = None) -> PrefixSink:
    """A sink to pass to ``iris.replay.replay`` (``ReplayObservers(sink=…)``) when the replay
    keeps no request bodies; hand its ``prefixes`` to :func:`workbench.pricing.replay_cost`."""
    models = step_models(session)
    return PrefixSink(estimator or default_estimator(),
                      lambda k: models[k] if 0 <= k < len(models) else session.header.model)


def live_prefixes(session: Session, replay: Any, estimator: TokenEstimator) -> dict[int, Prefix]:
    """Each ready step's :class:`Prefix` from the request bodies an ``iris.replay.Replay`` kept."""
    sink = prefix_sink(session, estimator)
    for p in replay.preparations:
        request = replay.request(p)
        if request is not None:
            sink.save(p, request)
    return sink.prefixes


def stored_prefixes(session: Session, stored: Any, steps: Sequence[Any],
                     estimator: TokenEstimator) -> dict[int, Prefix]:
    """Each ready step's :class:`Prefix` from the stored request skeletons, against the previous
    request of the same model: equal part ids are equal messages, and only the parts after an
    early divergence are read and counted."""
    parts = stored.request_parts()
    models = step_models(session)
    counts: dict[int, int] = {}

    def local(ids: Sequence[int]) -> int:
        missing = [i for i in dict.fromkeys(ids) if i not in counts]
        if missing:
            for i, message in stored.part_messages(missing).items():
                counts[i] = estimator.message_tokens(message)
        return sum(counts.get(i, 0) for i in ids)

    out: dict[int, Prefix] = {}
    previous: dict[str | None, tuple[Sequence[int], Any]] = {}
    for s in steps:
        shape = parts.get(s.final_request_ref) if s.phase == "ready" else None
        if shape is None:
            continue
        at: int = s.step_index
        model = models[at] if at < len(models) else session.header.model
        ids, ratio = shape[0], s.calibration_ratio or 1.0
        out[s.step_index] = prefix_of(previous.get(model), shape,
                                      lambda start, ids=ids, r=ratio: round(r * local(ids[start:])))
        previous[model] = shape
    return out
