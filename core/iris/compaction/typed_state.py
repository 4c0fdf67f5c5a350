"""Typed checkpoint state (R-CMP-12): machine state merged across model-driven checkpoints.

Merge rules (seed 002, "跨代携带的状态"): new items win; items not restated are kept (omission is
not deletion); ``retired_items`` remove matching items (whitespace-trimmed exact match, case kept);
with ``open_issues_complete`` only the new issues are current and unrestated ones move to a history
set shown apart; claims merge by key and unrestated claims go from active to stale. Every list is
capped; what falls out is counted in ``overflow`` and disclosed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..frozen import UNCHANGED, FrozenModel

__all__ = ["MAX_CLAIMS", "MAX_ITEMS", "Claim", "TypedCheckpointState", "merge_typed_state"]

MAX_ITEMS = 16
MAX_CLAIMS = 24
ClaimKind = Literal["observed", "derived", "assumed", "proposed"]


class Claim(FrozenModel):

    key: str
    kind: ClaimKind
    status: Literal["active", "stale"] = "active"
    evidence: tuple[str, ...] = ()


class TypedCheckpointState(FrozenModel):

    active_objective: str
    next_step: str
    completed: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    open_issues: tuple[str, ...] = ()
    """Current blockers."""
    historical_issues: tuple[str, ...] = ()
    """Earlier issues not restated in a complete snapshot: recoverable, not current blockers."""
    claims: tuple[Claim, ...] = ()
    evidence_refs: tuple[str, ...] = ()
    state_files: tuple[str, ...] = ()
    planned_state_files: tuple[str, ...] = ()
    overflow: int = 0
    """Items dropped by the caps in this merge (disclosed in the checkpoint)."""


def _retire(items: Sequence[str], retired: set[str]) -> list[str]:
    return [i for i in items if i.strip() not in retired]


def _merge_list(old: Sequence[str], new: Sequence[str], retired: set[str],
                cap: int = MAX_ITEMS) -> tuple[tuple[str, ...], int]:
    merged = [i for i in _retire(old, retired) if i not in new] + _retire(new, retired)
    merged = list(dict.fromkeys(merged))
    dropped = max(len(merged) - cap, 0)
    return tuple(merged[dropped:]), dropped  # the oldest fall out first


def _merge_claims(old: Sequence[Claim], new: Sequence[Claim], retired: set[str],
                  ) -> tuple[tuple[Claim, ...], int]:
    keys = {c.key for c in new}
    carried = [c.evolve(**UNCHANGED, status="stale") for c in old
               if c.key not in keys and c.key.strip() not in retired]
    merged = carried + [c for c in new if c.key.strip() not in retired]
    dropped = max(len(merged) - MAX_CLAIMS, 0)
    return tuple(merged[dropped:]), dropped


def merge_typed_state(previous: TypedCheckpointState | None, new: TypedCheckpointState, *,
                      retired_items: Sequence[str] = (), open_issues_complete: bool = False,
                      ) -> TypedCheckpointState:
    """Merge ``new`` (built from the tool arguments) over ``previous``."""
    if previous is None:
        previous = TypedCheckpointState(active_objective="", next_step="")
    retired = {r.strip() for r in retired_items}
    completed, d1 = _merge_list(previous.completed, new.completed, retired)
    decisions, d2 = _merge_list(previous.decisions, new.decisions, retired)
    if open_issues_complete:
        current = list(dict.fromkeys(_retire(new.open_issues, retired)))
        history = [i for i in (*previous.historical_issues, *previous.open_issues)
                   if i not in current]
        history = list(dict.fromkeys(_retire(history, retired)))
    else:
        current = list(_merge_list(previous.open_issues, new.open_issues, retired, 10**6)[0])
        history = [i for i in _retire(previous.historical_issues, retired) if i not in current]
    # Current and historical issues share one cap; the history set gives way first.
    d3 = max(len(current) + len(history) - MAX_ITEMS, 0)
    drop_history = min(d3, len(history))
    history = history[drop_history:]
    current = current[d3 - drop_history:]
    claims, d4 = _merge_claims(previous.claims, new.claims, retired)
    refs, d5 = _merge_list(previous.evidence_refs, new.evidence_refs, set(), MAX_CLAIMS)
    return new.evolve(
        **UNCHANGED, completed=completed, decisions=decisions, open_issues=tuple(current),
        historical_issues=tuple(history), claims=claims, evidence_refs=refs,
        overflow=d1 + d2 + d3 + d4 + d5)
