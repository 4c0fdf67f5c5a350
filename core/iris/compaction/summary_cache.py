"""The summary cache: answers kept by the hash of the request (R-PREP-7).

The key is the SHA-256 of the endpoint and the canonical JSON request body (model, token limit,
system prompt and input), so an edited template or another model is a new request, and an
unchanged one is never paid for twice. Answers are kept in memory for the whole process (shared by
every client; the least recently used beyond :data:`MEMORY_ENTRIES` are dropped) and, when a
folder is given, as one ``<key>.json`` file each, written atomically. The folder is bounded too:
after a write that takes it over ``max_bytes`` (default :data:`DISK_BYTES`), the least recently
used files (by modification time, which a read refreshes) are deleted until it is at most 90 % of
the cap; ``max_bytes=0`` keeps nothing on disk.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, ClassVar

from ..errors import StorageError
from ..hashing import canonical_json, hex_digest

__all__ = ["DISK_BYTES", "MEMORY_ENTRIES", "SummaryCache", "request_key"]

MEMORY_ENTRIES = 1024
#: The default size cap of the folder of answers (100 MB: tens of thousands of summaries).
DISK_BYTES = 100 * 1000 * 1000


def request_key(base_url: str, body: dict[str, Any]) -> str:
    """The cache key: SHA-256 of the endpoint and the canonical JSON request body."""
    return hex_digest(canonical_json({"endpoint": base_url, "body": body}))


class SummaryCache:
    """Answers by request key: in memory, and as ``<key>.json`` files under ``folder`` when given."""

    _memory: ClassVar[OrderedDict[str, tuple[str, str | None]]] = OrderedDict()
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, folder: str | Path | None = None, *, max_bytes: int = DISK_BYTES) -> None:
        self.folder = Path(folder) if folder is not None and max_bytes > 0 else None
        self.max_bytes = max_bytes

    def get(self, key: str) -> tuple[str, str | None] | None:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
        if hit is not None or self.folder is None:
            return hit
        path = self.folder / f"{key}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            hit = (str(data["text"]), data.get("model"))
            os.utime(path)  # recently used: the last to be evicted
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self._remember(key, hit)
        return hit

    def _remember(self, key: str, answer: tuple[str, str | None]) -> None:
        with self._lock:
            self._memory[key] = answer
            self._memory.move_to_end(key)
            while len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)

    def put(self, key: str, text: str, model: str | None) -> None:
        self._remember(key, (text, model))
        if self.folder is not None:
            from ..safe_files import write_file  # deferred: only a persisted cache writes

            payload = json.dumps({"text": text, "model": model}, ensure_ascii=False)
            try:
                write_file(self.folder / f"{key}.json", payload, root=self.folder.parent)
                self._evict(self.folder)
            except (OSError, StorageError):
                pass  # a cache that cannot be written (or is a symbolic link) costs a later call

    def _evict(self, folder: Path) -> None:
        """Delete the least recently used answers while the folder is over its cap (to 90 % of it,
        so that not every later write scans again)."""
        entries: list[tuple[float, int, Path]] = []
        for path in folder.glob("*.json"):
            try:
                stat = path.stat()
            except OSError:
                continue  # deleted meanwhile by another process
            entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return
        for _, size, path in sorted(entries, key=lambda e: e[0]):
            if total <= self.max_bytes * 0.9:
                break
            path.unlink(missing_ok=True)
            total -= size

    @classmethod
    def clear_memory(cls) -> None:
        with cls._lock:
            cls._memory.clear()
