"""Lazy sequences collected within the size limit of a render (R-BOUND-1).

Jinja's ``map``, ``select``, ``reject``, ``selectattr``, ``rejectattr`` and ``batch`` return
generators: each item is sized when it is made, but a consumer that collects them (``|list``,
``|join``, ``|sort``, ``dict(…)``, ``f(*items)``, ``loop.length``…) would hold all of them at once,
``range(100000) | map('center', 1000000) | list`` a hundred gigabytes. So such a generator is
collected here first, item by item, and refused as soon as the items together pass the size limit:
the memory a render holds stays within the limit whatever consumes the sequence.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sized
from typing import Any, cast

from .bounds import RenderLimitExceeded, active_limits, tick, value_size

__all__ = ["LAZY_FILTERS", "collected", "collected_args", "collected_kwargs"]

#: Filters that pass a generator on lazily (or read only one item or a running total): the
#: items are collected by whatever consumes their result, not by them.
LAZY_FILTERS = frozenset({"map", "select", "reject", "selectattr", "rejectattr", "batch", "first",
                          "min", "max", "sum"})


def collected(value: Any) -> Any:
    """``value`` itself, or, when it is an iterator without a length (a generator), its items
    as a list whose deep size is within the size limit."""
    if not isinstance(value, Iterator) or isinstance(value, Sized):
        return value
    limit = active_limits().output_chars
    items: list[object] = []
    size = 0
    source = cast("Iterator[object]", value)
    for item in source:
        tick()
        size += 1 + value_size(item, limit)
        if size > limit:
            raise RenderLimitExceeded(f"a generated sequence would hold more than {limit:,} "
                                      "characters (the size limit of a template render)")
        items.append(item)
    return items


def collected_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` with each generator collected (:func:`collected`)."""
    if not any(isinstance(a, Iterator) for a in args):
        return args
    return tuple(collected(a) for a in args)


def collected_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` with each generator collected (:func:`collected`)."""
    return {key: collected(value) for key, value in kwargs.items()}
