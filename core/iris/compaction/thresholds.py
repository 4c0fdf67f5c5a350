"""Budget and pressure lines (R-CMP-1…4): the numbers every compaction decision compares against.

Arithmetic is done on decimals so ``ceil(96000 × 0.15)`` is 14400, not the 14401 that binary floats
give. Choices where the spec is silent: with ``threshold: 0`` automatic compaction is off
(``auto_enabled`` False, ``threshold_line`` None) but ``pressure_line`` still uses the built-in 0.8,
because a manual compaction needs a success target (R-CMP-8); a reminder at or above the threshold
never fires on its own, so its ``reminder_line`` is None.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from ..frozen import FrozenModel
from ..session import ModelLimits
from .config import CHORD_DEFAULTS

if TYPE_CHECKING:  # iris.config imports this package
    from ..config import ContextConfig

__all__ = ["DEFAULT_INPUT_BUDGET", "Thresholds", "budget_from_limits", "pressure_colour",
           "thresholds"]

DEFAULT_INPUT_BUDGET = 96000
DEFAULT_MAX_OUTPUT = 64000
BudgetSource = Literal["config", "model_config", "session", "catalogue", "default"]


class Thresholds(FrozenModel):
    """Resolved budget and lines for one model window."""

    input_budget: int
    """Whole input allowance (after the output reservation)."""
    budget_source: BudgetSource
    """Which rule of R-CMP-3 gave the budget."""
    budget_detail: str = ""
    """The budget's source in words, e.g. ``catalogue: claude-opus-4-6: context 200,000, max
    output 128,000 (Anthropic, Models overview: …)`` or ``session limits: context 258,400``."""
    reserved: int
    usable_budget: int
    """``input_budget − reserved``: the denominator of every displayed percentage."""
    threshold: float
    """Effective threshold (after per-model override); 0 means automatic compaction is off."""
    auto_enabled: bool
    threshold_line: int | None
    """``floor(usable × threshold)``; None when automatic compaction is disabled."""
    pressure_line: int
    """Success target of a compaction (R-CMP-8): the threshold line, or 0.8 of usable when off."""
    reminder: float | None
    """Effective reminder ratio; None when disabled."""
    reminder_line: int | None
    """``floor(usable × reminder)``; None when disabled or not below the threshold."""
    recent_target: int
    """``ceil(budget × keep_recent_ratio)``."""
    summary_max_tokens: int
    """``ceil(budget × summary_ratio)``."""
    model: str | None = None


def _floor(n: int, ratio: float) -> int:
    return math.floor(Decimal(n) * Decimal(str(ratio)))


def _ceil(n: int, ratio: float) -> int:
    return math.ceil(Decimal(n) * Decimal(str(ratio)))


def budget_from_limits(limits: ModelLimits | None, max_output_tokens: int = DEFAULT_MAX_OUTPUT,
                       *, reserve_output: bool = True) -> int | None:
    """R-CMP-3 from model limits: input; else context − output; else context − max_output;
    without ``reserve_output`` the whole context window."""
    if limits is None:
        return None
    if limits.input:
        return limits.input
    if not limits.context:
        return None
    if not reserve_output:
        return limits.context
    reserve = limits.output if limits.output else max_output_tokens
    # An output reservation as large as the window leaves nothing: use the whole window.
    return limits.context - reserve if reserve < limits.context else limits.context


def _limits_text(limits: ModelLimits) -> str:
    named = (("context", limits.context), ("input", limits.input), ("output", limits.output))
    return ", ".join(f"{k} {v:,}" for k, v in named if v)


def _budget(config: ContextConfig, model_limits: ModelLimits | None, model_name: str | None = None
            ) -> tuple[int, BudgetSource, str]:
    """R-CMP-3, first that applies, with the source in words."""
    comp = config.compaction
    if comp.input_budget_tokens is not None:
        return comp.input_budget_tokens, "config", "configuration: compaction.input_budget_tokens"
    model = config.model
    max_out = model.max_output_tokens if model else DEFAULT_MAX_OUTPUT
    reserve = comp.reserve_output
    note = "" if reserve else " (no output reservation)"
    if model is not None and model.limit is not None and (
            b := budget_from_limits(model.limit, max_out, reserve_output=reserve)):
        return b, "model_config", f"configuration model.limit: {_limits_text(model.limit)}{note}"
    if model_limits is not None and (
            b := budget_from_limits(model_limits, max_out, reserve_output=reserve)):
        return b, "session", f"limits recorded in the session: {_limits_text(model_limits)}{note}"
    from ..catalogue import lookup

    name = (model.name if model is not None and model.name else None) or model_name
    entry = lookup(name, getattr(config, "catalogue", None))
    if entry is not None:
        return entry.input_budget, "catalogue", f"model catalogue: {entry.describe()}"
    why = f"no limits known for {name!r}" if name else "no model or limits known"
    return DEFAULT_INPUT_BUDGET, "default", f"default 96,000 ({why})"


def _effective_ratios(config: ContextConfig) -> tuple[float, float]:
    threshold, reminder = config.compaction.threshold, config.compaction.reminder
    override = config.model.compaction if config.model else None
    if override is not None:
        if override.threshold is not None:
            threshold = override.threshold
        if override.reminder is not None:
            reminder = override.reminder
    return threshold, reminder


def _covered(budget: int, source: BudgetSource, detail: str, config: ContextConfig,
             recorded_prompt: int | None) -> tuple[int, str]:
    """``compaction.budget_covers_recorded``: a derived budget below the largest prompt the
    provider accepted is raised to it (an explicit ``input_budget_tokens`` is kept)."""
    if (not config.compaction.budget_covers_recorded or source == "config" or not recorded_prompt
            or recorded_prompt <= budget):
        return budget, detail
    return recorded_prompt, (f"{detail}; raised from {budget:,} to {recorded_prompt:,}, the largest "
                             "prompt the agent sent")


def _line(usable: int, ratio: float, percent: int) -> int:
    """``floor(usable × ratio)``; with an effective-window percent below 100 the ratio applies to
    the full window ``usable × 100 / percent`` (never above the usable budget)."""
    if percent == 100:
        return _floor(usable, ratio)
    full = Decimal(usable) * 100 / Decimal(percent)
    return min(math.floor(full * Decimal(str(ratio))), usable)


def thresholds(config: ContextConfig, model_limits: ModelLimits | None = None, model: str | None = None,
               *, recorded_prompt: int | None = None) -> Thresholds:
    """Resolve the budget (R-CMP-3), lines (R-CMP-1/2) and targets for ``config``; ``model`` is
    the session's model (for the catalogue), ``recorded_prompt`` the largest prompt its provider
    accepted (see ``compaction.budget_covers_recorded``)."""
    budget, source, detail = _budget(config, model_limits, model)
    budget, detail = _covered(budget, source, detail, config, recorded_prompt)
    comp = config.compaction
    usable = max(budget - comp.reserved, 0)
    threshold, reminder_ratio = _effective_ratios(config)
    auto = threshold > 0
    percent = comp.effective_window_percent
    line = _line(usable, threshold, percent) if auto else None
    if line is not None and percent != 100:
        detail += (f"; threshold {threshold:g} of the full window {usable * 100 // percent:,} "
                   f"(the budget is {percent}% of it)")
    reminder: float | None
    if not auto or reminder_ratio == -1:
        reminder = None
    elif reminder_ratio == 0:
        reminder = float(min(Decimal("0.60"), Decimal(str(threshold)) * Decimal("0.90")))
    else:
        reminder = reminder_ratio
    reminder_line = (_line(usable, reminder, percent)
                     if reminder is not None and reminder < threshold else None)
    return Thresholds(
        input_budget=budget, budget_source=source, budget_detail=detail, reserved=comp.reserved, usable_budget=usable,
        threshold=threshold, auto_enabled=auto, threshold_line=line,
        pressure_line=line if line is not None else _floor(usable, CHORD_DEFAULTS["threshold"]),
        reminder=reminder, reminder_line=reminder_line,
        recent_target=_ceil(budget, comp.keep_recent_ratio),
        summary_max_tokens=_ceil(budget, comp.summary_ratio),
        model=(config.model.name if config.model and config.model.name else None) or model)


def pressure_colour(tokens: int, t: Thresholds) -> Literal["green", "orange", "red"]:
    """R-CMP-4: below the reminder green, reminder to threshold orange, at/over threshold red.

    With automatic compaction off there are no lines: red only at/over the usable budget.
    """
    if t.threshold_line is None:
        return "red" if tokens >= t.usable_budget else "green"
    if tokens >= t.threshold_line:
        return "red"
    if t.reminder_line is not None and tokens >= t.reminder_line:
        return "orange"
    return "green"
