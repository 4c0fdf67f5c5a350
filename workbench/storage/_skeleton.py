"""The skeletons of a replay's final requests, made step by step at the cost of what each request
adds: consecutive requests of a replay share their leading message and mark objects (the engine
extends one list of parts while the history only grows), so only what follows the shared prefix
is looked at, turned into part ids and mark lists, and compared with the previous request.

A request's skeleton is its message part ids (``m``), tool part ids (``t``), marks as plain lists
(``k``: origin, history index, key, marks) and dropped keys (``d``). In a chunk's ``requests``
stream it is stored as ``[n, tail]`` per list (:func:`._chunks.delta`): ``n`` leading items of the
request before it in the chunk, then the rest; the chunk's first request whole (``n`` = 0).
:class:`SkeletonCarry` writes exactly the lines :func:`._chunks.delta` writes for the same
skeletons, without building or comparing whole lists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress, count
from operator import is_not
from typing import Any

from iris.preparation.records import MessageMark, PreparedRequest

__all__ = ["SkeletonCarry", "shared_objects"]


def shared_objects(old: Sequence[object], new: Sequence[object]) -> int:
    """How many leading items ``old`` and ``new`` share as the same objects (a C loop that stops
    at the first difference; nothing is copied)."""
    return next(compress(count(), map(is_not, old, new)), min(len(old), len(new)))


def _shared_values(old: list[Any], start: int, tail: list[Any]) -> int:
    """How many leading items of ``old`` a list ``old[:start] + tail`` shares by value."""
    n, limit = start, min(len(old), start + len(tail))
    while n < limit and old[n] == tail[n - start]:
        n += 1
    return n


class _Carried:
    """One list of the previous request's skeleton and the objects it was made from."""

    __slots__ = ("items", "objects")

    def __init__(self) -> None:
        self.objects: tuple[Any, ...] = ()
        self.items: list[Any] = []

    def step(self, objects: tuple[Any, ...], make: Callable[[Any], Any], whole: bool,
             shared: int | None = None) -> tuple[list[Any], int, list[Any], tuple[Any, ...]]:
        """``([n, tail], k, made, replaced)`` for the list made from ``objects``: ``make`` of the
        objects after the ``k`` shared with the previous request (``shared``, when the request
        says; else compared), the previous request's objects they replace; the carried list
        becomes the new one (changed in place: the stored line is written before the next step
        changes it)."""
        k = shared_objects(self.objects, objects) if shared is None else shared
        made = [make(o) for o in objects[k:]]
        replaced = self.objects[k:]
        items = self.items
        n = _shared_values(items, k, made)
        del items[k:]
        items.extend(made)
        self.objects = objects
        return ([0, items] if whole else [n, made[n - k:]]), k, made, replaced


def _mark(m: MessageMark) -> list[Any]:
    return [m.origin, m.history_index, m.key, list(m.marks)]


def _small(old: list[Any], new: list[Any], whole: bool) -> list[Any]:
    """``[n, tail]`` of a short list (tools, dropped keys) against the previous one."""
    n = 0 if whole else _shared_values(old, 0, new)
    return [n, new[n:]]


Memo = dict[int, tuple[object, int]]
"""``id(obj)`` → ``(obj, part id)``: the objects of the previous request (kept alive by the entry,
so an id is never another object's)."""


class SkeletonCarry:
    """The previous request's skeleton, carried from step to step by a replay's writer.

    ``part_of(obj)`` gives the part id of a message or tool schema (by its body's digest); the
    carry remembers the part id of each object of the previous request, so an object resent
    after a change before it (a trimmed message in the middle of the history) is not serialised
    again, and forgets those no request holds any more."""

    def __init__(self, part_of: Callable[[Any], int]) -> None:
        self._part_of = part_of
        self._messages, self._marks = _Carried(), _Carried()
        self._memo: Memo = {}
        self._tool_memo: Memo = {}
        self._tools: list[int] = []
        self._dropped: list[str] = []

    def _part(self, obj: object, memo: Memo) -> int:
        hit = memo.get(id(obj))
        return hit[1] if hit is not None and hit[0] is obj else self._part_of(obj)

    def step(self, request: PreparedRequest, *, whole: bool) -> dict[str, list[Any]]:
        """The stored form of ``request``'s skeleton: ``[n, tail]`` per list against the previous
        request (``whole``: the chunk's first request, every list whole)."""
        memo = self._memo
        messages, marks = self._messages, self._marks
        shared = request.shared_with(messages.objects, marks.objects)
        m, k, made, replaced = messages.step(
            request.messages, lambda o: self._part(o, memo), whole, shared)
        for o in replaced:
            memo.pop(id(o), None)
        for o, part in zip(request.messages[k:], made, strict=True):
            memo[id(o)] = (o, part)
        tool_memo: Memo = {}
        tools: list[int] = []
        for schema in request.tools:
            part = self._part(schema, self._tool_memo)
            tool_memo[id(schema)] = (schema, part)
            tools.append(part)
        t = _small(self._tools, tools, whole)
        self._tools, self._tool_memo = tools, tool_memo
        kept = marks.step(request.marks, _mark, whole, shared)[0]
        dropped = list(request.dropped)
        d = _small(self._dropped, dropped, whole)
        self._dropped = dropped
        return {"m": m, "t": t, "k": kept, "d": d}
