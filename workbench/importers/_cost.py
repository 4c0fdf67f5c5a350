"""The cost a transcript records for one response, checked: what the agent was charged beats a
list price (docs/pricing.md), so a recorded cost is kept on the response's usage
(:attr:`iris.session.Usage.cost_usd`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iris.errors import SessionFormatError

__all__ = ["OTEL_COST_KEYS", "opt_cost", "otel_cost"]

#: Span attributes that carry a call's cost in USD, first present wins: OpenLIT and Langfuse write
#: ``gen_ai.usage.cost``, some exporters ``gen_ai.usage.cost_usd``, OpenInference
#: ``llm.cost.total``, Claude Code's own telemetry ``cost_usd``.
OTEL_COST_KEYS = ("gen_ai.usage.cost", "gen_ai.usage.cost_usd", "llm.cost.total", "cost_usd")


def opt_cost(value: Any, field: str) -> float | None:
    """A recorded cost in USD: a finite number ≥ 0 (also as a numeric string), None if absent."""
    if value is None:
        return None
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or number < 0:
        raise SessionFormatError(f"must be a cost in USD (a number ≥ 0), got {value!r}",
                                 field=field)
    return number


def otel_cost(attrs: Mapping[str, Any]) -> float | None:
    """The cost attribute of a model-call span (see :data:`OTEL_COST_KEYS`), None if it has none."""
    for key in OTEL_COST_KEYS:
        if key in attrs:
            return opt_cost(attrs[key], key)
    return None
