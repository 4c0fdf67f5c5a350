"""Lazy sequences collected within the size limit of a render (R-BOUND-1).

Jinja's ``map``, ``select``, ``reject``, ``selectattr``, ``rejectattr`` and ``batch`` return
generators: each item is sized when it is made, but a consumer that collects them (``|list``,
``|join``, ``|sort``, ``dict(…)``, ``f(*items)``, ``loop.length``…) would hold all of them at once,
``range(100000) | map('center', 1000000) | list`` a hundred gigabytes. So such a generator is
collected here first, item by item, and refused as soon as the items together pass the size limit:
the memory a render holds stays within the limit whatever consumes the sequence.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from .bounds import RenderLimitExceeded, active_limits, tick, value_size

__all__ = ["LAZY_FILTERS", "collected", "collected_args", "collected_kwargs"]

#: Filters that pass a generator on lazily (or read only one item or a running total): the
#: items are collected by whatever consumes their result, not by them.
LAZY_FILTERS = frozenset({"map", "select", "reject", "selectattr", "rejectattr", "batch", "first",
                          "min", "max", "sum"})
#: The deadline is checked at every 64th collected item (each item was made by a filter call or
#: a loop step, which check it too).
_TICK_EVERY = 63


#: Whether values of a type are iterators without a length (generators), learnt per type.
_LAZY_KINDS: dict[type[object], bool] = dict.fromkeys((str, int, float, bool, type(None), list,
                                                       tuple, dict), False)


def _lazy(value: object) -> bool:
    """Whether ``value`` is an iterator without a length (a generator)."""
    kind = type(value)
    lazy = _LAZY_KINDS.get(kind)
    if lazy is None:  # the class's attributes: quicker than the Iterator ABC's check
        lazy = _LAZY_KINDS[kind] = hasattr(kind, "__next__") and not hasattr(kind, "__len__")
    return lazy


def collected(value: Any) -> Any:
    """``value`` itself, or, when it is an iterator without a length (a generator), its items
    as a list whose deep size is within the size limit."""
    if not _lazy(value):
        return value
    limit = active_limits().output_chars
    items: list[object] = []
    size = 0
    for item in cast("Iterator[object]", value):
        size += 1 + (len(item) if type(item) is str else value_size(item, limit))
        if size > limit:
            raise RenderLimitExceeded(f"a generated sequence would hold more than {limit:,} "
                                      "characters (the size limit of a template render)")
        items.append(item)
        if not len(items) & _TICK_EVERY:
            tick()
    tick()
    return items


def collected_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` with each generator collected (:func:`collected`)."""
    for arg in args:
        if _lazy(arg):
            return tuple(collected(a) for a in args)
    return args


def collected_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with each generator collected (:func:`collected`)."""
    for value in kwargs.values():
        if _lazy(value):
            return {key: collected(v) for key, v in kwargs.items()}
    return kwargs
