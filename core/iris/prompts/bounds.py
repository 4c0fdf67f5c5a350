"""Time and size bounds of one template render (R-BOUND-1).

A sandboxed template cannot reach Python internals, but it can still loop, recurse or grow a string
for ever. Each render runs under a :class:`RenderLimits` budget kept in a context variable (so a
shared environment serves several threads): a deadline checked at every loop iteration, call,
operator, filter and output value, and a size limit on every value the template builds
(strings, lists, tuples and dicts counted deeply, shared parts counted each time they appear, so a
list doubled by nesting is as large as its printed form) and on the output. Builders that could make
a huge value in one C call (``str.replace``, ``str.join``, ``indent``, ``%``, ``str.format``…) are
checked before the call from their arguments; everything else is checked on its result.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable, Iterator, Mapping, Sized
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["LIPSUM_MAX_PARAGRAPHS", "LIPSUM_MAX_WORDS", "RenderLimitExceeded", "RenderLimits",
           "active_limits", "check_output", "check_size", "check_value", "guard_loop", "limited", "tick",
           "value_size"]

LIPSUM_MAX_PARAGRAPHS = 100
"""``lipsum(n)`` beyond this many paragraphs is refused."""
LIPSUM_MAX_WORDS = 1000
"""``lipsum(min=…, max=…)`` beyond this many words per paragraph is refused."""


@dataclass(frozen=True)
class RenderLimits:
    """Bounds of one render."""

    seconds: float = 10.0
    """Wall-clock time a render may take."""
    output_chars: int = 16_000_000
    """Largest output, and largest value (deep size) built while rendering, in characters."""


class RenderLimitExceeded(Exception):
    """A render passed its time or size limit (the renderer names the template)."""


#: Checks between two readings of the clock: a check costs a counter, a reading a system call.
_CLOCK_EVERY = 64
#: A value at least this large took long enough to build that the clock is read at once.
_LARGE = 65_536


class _Budget:
    __slots__ = ("deadline", "limits", "produced", "produced_limit", "ticks")

    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.seconds
        self.ticks = _CLOCK_EVERY
        self.produced_limit = 4 * limits.output_chars
        self.produced = 0
        """Characters of every ``{{ … }}`` output so far, captured ones (macros, set blocks)
        included: a loop writing into a captured block is stopped before the block is joined."""


_CURRENT: ContextVar[_Budget | None] = ContextVar("iris_render_budget", default=None)


@contextmanager
def limited(limits: RenderLimits) -> Generator[RenderLimits]:
    """Run a render under ``limits`` (the deadline starts now)."""
    token = _CURRENT.set(_Budget(limits))
    try:
        yield limits
    finally:
        _CURRENT.reset(token)


def active_limits() -> RenderLimits:
    """The limits of the render in progress (the defaults outside one)."""
    budget = _CURRENT.get()
    return budget.limits if budget is not None else RenderLimits()


def tick(*, now: bool = False) -> None:
    """Raise when the render in progress has passed its deadline. The clock is read at every
    64th check (each stands for one small step of the template), or at once with ``now`` (after
    a step that built a large value)."""
    budget = _CURRENT.get()
    if budget is None:
        return
    budget.ticks -= 1
    if budget.ticks > 0 and not now:
        return
    budget.ticks = _CLOCK_EVERY
    if time.monotonic() > budget.deadline:
        raise RenderLimitExceeded(f"the render took longer than {budget.limits.seconds:g} s "
                                  "(the time limit of a template render)")


def check_size(size: int, what: str = "a value") -> None:
    """Raise when ``size`` characters pass the size limit of the render in progress."""
    limit = active_limits().output_chars
    if size > limit:
        raise RenderLimitExceeded(f"{what} would have more than {limit:,} characters (the size "
                                  "limit of a template render)")


def _children(value: object) -> Iterable[object] | None:
    """What a container holds (dict keys and values; a Jinja namespace's attributes)."""
    if isinstance(value, (list, tuple, set, frozenset)):
        return cast("Iterable[object]", value)
    if isinstance(value, Mapping):
        items = cast("Mapping[object, object]", value)
        return (*items.keys(), *items.values())
    attrs: object = (getattr(value, "_Namespace__attrs", None)
                     if type(value).__name__ == "Namespace" else None)
    return tuple(cast("dict[str, object]", attrs).values()) if isinstance(attrs, dict) else None


def value_size(value: object, limit: int) -> int:
    """Characters of strings plus items of containers reachable from ``value``, shared parts
    counted each time; stops counting once past ``limit`` (so the walk costs at most ``limit``)."""
    size = 0
    stack = [value]
    while stack and size <= limit:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            size += len(item)
            continue
        children = _children(item)
        if children is None:
            size += 1
            continue
        size += 1 + (len(cast("Sized", item)) if hasattr(item, "__len__") else 0)
        if size <= limit:
            stack.extend(children)
    return size


def check_value(value: Any) -> Any:
    """``value`` if the render is still in time and ``value`` within the size limit."""
    tick()
    size = 0
    if isinstance(value, (str, bytes)):
        size = len(value)
    elif _children(value) is not None:
        size = value_size(value, active_limits().output_chars)
    check_size(size)
    if size > _LARGE:
        tick(now=True)
    return value


_SCALARS: frozenset[type[object]] = frozenset({int, float, bool, type(None)})


def check_output(value: object) -> object:
    """``value`` about to be written by ``{{ … }}``: in time, within the size limit, and within
    the total text a render may produce (four times the output limit, captured text included)."""
    kind = type(value)
    if kind is not str and kind not in _SCALARS:
        check_value(value)
    budget = _CURRENT.get()
    if budget is None:
        return value
    tick()
    budget.produced += len(value) if isinstance(value, str) else 1
    if budget.produced > budget.produced_limit:
        raise RenderLimitExceeded(f"the render produced more than {budget.produced_limit:,} "
                                  "characters of output, captured blocks included (4 × its "
                                  "size limit)")
    return value


def guard_loop(iterable: Iterable[Any]) -> Iterator[Any]:
    """``iterable`` with the deadline checked before each item (a template's ``for`` loops)."""
    for item in iterable:
        tick()
        yield item
