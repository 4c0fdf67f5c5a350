"""An immutable mapping that grows by small additions without copying what it grows from.

The reduction state keeps every rendering it froze, by call id, for the whole run (a compaction
does not forget them), and each request adds a few. Copying the whole map at every request would
make a step's cost grow with the session; a :class:`LayeredMap` shares the earlier entries and
copies only the recent additions, folding them into a new shared base once they are about the
square root of its size (so both the per-request copy and the folds cost O(√n) per addition).
No version is ever changed after it is made: an earlier state keeps seeing exactly its entries.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from math import isqrt
from typing import TypeVar

__all__ = ["LayeredMap", "with_added"]

K = TypeVar("K")
V = TypeVar("V")

_MIN_TOP = 32
"""Additions kept apart before any fold (a small map is simply copied)."""


class LayeredMap(Mapping[K, V]):
    """A read-only mapping: a shared base plus this version's recent additions (``top`` wins)."""

    __slots__ = ("_base", "_len", "_top")

    def __init__(self, base: Mapping[K, V], top: dict[K, V]) -> None:
        self._base, self._top = base, top
        self._len = len(base) + sum(1 for k in top if k not in base)

    def __getitem__(self, key: K) -> V:
        top = self._top
        if key in top:
            return top[key]
        return self._base[key]

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        top = self._top
        if key in top:
            return top[key]
        return self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._top or key in self._base

    def __iter__(self) -> Iterator[K]:  # a dict's order: a replaced key keeps its place
        base = self._base
        yield from base
        yield from (k for k in self._top if k not in base)

    def __len__(self) -> int:
        return self._len

    def __repr__(self) -> str:
        return f"LayeredMap({dict(self)!r})"


def with_added(old: Mapping[K, V], added: dict[K, V]) -> Mapping[K, V]:
    """``{**old, **added}`` as a new read-only mapping (``old`` itself when nothing is added);
    neither ``old`` nor ``added`` is changed or kept writable (the caller gives ``added`` up)."""
    if not added:
        return old
    if isinstance(old, LayeredMap):
        base, top = old._base, {**old._top, **added}  # pyright: ignore[reportPrivateUsage]
    else:
        base, top = old, added
    if len(top) > max(_MIN_TOP, isqrt(len(base))):
        return LayeredMap({**base, **top}, {})
    return LayeredMap(base, top)
