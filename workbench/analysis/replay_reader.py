"""One way to read a replay, wherever it lives: :class:`ReplayReader`.

A replay computed in memory (``iris.replay.Replay``, through :func:`as_reader`) and one reopened
from the store (:class:`workbench.storage.stored.StoredReplay`) both answer it, so a view takes a
reader and never asks which kind it got. The replay-wide figures come as the store's typed
:class:`~workbench.storage.records.ReplayFacts` in both cases (:func:`replay_facts` builds them
from an in-memory replay, and is what a saved replay keeps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from iris.compaction.thresholds import Thresholds
from iris.preparation.records import (
    ContextPreparation,
    Decision,
    PreparedRequest,
)
from iris.replay import Replay
from iris.tokens import default_estimator

from ..records import CompactionFacts, ReplayFacts
from . import figures

__all__ = ["MemoryReplay", "ReplayReader", "applied_compactions", "as_reader", "replay_facts"]


@runtime_checkable
class ReplayReader(Protocol):
    """What a view may read of a replay."""

    @property
    def steps(self) -> Sequence[Any]:
        """Every step's scalar figures (``step_index``, ``phase``, ``final_input_tokens``,
        ``compaction_applied``, ``input_budget``, ``pressure_line``…), in step order."""
        ...

    def preparation(self, step_index: int) -> ContextPreparation:
        """The full record of one step."""
        ...

    def request(self, ref: str) -> PreparedRequest | None:
        """A final request by its evidence reference (None when not kept)."""
        ...

    @property
    def checkpoints(self) -> Sequence[CompactionFacts]:
        """The compactions the replay applied, in order."""
        ...

    @property
    def thresholds(self) -> Thresholds | None:
        """The budget and lines the replay ran with (None for replays saved without them)."""
        ...

    @property
    def facts(self) -> ReplayFacts:
        """Every replay-wide figure (run usage, calibration, recorded compactions…)."""
        ...

    def step_figures(self, fields: Sequence[str]) -> Mapping[int, Mapping[str, Any]]:
        """Top-level record fields of every step, by step index."""
        ...

    def stage_savings(self, names: Sequence[str]) -> Mapping[int, Mapping[str, int]]:
        """Tokens each named stage removed, by step index then stage name."""
        ...

    def decisions_of_kind(self, *kinds: str, before_step: int | None = None,
                          message_indexes: Sequence[int] | None = None
                          ) -> tuple[tuple[int, str, Decision], ...]:
        """``(step, stage, decision)`` of the given kinds in step order (before ``before_step``
        and about ``message_indexes`` when given)."""
        ...


def applied_compactions(replay: Replay) -> list[figures.CompactionFigures]:
    """The replay's own compactions on the one basis of :mod:`workbench.analysis.figures`: step, this
    request as sent before and after the commit, the value and basis the trigger compared, and
    the untrimmed durable history as a detail."""
    return figures.applied_compactions(replay.preparations)


def replay_facts(replay: Replay, *, warnings: Sequence[str] = ()) -> ReplayFacts:
    """The replay-wide figures of an in-memory replay, as the store keeps them."""
    by_step = {c.step: c.fields() for c in applied_compactions(replay)}
    counter = default_estimator()
    compactions = tuple(
        CompactionFacts(n=n, step_index=c.step_index, cut_index=c.cut_index,
                        first_kept_message=c.first_kept_message,
                        archived_messages=c.archived_messages, archive=c.archive_name,
                        summary_usage=c.summary_usage,
                        summary_request_tokens=counter.count(c.summary_request_text),
                        **by_step.get(c.step_index, {}))
        for n, c in enumerate(replay.checkpoints, start=1))
    return ReplayFacts(run_usage=replay.run_usage, thresholds=replay.thresholds,
                       compactions=compactions, warnings=tuple(warnings),
                       cancelled=replay.cancelled, observation_failures=replay.observation_failures,
                       baseline=replay.baseline, calibration=replay.calibration,
                       recorded_compactions=replay.recorded_compactions)


class MemoryReplay:
    """An in-memory ``iris.replay.Replay`` as a :class:`ReplayReader`."""

    def __init__(self, replay: Replay, *, warnings: Sequence[str] = ()) -> None:
        self.replay = replay
        self.facts = replay_facts(replay, warnings=warnings)
        self._by_step = {p.step_index: p for p in replay.preparations}
        self._by_ref = {p.final_request_ref or r.ref: r for p in replay.preparations
                        if (r := replay.request(p)) is not None}

    @property
    def steps(self) -> tuple[ContextPreparation, ...]:
        return self.replay.preparations

    def preparation(self, step_index: int) -> ContextPreparation:
        return self._by_step[step_index]

    def request(self, ref: str) -> PreparedRequest | None:
        return self._by_ref.get(ref)

    @property
    def checkpoints(self) -> tuple[CompactionFacts, ...]:
        return self.facts.compactions

    @property
    def thresholds(self) -> Thresholds:
        return self.replay.thresholds

    def step_figures(self, fields: Sequence[str]) -> dict[int, dict[str, Any]]:
        return {p.step_index: {f: getattr(p, f, None) for f in fields}
                for p in self.replay.preparations}

    def stage_savings(self, names: Sequence[str]) -> dict[int, dict[str, int]]:
        wanted = set(names)
        return {p.step_index: {s.name: max(s.before_input_tokens - s.after_input_tokens, 0)
                               for s in p.stages if s.name in wanted}
                for p in self.replay.preparations}

    def decisions_of_kind(self, *kinds: str, before_step: int | None = None,
                          message_indexes: Sequence[int] | None = None
                          ) -> tuple[tuple[int, str, Decision], ...]:
        indexes = None if message_indexes is None else set(message_indexes)
        return tuple((p.step_index, s.name, d) for p in self.replay.preparations
                     if before_step is None or p.step_index < before_step
                     for s in sorted(p.stages, key=lambda s: s.name) for d in s.decisions
                     if d.kind in kinds and (indexes is None or d.message_index in indexes))


def as_reader(replay: Replay | ReplayReader) -> ReplayReader:
    """A reader of ``replay``: an in-memory replay is wrapped, a reader is returned as it is."""
    return MemoryReplay(replay) if isinstance(replay, Replay) else replay
