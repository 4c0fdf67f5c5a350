"""What a saved replay is, as frozen models that the storage package writes and reads and the
views read: the bundle a replay is saved from, the row of the replay list, the scalar columns of
one step, and :class:`ReplayFacts`, the versioned replay-wide figures (thresholds, run usage,
compactions, the agent's recorded compactions, calibration, configuration warnings).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from iris.compaction.calibration import Calibration
from iris.compaction.thresholds import Thresholds
from iris.compaction.usage import RunUsage
from iris.frozen import FrozenModel
from iris.preparation.baseline import RecordedCompactionMark
from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.session import Usage
from pydantic import ConfigDict, ValidationError

_log = logging.getLogger(__name__)

__all__ = [
    "FACTS_VERSION",
    "ArchiveRecord",
    "CompactionFacts",
    "CompactionFigures",
    "EstimateStep",
    "EvidenceBundle",
    "MarkStep",
    "RecordedMark",
    "ReplayFacts",
    "ReplayInfo",
    "ReplayStep",
    "StepRow",
    "TriggerFigures",
    "recorded_marks",
]

#: Version of :class:`ReplayFacts` written by this code (rows without one are version 1).
FACTS_VERSION = 1


_Frozen = FrozenModel


class ArchiveRecord(_Frozen):
    """One applied compaction's lossless archive and the checkpoint that replaced it."""

    n: int
    """The N of ``history-N.md`` (1 for the first compaction of the replay)."""
    step_index: int | None = None
    """The step whose preparation applied it."""
    path: str
    text: str
    checkpoint_text: str = ""


class TriggerFigures(Protocol):
    """What :func:`workbench.analysis.figures.compaction_figures` reads of a step: a step's record
    (:class:`~iris.preparation.records.ContextPreparation`), a truth row or a compared run's
    step point. ``trigger_tokens``/``whole_request_tokens`` are None where the record did not
    keep them."""

    @property
    def step_index(self) -> int: ...
    @property
    def trigger_tokens(self) -> int | None: ...
    @property
    def trigger_basis(self) -> str | None: ...
    @property
    def whole_request_tokens(self) -> int | None: ...


class EstimateStep(Protocol):
    """What the estimate error reads of a step
    (:func:`workbench.analysis.figures.estimate_error`)."""

    @property
    def step_index(self) -> int: ...
    @property
    def overhead_measured_at(self) -> int | None: ...
    @property
    def provider_prompt_tokens(self) -> int | None: ...
    @property
    def provider_usage_kind(self) -> str: ...
    @property
    def recorded_request_whole(self) -> int | None: ...


class ReplayStep(TriggerFigures, EstimateStep, Protocol):
    """The scalar figures of one replayed step the estimate error, the costs and the usage views
    read: a step's record (:class:`~iris.preparation.records.ContextPreparation`, or what a
    streamed replay keeps of it) or a stored replay's truth row
    (:class:`workbench.services.truth.TruthStep`)."""

    @property
    def response_message_index(self) -> int: ...
    @property
    def phase(self) -> str: ...
    @property
    def final_input_tokens(self) -> int: ...
    @property
    def compaction_applied(self) -> bool: ...
    @property
    def calibration_ratio(self) -> float | None: ...
    @property
    def unrecorded_overhead_tokens(self) -> int | None: ...
    @property
    def recorded_request_tokens(self) -> int | None: ...


class CompactionFigures(_Frozen):
    """One applied compaction on the one basis: ``tokens_before``/``tokens_after`` (this request
    as sent, whole), the value and basis the trigger compared, and the labelled detail
    ``history_tokens_before``/``history_tokens_after`` (the untrimmed durable history the engine
    compacted), as :func:`workbench.analysis.figures.compaction_figures` computes them. The
    records that state these figures (``--summary-json``'s compactions, a stored replay's facts,
    a compared run's points) carry these fields under these names."""

    step: int
    tokens_before: int | None = None
    tokens_after: int | None = None
    trigger_value: int | None = None
    trigger_basis: str | None = None
    history_tokens_before: int | None = None
    history_tokens_after: int | None = None

    def fields(self) -> dict[str, Any]:
        """The figures without ``step``, for a record that names its step otherwise."""
        return self.model_dump(exclude={"step"})


class CompactionFacts(_Frozen):
    """One compaction the replay applied: where it cut, what it archived, the summary call's usage
    and the whole-request figures before and after the commit (``tokens_*``: this request as
    sent; ``history_*``: the untrimmed durable history, a detail; see :mod:`workbench.analysis.figures`).
    Replays saved before the detail existed kept the durable history under ``tokens_*``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    n: int
    step_index: int
    cut_index: int | None = None
    first_kept_message: int | None = None
    archived_messages: tuple[int, ...] = ()
    archive: str = ""
    summary_usage: Usage | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    trigger_value: int | None = None
    trigger_basis: str | None = None
    history_tokens_before: int | None = None
    history_tokens_after: int | None = None
    summary_request_tokens: int | None = None
    """Local count of the request the summariser was sent (what a summary without reported
    usage is priced from); None for replays saved before it was kept."""

    @property
    def step(self) -> int:
        return self.step_index

    @property
    def figures(self) -> CompactionFigures:
        """This compaction's :class:`CompactionFigures` as saved (replays saved before the
        durable-history detail existed kept the durable history under ``tokens_*``)."""
        return CompactionFigures(
            step=self.step_index, tokens_before=self.tokens_before, tokens_after=self.tokens_after,
            trigger_value=self.trigger_value, trigger_basis=self.trigger_basis,
            history_tokens_before=self.history_tokens_before,
            history_tokens_after=self.history_tokens_after)


class ReplayFacts(_Frozen):
    """The replay-wide figures a stored replay keeps next to its steps (the ``extras_json``
    column). Parts a store written by older code lacks read as their defaults."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    version: Literal[1] = FACTS_VERSION
    thresholds: Thresholds | None = None
    run_usage: RunUsage = RunUsage()
    compactions: tuple[CompactionFacts, ...] = ()
    recorded_compactions: tuple[RecordedCompactionMark, ...] = ()
    calibration: Calibration = Calibration()
    warnings: tuple[str, ...] = ()
    cancelled: bool = False
    observation_failures: tuple[str, ...] = ()
    baseline: Literal["engine", "recorded"] = "engine"

    @classmethod
    def from_json(cls, text: str) -> ReplayFacts:
        """Parse a stored row; a part that no longer validates (a field renamed since it was
        written) reads as its default instead of failing the whole replay, and says so: a
        logged warning and a line in :attr:`warnings` name each field read as its default."""
        try:
            return cls.model_validate_json(text)
        except ValidationError:
            data = json.loads(text) if text else {}
            kept: dict[str, Any] = {}
            reset: list[str] = []
            for name in cls.model_fields:
                if name in data:
                    try:
                        cls.model_validate({name: data[name]})
                    except ValidationError:
                        reset.append(name)
                        continue
                    kept[name] = data[name]
            notes = [f"stored replay facts: {name!r} no longer validates and reads as its default"
                     for name in reset]
            for note in notes:
                _log.warning(note)
            if notes:
                kept["warnings"] = (*kept.get("warnings", ()), *notes)
            return cls.model_validate(kept)


