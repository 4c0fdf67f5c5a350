"""Triggers, grace and pressure notices (R-CMP-10, R-CMP-11, R-CMP-12 grace).

:func:`decide_trigger` runs when the next main request is being prepared (never merely because a
reply ended). Manual compaction always runs; oversize recovery runs when automatic compaction is on,
else the turn ends with a clear error; automatic compaction follows the usage decision
(:func:`~iris.compaction.usage.should_trigger`). With ``model_driven`` on, the first crossing in a
window defers automatic compaction by two main requests, but only if the reminder was delivered
earlier in the window; at 95% of the usable budget the grace ends at once. Notices are durable and
delivered once per line; a request carries only the highest applicable one (manual > threshold
warning > grace countdown > reminder).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from ..frozen import UNCHANGED, FrozenModel
from .thresholds import Thresholds
from .usage import TriggerDecision, UsageReading, should_trigger

__all__ = [
    "GRACE_END_RATIO",
    "GRACE_REQUESTS",
    "Notice",
    "PressureWindow",
    "TriggerStep",
    "decide_trigger",
    "select_notice",
]

GRACE_REQUESTS = 2
GRACE_END_RATIO = Decimal("0.95")
NoticeKind = Literal["manual", "threshold", "grace", "reminder"]
_PRIORITY: tuple[NoticeKind, ...] = ("manual", "threshold", "grace", "reminder")


_Frozen = FrozenModel


class PressureWindow(_Frozen):
    """Per-window notice and grace state; any applied compaction, switch or restore opens a new
    window (``PressureWindow()``)."""

    reminder_delivered: bool = False
    threshold_delivered: bool = False
    grace_remaining: int | None = None
    """Main requests still allowed before compaction starts; None: grace not started."""
    grace_spent: bool = False


class Notice(_Frozen):
    kind: NoticeKind
    text: str


class TriggerStep(_Frozen):
    compact: bool
    trigger: Literal["auto", "manual", "oversize"] | None = None
    reason: str
    usage: TriggerDecision | None = None
    notice: Notice | None = None
    window: PressureWindow
    error: str | None = None
    """Set when the turn must end (oversize with automatic compaction disabled)."""


def _notice(kind: NoticeKind, tokens: int, t: Thresholds) -> Notice:
    pct = f"{tokens / t.usable_budget:.0%}" if t.usable_budget else "?"
    texts = {
        "manual": "Manual compaction requested: the history will be checkpointed now.",
        "threshold": f"Context at {pct} of the usable budget ({tokens:,} tokens): compaction is "
                     "about to start. Finish the current atomic step and record the next step.",
        "grace": f"Context at {pct}: compaction starts after {GRACE_REQUESTS} more requests.",
        "reminder": f"Context at {pct} of the usable budget ({tokens:,} tokens): keep a safe "
                    "continuation state.",
    }
    return Notice(kind=kind, text=f"<system-reminder>{texts[kind]}</system-reminder>")


def select_notice(candidates: list[Notice]) -> Notice | None:
    """The one notice a request carries: the highest by priority."""
    return min(candidates, key=lambda n: _PRIORITY.index(n.kind), default=None)


def _auto(reading: UsageReading, t: Thresholds, window: PressureWindow, model_driven: bool,
          local_estimate: int | None) -> TriggerStep:
    usage = should_trigger(reading, t, local_estimate=local_estimate)
    notices: list[Notice] = []
    if not usage.trigger:
        line = t.reminder_line
        if (line is not None and reading.kind != "none" and reading.source != "restored"
                and usage.tokens >= line and not window.reminder_delivered):
            notices.append(_notice("reminder", usage.tokens, t))
            window = window.evolve(**UNCHANGED, reminder_delivered=True)
        return TriggerStep(compact=False, reason=usage.reason, usage=usage,
                           notice=select_notice(notices), window=window)
    if not window.threshold_delivered:
        notices.append(_notice("threshold", usage.tokens, t))
        window = window.evolve(**UNCHANGED, threshold_delivered=True)
    near_limit = usage.tokens >= t.usable_budget * GRACE_END_RATIO
    if model_driven and not near_limit and window.reminder_delivered and not window.grace_spent:
        remaining = GRACE_REQUESTS if window.grace_remaining is None else window.grace_remaining
        if remaining > 0:
            window = window.evolve(**UNCHANGED, grace_remaining=remaining - 1)
            return TriggerStep(compact=False, reason=f"{usage.reason}; grace: {remaining} "
                               "request(s) before compaction", usage=usage,
                               notice=select_notice(notices), window=window)
    reason = usage.reason + ("; grace ends at 95% of the budget" if near_limit and model_driven
                             else "")
    window = window.evolve(**UNCHANGED, grace_spent=True, grace_remaining=0)
    return TriggerStep(compact=True, trigger="auto", reason=reason, usage=usage,
                       notice=select_notice(notices), window=window)


def decide_trigger(reading: UsageReading, t: Thresholds, *, window: PressureWindow | None = None,
                   model_driven: bool = False, manual: bool = False, oversize: bool = False,
                   local_estimate: int | None = None) -> TriggerStep:
    """Whether compaction is entered while preparing this main request, and which notice goes
    with it."""
    window = window or PressureWindow()
    if manual:
        return TriggerStep(compact=True, trigger="manual", reason="manual compaction (/compact)",
                           notice=_notice("manual", reading.tokens, t), window=window)
    if oversize:
        if t.auto_enabled:
            return TriggerStep(compact=True, trigger="oversize", reason="the provider rejected "
                               "the request for length: compact and retry", window=window)
        return TriggerStep(compact=False, reason="oversize with automatic compaction disabled",
                           window=window, error="the provider rejected the request for length "
                           "and automatic compaction is disabled (threshold 0): the turn ends")
    return _auto(reading, t, window, model_driven, local_estimate)
