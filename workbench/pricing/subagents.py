"""The sub-agents' bill, beside the main conversation's (R-TRUTH-1, R-TWIN-2).

A Claude Code sub-agent is a conversation of its own (its file, or its ``agent_progress`` copies
in the parent: :func:`workbench.importers.claude_progress.subagent_sessions`), billed like the
main one (:func:`workbench.pricing.billing.recorded_bill`: cache reads, 5-minute and 1-hour cache
writes, per model). The main conversation's ``recorded_billed_usd`` does not include them; their
sum is ``subagents_billed_usd``.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from iris.frozen import UNCHANGED
from iris.session import Session

from .billing import money, recorded_bill
from .records import ReplayCost

__all__ = ["subagents_billed_usd", "with_subagents"]


def subagents_billed_usd(subagents: Sequence[Session]) -> float | None:
    """The sum of the sub-agents' recorded bills; None when none of them could be priced (no
    sub-agent, or no response with a known price)."""
    bills = [recorded_bill(s).usd for s in subagents]
    priced = [Decimal(repr(usd)) for usd in bills if usd is not None]
    return money(sum(priced, Decimal(0))) if priced else None


def with_subagents(cost: ReplayCost, subagents: Sequence[Session]) -> ReplayCost:
    """``cost`` with ``subagents_billed_usd`` set from ``subagents`` (the main bill unchanged)."""
    return cost.evolve(**UNCHANGED, subagents_billed_usd=subagents_billed_usd(subagents))
