"""What one preparation step hands to the next: a frozen :class:`StepCarry`.

A replay (or the live runner) starts from :meth:`StepCarry.start`, lets the walk over the recorded
session append the messages reached (:meth:`with_messages`), builds the step's
:class:`~iris.preparation.state.PreparationState` from it, and after a ready step takes
:meth:`StepCarry.after` of the pipeline's final state (``PreparationOutcome.carry``). A failed or
cancelled step leaves the decisions of the last ready step in place; only the messages appended
since stay. Nothing here is mutated: every change is a new carry.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .. import lineage
from ..compaction.records import CompactionState
from ..compaction.triggers import PressureWindow
from ..reduction.models import ReductionState
from .part import Part
from .state import Marks, PreparationState

__all__ = ["StepCarry"]


@dataclass(frozen=True)
class StepCarry:
    """The durable history and the decisions carried from one step to the next."""

    durable: tuple[Part, ...] = ()
    """The replay's durable history: recorded messages as reached, an applied compaction's
    checkpoint and raw tail in place of what it archived."""
    durable_tokens: int = 0
    """Sum of ``durable`` part tokens (kept incrementally)."""
    reduction_state: ReductionState | None = None
    seen: Marks = field(default_factory=Marks)
    """Fold/trim decisions already recorded at an earlier step."""
    compaction_state: CompactionState | None = None
    window: PressureWindow | None = None
    """The pressure-notice and grace window (None: a new window)."""
    diverged: bool = False
    """True once the replayed history no longer matches what the provider measured."""

    @classmethod
    def after(cls, state: PreparationState) -> StepCarry:
        """What a ready step's final state carries to the next step."""
        return cls(durable=state.durable, durable_tokens=state.durable_tokens,
                   reduction_state=state.reduction_state, seen=state.seen,
                   compaction_state=state.compaction_state, window=state.window,
                   diverged=state.diverged)

    def with_messages(self, parts: tuple[Part, ...], *, reset: bool = False) -> StepCarry:
        """``parts`` appended to the durable history (``reset``: in place of it)."""
        base, tokens = ((), 0) if reset else (self.durable, self.durable_tokens)
        if not parts and not reset:
            return self
        durable = base + parts
        lineage.note(durable, base, len(base))
        return replace(self, durable=durable, durable_tokens=tokens + sum(p.tokens for p in parts))

    def without_notices(self) -> StepCarry:
        """The durable history without pressure notices (a model switch withdraws them)."""
        kept = tuple(p for p in self.durable if p.origin != "notice")
        return replace(self, durable=kept, durable_tokens=sum(p.tokens for p in kept))
