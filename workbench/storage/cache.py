"""The store's one cache: a bounded, thread-safe LRU of values derived from stored rows.

Keys carry what makes a value stale (a replay's save time, a session's content hash), so a replay
saved again by another process is read afresh while switching pages reuses what was read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

__all__ = ["StoreCache"]

T = TypeVar("T")


class StoreCache:
    """At most ``maxsize`` values, least recently used dropped first."""

    def __init__(self, maxsize: int = 64) -> None:
        self.maxsize = maxsize
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_make(self, key: Hashable, make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = make()  # outside the lock: making may read the store (and use the cache)
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.maxsize:
                self._values.popitem(last=False)
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
