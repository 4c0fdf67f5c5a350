"""Choosing which dynamic contributions enter a request under an allowance (R-DYN-3, R-DYN-4).

Required contributions always stay. Optional ones are removed lowest priority first, and at equal
priority the later entry first, until the kept total fits the allowance. Every kept and removed
entry carries the reason the branch that decided it produced, so the preparation record can store
those decisions without recomputing them (R-PREP-4).
"""

from __future__ import annotations

from pydantic import Field

from ..frozen import FrozenModel
from ..tokens import TokenEstimator, default_estimator
from .sources import ContextContribution, ContextSnapshot

__all__ = ["ContributionSelection", "KeptContribution", "RemovedContribution", "select_contributions"]


_Frozen = FrozenModel


class KeptContribution(_Frozen):
    key: str
    priority: int
    required: bool
    tokens: int
    """Content tokens of the contribution's text (local estimate)."""
    position: int
    """Index in the snapshot."""
    reason: str
    contribution: ContextContribution


class RemovedContribution(_Frozen):
    key: str
    priority: int
    reason: str
    tokens: int
    position: int


class ContributionSelection(_Frozen):
    """Outcome of one step's selection; fixed for the step (no refill after a summary)."""

    kept: tuple[KeptContribution, ...]
    """In snapshot order."""
    removed: tuple[RemovedContribution, ...]
    """In removal order."""
    kept_tokens: int
    allowance_tokens: int
    required_tokens: int
    over_allowance: bool = Field(description="required contributions alone exceed the allowance")

    @property
    def kept_keys(self) -> tuple[str, ...]:
        return tuple(k.key for k in self.kept)

    @property
    def removed_keys(self) -> tuple[str, ...]:
        return tuple(r.key for r in self.removed)

    @property
    def kept_snapshot(self) -> ContextSnapshot:
        return ContextSnapshot(contributions=tuple(k.contribution for k in self.kept))


def _removal_reason(c: ContextContribution, position: int, rank: int, optional_count: int,
                    tied_before: int, total: int, allowance: int) -> str:
    tie = (f"; removed before {tied_before} earlier entr{'y' if tied_before == 1 else 'ies'} of the "
           "same priority because the later entry goes first" if tied_before else "")
    return (f"optional, priority {c.priority} (removal rank {rank} of {optional_count} optional: "
            f"lowest priority first){tie}; position {position}; kept total {total} tokens > "
            f"allowance {allowance}")


def select_contributions(snapshot: ContextSnapshot, allowance_tokens: int, *,
                         estimator: TokenEstimator | None = None) -> ContributionSelection:
    """Keep every required entry; drop optional ones in R-DYN-4 order until the total fits."""
    if allowance_tokens < 0:
        raise ValueError(f"allowance_tokens must be non-negative, got {allowance_tokens}")
    estimator = estimator or default_estimator()
    items = snapshot.contributions
    tokens = estimator.count_many([c.text for c in items])
    total = sum(tokens)
    required_tokens = sum(t for c, t in zip(items, tokens) if c.required)
    optional = [i for i, c in enumerate(items) if not c.required]
    # Lowest priority first; at equal priority the later entry (higher index) first.
    order = sorted(optional, key=lambda i: (items[i].priority, -i))
    removed: list[RemovedContribution] = []
    for rank, i in enumerate(order, start=1):
        if total <= allowance_tokens:
            break
        c = items[i]
        tied_before = sum(1 for j in optional if j < i and items[j].priority == c.priority
                          and j not in {r.position for r in removed})
        removed.append(RemovedContribution(
            key=c.key, priority=c.priority, tokens=tokens[i], position=i,
            reason=_removal_reason(c, i, rank, len(order), tied_before, total, allowance_tokens)))
        total -= tokens[i]
    gone = {r.position for r in removed}
    kept = tuple(
        KeptContribution(key=c.key, priority=c.priority, required=c.required, tokens=tokens[i],
                         position=i, contribution=c,
                         reason=("required: never removed" if c.required else
                                 f"optional, priority {c.priority}: fits, total {total} tokens "
                                 f"<= allowance {allowance_tokens}"))
        for i, c in enumerate(items) if i not in gone)
    return ContributionSelection(kept=kept, removed=tuple(removed), kept_tokens=total,
                                 allowance_tokens=allowance_tokens, required_tokens=required_tokens,
                                 over_allowance=required_tokens > allowance_tokens)
