"""What the truth views read from the store: per-step whole-request figures and the agent's
recorded compactions, without parsing every preparation.

A stored replay keeps each step's scalar columns (``StepRow``) and its whole-request figures
(trigger value and basis, unrecorded overhead, calibration, the as-recorded estimate) as columns
next to the compressed record, read in one query per replay (``StoredReplay.step_figures``), so a
2,000-step replay's charts open no record. Replays saved before these fields existed read as
``None`` (the views then fall back to the raw local estimate).
"""

from __future__ import annotations

import weakref
from typing import Any

from iris.frozen import FrozenModel
from iris.preparation.records import CompactionApplied
from iris.session import index_session
from pydantic import ConfigDict

from ..analysis.figures import CompactionFigures, compaction_figures
from ..records import RecordedMark, StepRow, recorded_marks
from ..storage.store import Store
from ..storage.stored import StoredReplay
from .replay import open_saved, session_messages

__all__ = ["TRUTH_FIELDS", "ReplayTruth", "TruthStep", "answer_runs", "recorded_compactions",
           "replay_compactions", "replay_truth", "session_marks", "truth_steps"]

TRUTH_FIELDS: tuple[str, ...] = (
    "trigger_tokens", "trigger_basis", "unrecorded_overhead_tokens", "overhead_measured_at",
    "calibration_ratio", "whole_request_tokens", "recorded_request_tokens",
    "recorded_request_whole")


class TruthStep(StepRow):
    """One step's scalar columns plus its whole-request figures."""

    trigger_tokens: int | None = None
    trigger_basis: str | None = None
    unrecorded_overhead_tokens: int | None = None
    overhead_measured_at: int | None = None
    calibration_ratio: float | None = None
    whole_request_tokens: int | None = None
    recorded_request_tokens: int | None = None
    recorded_request_whole: int | None = None


_TRUTH_STEPS: weakref.WeakKeyDictionary[StoredReplay, tuple[TruthStep, ...]] = weakref.WeakKeyDictionary()
"""The truth rows of each reopened replay, kept as long as the replay object lives."""


def truth_steps(replay: StoredReplay) -> tuple[TruthStep, ...]:
    """Every step of a stored replay with its whole-request figures, in step order (read once
    per reopened replay)."""
    cached = _TRUTH_STEPS.get(replay)
    if cached is not None:
        return cached
    extra = replay.step_figures(TRUTH_FIELDS)
    steps = tuple(TruthStep.model_validate({**s.model_dump(), **{f: extra.get(s.step_index, {}).get(f)
                                                                 for f in TRUTH_FIELDS}})
                  for s in replay.steps)
    _TRUTH_STEPS[replay] = steps
    return steps


def replay_compactions(replay: StoredReplay,
                       steps: tuple[TruthStep, ...] | None = None) -> list[CompactionFigures]:
    """The replay's own compactions on the one basis of :mod:`workbench.analysis.figures` (this request
    as sent before and after, the trigger value and basis, the untrimmed durable history as a
    detail): the saved figures; for replays saved before the detail existed, from the commit
    decisions and the step rows."""
    facts = replay.facts.compactions
    if all(c.history_tokens_before is not None for c in facts):
        return [c.figures for c in facts]
    by_step = {s.step_index: s for s in (steps or truth_steps(replay))}
    commits = {step: d for step, _, d in replay.decisions_of_kind("compaction-applied")
               if isinstance(d, CompactionApplied)}
    return [compaction_figures(by_step[c.step_index], commits.get(c.step_index))
            for c in facts if c.step_index in by_step]


class _ResponseStep:
    """A recorded response as a step (index, message index, provider usage) for placing marks."""

    def __init__(self, index: int, message: int, usage: Any) -> None:
        self.step_index, self.response_message_index = index, message
        self.provider_prompt_tokens = usage.prompt_tokens if usage is not None else None
        self.provider_usage_kind = "trusted" if usage is not None else "missing"


def session_marks(store: Store, session_id: str) -> tuple[RecordedMark, ...]:
    """The agent's recorded compactions placed on the session's own responses: for charts of
    replays computed in memory (Compare, re-runs) that carry no step records of their own."""
    messages = session_messages(store, session_id)
    steps = [_ResponseStep(b.index, b.assistant_message, messages[b.assistant_message].usage)
             for b in index_session(messages).batches]
    return recorded_marks(recorded_compactions(store, session_id), steps)


def answer_runs(replay: StoredReplay) -> list[dict[str, Any]]:
    """One run for :func:`workbench.views.recorded.compaction_answer`: this replay's label,
    its compactions and its budget with the budget's source."""
    t = replay.thresholds
    return [{"label": replay.info.name,
             "compactions": [c.model_dump() for c in replay_compactions(replay)],
             "input_budget": t.input_budget if t else None,
             "budget_source": t.budget_source if t else None,
             "budget_detail": t.budget_detail if t else ""}]


def recorded_compactions(store: Store, session_id: str,
                         replay: StoredReplay | None = None) -> tuple[Any, ...]:
    """The agent's recorded compactions: placed on steps when the replay saved them
    (``recorded_compactions`` in its facts), else as the session stored them (``at_message``)."""
    if replay is not None and replay.facts.recorded_compactions:
        return replay.facts.recorded_compactions
    return store.recorded_compactions(session_id)


class ReplayTruth(FrozenModel):
    """A saved replay with its truth rows, the agent's recorded compactions placed on them and
    the replay's run for the real-vs-replay compaction answer (the Usage and Compaction pages)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)  # frozen, extra="forbid" from FrozenModel

    replay: StoredReplay
    steps: tuple[TruthStep, ...]
    marks: tuple[RecordedMark, ...]
    runs: tuple[dict[str, Any], ...]
    """One run for :func:`workbench.views.recorded.compaction_answer` (:func:`answer_runs`)."""


def replay_truth(store: Store, session_id: str, replay_id: str) -> ReplayTruth:
    """The saved replay ``replay_id`` of ``session_id`` with its truth rows, recorded marks and
    answer run (``StorageError`` for a replay the store does not have)."""
    replay = open_saved(store, replay_id)
    steps = truth_steps(replay)
    marks = recorded_marks(recorded_compactions(store, session_id, replay), steps)
    return ReplayTruth(replay=replay, steps=steps, marks=marks, runs=tuple(answer_runs(replay)))
