"""Which leading items a tuple shares with the tuple it was made from.

A replay makes its histories and requests step after step from the previous ones: the durable
history is the previous one plus the new messages, a stage's output is its previous output with a
few parts replaced. Whoever makes such a tuple knows how many leading items it took over (the same
objects) and says so with :func:`note`; :func:`shared_prefix` then starts comparing two tuples
where that knowledge ends instead of at the first item, so a history that only grew costs no pass
over it. Without a note (or once it was forgotten) the comparison is the full one; the answer is
the same either way.

Only the latest notes are kept (a step makes a few): each holds both tuples, so an entry found by
a tuple's ``id`` is checked to be that very tuple, and nothing is kept alive for long.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_
from typing import Any

__all__ = ["forget", "known", "note", "shared_prefix"]

_LIMIT = 16
"""How many notes are kept (the oldest is dropped first)."""
_DEPTH = 6
"""How many notes one comparison follows back (new → what it was made from → …)."""

_notes: dict[int, tuple[Sequence[Any], Sequence[Any], int]] = {}
"""``id(new)`` → ``(new, base, k)``: ``new[:k]`` are the objects ``base[:k]``."""


def note(new: Sequence[Any], base: Sequence[Any], shared: int) -> None:
    """``new`` starts with the first ``shared`` objects of ``base`` (the same objects)."""
    if new is base:
        return
    _notes[id(new)] = (new, base, min(shared, len(new), len(base)))
    while len(_notes) > _LIMIT:
        try:
            del _notes[next(iter(_notes))]
        except (KeyError, RuntimeError, StopIteration):  # another thread changed the notes
            break


def forget() -> None:
    """Drop every note (what they hold is no longer kept alive)."""
    _notes.clear()


def known(old: Sequence[Any], new: Sequence[Any]) -> int:
    """A count of leading items ``new`` is known to share with ``old`` (0: nothing known)."""
    bound, cur = len(new), new
    for _ in range(_DEPTH):
        if cur is old:
            return min(bound, len(old))
        entry = _notes.get(id(cur))
        if entry is None or entry[0] is not cur:
            return 0
        bound = min(bound, entry[2])
        cur = entry[1]
    return 0


def shared_prefix(old: Sequence[Any], new: Sequence[Any]) -> int:
    """How many leading items ``old`` and ``new`` share (the same objects). What the notes say
    is taken as known; the rest is compared in slices (a C loop each), halving the range that
    holds the first difference: a history that only grew costs one pass at most."""
    n = min(len(old), len(new))
    lo = min(known(old, new), n)
    if lo == n or all(map(is_, old[lo:n], new[lo:n])):
        return n
    hi = n  # the first difference is in [lo, hi)
    while hi - lo > 8:
        mid = (lo + hi) // 2
        if all(map(is_, old[lo:mid], new[lo:mid])):
            lo = mid
        else:
            hi = mid
    while lo < hi and old[lo] is new[lo]:
        lo += 1
    return lo
