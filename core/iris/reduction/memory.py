"""The reduction engine's memory between the requests of one run, owned by whoever runs them.

:func:`~iris.reduction.engine.reduce_request` is a function of its arguments; what it may reuse
from earlier requests lives in a :class:`ReductionMemory` the caller passes (a replay keeps one for
all its steps). No memory means a fresh one for that call: the request is decided from scratch.
A memory never changes a result, only how much work it takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ReductionMemory"]


@dataclass(eq=False)
class ReductionMemory:
    """Caches of one run's reductions; every key is content or a call id, never an object id."""

    cache: dict[Any, Any] = field(default_factory=dict[Any, Any])
    """Content caches (classification, renderings, message token counts)."""
    tracker: Any = None
    """The incremental tracker of the latest request (extended when the next one continues it)."""
    classified: int = 0
    """Results classified with this memory so far (an instrumentation counter)."""
