"""The state a preparation carries from stage to stage, and the settings every stage reads.

A request being prepared is a tuple of :class:`Part` s: one message each, with its cached token
count, where it came from and what has happened to it so far. The whole-request estimate is a sum
of those cached counts plus tool schemas and framing (the same arithmetic as
:meth:`iris.tokens.TokenEstimator.request_tokens`), so a stage boundary costs no encoder call for
text already seen. Stages return new states (``dataclasses.replace``); nothing is mutated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple

from ..compaction.calibration import Calibration
from ..compaction.records import CompactionOutcome, CompactionState
from ..compaction.summarisers import Summariser
from ..compaction.thresholds import Thresholds
from ..compaction.triggers import PressureWindow
from ..compaction.usage import UsageReading
from ..config import ContextConfig
from ..prompts import PromptTemplates
from ..reduction.artifacts import ArtifactWriter
from ..reduction.models import ReductionState
from ..reduction.toolkinds import ToolKindMap
from ..session import RecordedMicrocompaction
from ..tokens import REQUEST_OVERHEAD
from .memory import StepMemory, TokenCache
from .part import Origin, Part
from .records import PreparationFailure, PreparedRequest, StageRecord

__all__ = ["Marks", "Origin", "Part", "PipelineSettings", "PreparationState", "StageFailed",
           "TokenCache", "ToolSpec", "WindowOffset"]

class Marks:
    """An immutable set of decision marks that grows step after step without being copied.

    The fold and trim stages record a decision only the first time its mark appears; the marks of
    a long replay run into thousands, and copying them into a new ``frozenset`` at every step is
    whole-history work. Here each step adds a small level; levels merge like a binary counter
    (a level is merged into the one before while that one is at most twice its size), so a step
    costs about the logarithm of the total and a lookup checks a few levels. Older values stay
    valid: a failed step's state simply keeps its own levels.
    """

    __slots__ = ("_levels",)

    def __init__(self, levels: tuple[frozenset[str], ...] = ()) -> None:
        self._levels = levels

    @classmethod
    def of(cls, marks: Any) -> Marks:
        if isinstance(marks, Marks):
            return marks
        return cls((frozenset(marks),) if marks else ())

    def __contains__(self, mark: object) -> bool:
        return any(mark in level for level in self._levels)

    def __iter__(self) -> Any:
        for level in self._levels:
            yield from level

    def __len__(self) -> int:
        return sum(len(level) for level in self._levels)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Marks):
            return frozenset(self) == frozenset(other)
        if isinstance(other, (set, frozenset)):
            return frozenset(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self))

    def __repr__(self) -> str:
        return f"Marks({len(self)} marks in {len(self._levels)} level(s))"

    def with_added(self, marks: Any) -> Marks:
        """These marks plus ``marks`` (self when nothing is new)."""
        new = frozenset(m for m in marks if m not in self)
        if not new:
            return self
        levels = [*self._levels, new]
        while len(levels) > 1 and len(levels[-2]) <= 2 * len(levels[-1]):
            last = levels.pop()
            levels[-1] = levels[-1] | last
        return Marks(tuple(levels))


class WindowOffset(NamedTuple):
    """The replay's whole request minus the agent's (the provider's count) at ``step``, the first
    response after both compacted: from then on the two histories grow by the same recorded
    messages, so the agent's count plus ``offset`` stands for the replay's.

    When the profile re-attaches files after its compaction (``restore_recent_reads``), the files
    each side re-attached are left out of ``offset``. The agent's are not in its transcript, only
    in its count (``agent_reattached``: the overhead of the agent's window above the system
    prompt and tools, measured on the same response), so the count the trigger compares keeps
    them, while the request the replay sends holds its own pick (``reattached``, whole tokens).
    Both None when nothing was left out."""

    offset: int
    step: int
    reattached: int | None = None
    agent_reattached: int | None = None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool schema offered to the model, with its cached token cost."""

    name: str
    schema: dict[str, Any]
    tokens: int


@dataclass(frozen=True)
class PipelineSettings:
    """What every stage reads: the validated configuration and the collaborators (never mutated)."""

    config: ContextConfig
    """The validated context configuration."""
    thresholds: Thresholds
    """For this session and model."""
    memory: StepMemory
    """The step memory the replay walker owns (see :mod:`iris.preparation.memory`)."""
    prompts: PromptTemplates | None = None
    summariser: Summariser | None = None
    work_dir: Path | None = None
    """The folder archives and reduction artifacts go to: the replay's work folder, or a live
    run's session folder (records name it by the logical root ``<session_dir>``)."""
    tool_kinds: ToolKindMap | None = None
    cancel: Callable[[], bool] | None = None
    artifacts: ArtifactWriter | None = None
    """Where reduction artifacts go; None: written under ``work_dir`` as they are made."""
    incremental: bool = True
    """False: every step is decided from scratch. The replay walker gives each step a fresh
    :attr:`memory` (only the token counts are kept); the records are the same, only slower (used
    to check exactly that)."""

    @property
    def cache(self) -> TokenCache:
        """The message token counts of :attr:`memory`."""
        return self.memory.tokens

    @property
    def input_budget(self) -> int:
        """The hard input limit of :attr:`thresholds` (one source for every stage)."""
        return self.thresholds.input_budget

    @property
    def pressure_line(self) -> int:
        """The compaction pressure line of :attr:`thresholds`."""
        return self.thresholds.pressure_line

    @property
    def reminder_line(self) -> int | None:
        """The reminder line of :attr:`thresholds` (None: no reminder)."""
        return self.thresholds.reminder_line


@dataclass(frozen=True)
class PreparationState:
    """Everything one preparation has decided so far."""

    step_index: int
    context: tuple[Part, ...] = ()
    contributions: tuple[Part, ...] = ()
    history: tuple[Part, ...] = ()
    """Working copy of the durable history; folding and trimming change only this copy."""
    durable: tuple[Part, ...] = ()
    """The durable history itself; only an applied compaction replaces it (and a microcompaction
    clears old tool results in it, as the agent did)."""
    tools: tuple[ToolSpec, ...] = ()
    dropped: tuple[str, ...] = ()
    called_tools: frozenset[str] = frozenset()
    """Tool names called anywhere in the durable history (deferred disclosure keeps these)."""
    reduction_state: ReductionState | None = None
    compaction: CompactionOutcome | None = None
    request: PreparedRequest | None = None
    """The ``PreparedRequest`` composed by final selection."""
    request_ref: str | None = None
    """Its content hash when already known (None: :attr:`PreparedRequest.ref` computes it when
    first read, from the pieces final selection handed over)."""
    compaction_state: CompactionState | None = None
    """The compaction engine's carried state (previous checkpoint, archive counter)."""
    seen: Marks = field(default_factory=Marks)
    """Fold/trim decisions already recorded at an earlier step (only changes are recorded again);
    a frozenset is accepted too."""
    usage_reading: UsageReading | None = None
    """The usage reading of the previous response, or None."""
    diverged: bool = False
    """True once the replayed history no longer matches what the provider measured."""
    window: PressureWindow | None = None
    """The pressure-notice and grace window (None: a new window). Carried from step to step; an applied compaction or a model switch opens a new one."""
    todos_completed: bool = False
    """The latest todo call finished every item, with no user input or model switch since: the
    wrap-up grace of R-RED-9 applies (passed to the reduction engine by the trim stage)."""
    """The compaction outcome when one was applied at this step."""
    durable_tokens: int = 0
    """Sum of ``durable`` part tokens (kept incrementally by the replay)."""
    history_tokens: int = 0
    """Sum of ``history`` part tokens, kept up to date by every stage that edits the history."""
    calibration: Calibration | None = None
    """The calibration known before this step (None: ratio 1, no overhead)."""
    trigger_reading: tuple[int | None, str] | None = None
    """``(value, basis)`` the compaction trigger compared (set by the compaction stage)."""
    window_offset: WindowOffset | None = None
    """An agent profile once it and the agent both compacted (``compaction.agent_rules``): the
    replay's whole request minus the provider's count at the first response of the shared window
    (:class:`WindowOffset`). The two histories differ only by what each compaction left, so the
    trigger compares the provider's count of the last response plus this offset (and what the
    agent adds) instead of the calibrated local estimate. None: not measured."""
    agent_count: int | None = None
    """An agent profile at the step of the agent's automatic compaction: the agent's own count
    of the request it compacted (Claude Code ``preTokens``), which includes what the transcript
    never recorded (a tool result the agent compacted in the middle of). The trigger compares
    it (plus the window offset) instead of its own estimate. None elsewhere."""
    microcompactions: tuple[RecordedMicrocompaction, ...] = ()
    """The recorded agent's microcompactions that take effect at this step (an agent profile
    with ``compaction.microcompact``); the trim stage clears their results."""
    microcompact_rule: bool = False
    """The trim stage clears old tool results by Claude Code's documented rule at this step (its
    version cleared without recording it; :mod:`iris.compaction.microcompact`)."""
    recorded_manual: str | None = None
    """Set when the recorded agent's user asked for a compaction before this step and the
    configuration applies it (``compaction.apply_recorded_manual``): the words naming it."""

    def whole(self, local: int) -> int:
        """A local estimate on the whole-request basis: calibrated, plus unrecorded overhead."""
        return local if self.calibration is None else self.calibration.whole(local)

    def local_line(self, line: int) -> int:
        """A whole-request line in local units (the inverse of :meth:`whole`), for comparisons
        with the local figures of the stages."""
        cal = self.calibration
        if cal is None or (cal.overhead == 0 and cal.ratio == 1.0):
            return line
        return max(int((line - cal.overhead) / cal.ratio), 1)

    @property
    def parts(self) -> tuple[Part, ...]:
        return self.context + self.contributions + self.history

    @property
    def input_tokens(self) -> int:
        """Whole-request estimate from cached counts (R-TOK-2): no encoder call."""
        return (REQUEST_OVERHEAD + _fixed_tokens(self.context, self.tools)
                + sum(p.tokens for p in self.contributions) + self.history_tokens)

    def evolve(self, **changes: Any) -> PreparationState:
        """``dataclasses.replace(self, **changes)`` without re-running the generated ``__init__``
        field by field (the stages call it several times per step; the state has no
        ``__post_init__``)."""
        unknown = changes.keys() - _STATE_FIELDS
        if unknown:
            raise TypeError(f"PreparationState has no field(s) {sorted(unknown)}")
        new = object.__new__(PreparationState)
        values = new.__dict__
        values.update(self.__dict__)
        values.update(changes)
        return new


_STATE_FIELDS = frozenset(f.name for f in fields(PreparationState))

_fixed: tuple[tuple[Part, ...], tuple[ToolSpec, ...], int] | None = None
"""The latest static context and tool list and their tokens (the same tuples at every step of a
replay, asked for several times per step; held, so their identity cannot be reused)."""


def _fixed_tokens(context: tuple[Part, ...], tools: tuple[ToolSpec, ...]) -> int:
    global _fixed
    hit = _fixed  # one read: another thread may swap it meanwhile
    if hit is not None and hit[0] is context and hit[1] is tools:
        return hit[2]
    total = sum(p.tokens for p in context) + sum(t.tokens for t in tools)
    _fixed = (context, tools, total)
    return total


class StageFailed(Exception):
    """Raised by a stage that recorded a failure itself (e.g. a rejected compaction).

    Carries the stage record as it really went and the failure; the pipeline turns it into a
    ``failed`` preparation and keeps the previous durable state.
    """

    def __init__(self, record: StageRecord, failure: PreparationFailure,
                 trigger_reading: tuple[int | None, str] | None = None) -> None:
        super().__init__(failure.message)
        self.record = record
        self.failure = failure
        self.trigger_reading = trigger_reading
        """What the compaction trigger compared before the stage failed, so the failed step's
        record states the same reading as its stage note."""
