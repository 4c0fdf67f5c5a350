"""The store's one cache: a bounded, thread-safe LRU of values derived from stored rows.

Keys carry what makes a value stale (a replay's save time, a session's content hash), so a replay
saved again by another process is read afresh while switching pages reuses what was read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from cachetools import LRUCache

__all__ = ["StoreCache"]

T = TypeVar("T")


class StoreCache:
    """At most ``maxsize`` values, least recently used dropped first (``cachetools.LRUCache``,
    behind a lock: the app's script threads share one store)."""

    def __init__(self, maxsize: int = 64) -> None:
        self.maxsize = maxsize
        self._values: LRUCache[Hashable, Any] = LRUCache(maxsize=maxsize)
        self._lock = threading.Lock()

    def get_or_make(self, key: Hashable, make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                return self._values[key]  # a read marks it recently used
        value = make()  # outside the lock: making may read the store (and use the cache)
        with self._lock:
            self._values[key] = value
        return value

    def forget(self, owner: Hashable) -> None:
        """Drop every value whose key starts with ``owner`` (a replay deleted or saved again)."""
        with self._lock:
            for key in [k for k in self._values if _owned_by(k, owner)]:
                del self._values[key]

    def __len__(self) -> int:
        return len(self._values)


def _owned_by(key: Hashable, owner: Hashable) -> bool:
    """``key`` is a tuple whose first item is ``owner``."""
    return isinstance(key, tuple) and cast("tuple[object, ...]", key)[:1] == (owner,)