class EvidenceBundle(_Frozen):
    """Everything one replay produced, in the shape the store saves."""

    preparations: tuple[ContextPreparation, ...]
    requests: Mapping[str, PreparedRequest] = {}
    """Final requests by ``final_request_ref``."""
    archives: tuple[ArchiveRecord, ...] = ()
    configuration_snapshot_id: str = ""
    configuration_hash: str | None = None
    configuration_json: Mapping[str, Any] | None = None
    configuration_yaml: str = ""
    template_snapshot_id: str | None = None
    template_sources: Mapping[str, str] | None = None
    summariser: str = "extractive"
    facts: ReplayFacts = ReplayFacts()
    """Replay-wide figures (thresholds, run usage, compactions, calibration…)."""


class ReplayInfo(_Frozen):
    """One row of the replay list."""

    id: str
    name: str
    session_id: str
    configuration_hash: str | None
    template_snapshot_id: str | None
    configuration_snapshot_id: str
    summariser: str
    created_at: str
    step_count: int
    ready_count: int
    failed_count: int
    cancelled_count: int
    compactions_applied: int
    final_tokens: int
    """The last step's request, whole request (the raw local estimate in replays saved before
    it was stored on that basis)."""
    record_schema_version: int
    facts: ReplayFacts = ReplayFacts()

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ReplayInfo:
        fields = {k: v for k, v in row.items() if k != "extras_json"}
        return cls(**fields, facts=ReplayFacts.from_json(row.get("extras_json") or "{}"))


class StepRow(_Frozen):
    """The scalar columns of one preparation (no JSON parsing needed)."""

    step_index: int
    preparation_id: str
    phase: str
    response_message_index: int
    final_input_tokens: int
    provider_prompt_tokens: int | None
    provider_usage_kind: str
    input_budget: int
    pressure_line: int
    reminder_line: int | None
    compaction_applied: bool
    message_count: int
    error_stage: str | None
    error_kind: str | None
    error_message: str | None
    final_request_ref: str | None


class RecordedMark(_Frozen):
    """One compaction the recorded agent performed, placed on the replay's steps."""

    n: int
    step: int | None
    """First step whose request was sent after the compaction (None: no response followed)."""
    at_message: int | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    trigger: str = "auto"
    source: str = ""


def _get(item: Any, *names: str) -> Any:
    for name in names:
        value = item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
        if value is not None:
            return value
    return None


class MarkStep(Protocol):
    """What :func:`recorded_marks` reads of a step: a :class:`StepRow`, a ``ContextPreparation``
    or a recorded response standing for one."""

    @property
    def step_index(self) -> int: ...
    @property
    def response_message_index(self) -> int: ...
    @property
    def provider_prompt_tokens(self) -> int | None: ...
    @property
    def provider_usage_kind(self) -> str: ...


def _trusted(step: MarkStep) -> int | None:
    return step.provider_prompt_tokens if step.provider_usage_kind == "trusted" else None


def recorded_marks(compactions: Iterable[Any], steps: Sequence[MarkStep]) -> tuple[RecordedMark, ...]:
    """The recorded compactions as marks on ``steps`` (``StepRow``/``ContextPreparation``).

    ``compactions`` are the session's :class:`iris.session.RecordedCompaction` records (with
    ``at_message``) or already-placed mappings with ``step``, ``tokens_before``, ``tokens_after``.
    """
    ordered = sorted(steps, key=lambda s: s.step_index)
    by_step = {s.step_index: s for s in ordered}
    marks = []
    for n, c in enumerate(compactions, start=1):
        at, step = _get(c, "at_message"), _get(c, "step", "step_index")
        if step is None and at is not None:
            step = next((s.step_index for s in ordered if s.response_message_index >= at), None)
        before = _get(c, "tokens_before", "pre_tokens")
        if before is None and step is not None and step - 1 in by_step:
            before = _trusted(by_step[step - 1])
        after = _get(c, "tokens_after")
        if after is None and step in by_step:
            after = _trusted(by_step[step])
        marks.append(RecordedMark(n=n, step=step, at_message=at, tokens_before=before,
                                  tokens_after=after, trigger=str(_get(c, "trigger") or "auto"),
                                  source=str(_get(c, "source") or "")))
    return tuple(marks)
