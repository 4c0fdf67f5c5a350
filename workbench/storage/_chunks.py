"""The stored form of a replay's steps: runs of consecutive steps kept as one row of compressed
streams, so what repeats from one step to the next (stage notes, decisions, the request's message
list) is compressed against the step before it instead of costing a row, a key and an index
entry per step.

A chunk holds :data:`CHUNK_STEPS` steps. Each of its four streams is zlib-compressed
newline-separated JSON, one line per step (per stored request for ``requests``):

* ``steps``: the values of the step's scalar columns (:class:`~workbench.records.StepRow`) and
  whole-request figures, in the order of ``migrations.STEP_COLUMNS`` (read for every step when a
  replay opens);
* ``marks``: ``[step, [[stage, position, kind, message_index], ...], [[stage, before, after],
  ...]]``: each decision's mark (what decision queries filter on before any record is parsed)
  and each stage's tokens (what stage savings read);
* ``records``: the whole preparation record, decisions included, without the fields its
  ``steps`` line holds (``migrations.RECORD_FIELDS_IN_STEPS``);
* ``requests``: ``[ref, skeleton]`` of each final request first stored in the chunk, its part
  lists and marks written as the change from the request before it in the chunk.

A stream is flushed (not finished) after each step the evidence sink writes, so a chunk that is
still filling reads back whole at every commit.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["CHUNK_STEPS", "STREAMS", "Chunk", "as_column", "delta", "dumps", "lines",
           "prefix_key", "skeletons", "store_bodies", "undelta"]

CHUNK_STEPS = 32
"""Steps per chunk: enough for consecutive steps to share a compression window; few enough
that reading one step decompresses little."""

STREAMS = ("steps", "marks", "records", "requests")

_SKELETON_PARTS = ("m", "t", "k", "d")


def dumps(value: Any) -> str:
    """Compact JSON of one stream line (non-ASCII kept as is)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def lines(blob: bytes) -> list[str]:
    """The lines of a stored stream (finished, or flushed while its chunk was filling)."""
    text = zlib.decompressobj().decompress(blob).decode()
    return text.split("\n")[:-1] if text else []


def as_column(kind: str, value: Any) -> Any:
    """``value`` as a SQLite column of ``kind`` affinity gives it back (a bool as 0/1, an integral
    float in an INTEGER column as an int, an int in a REAL column as a float): stored figures read
    back exactly as they did from their columns."""
    if value is None:
        return None
    if kind == "INTEGER":
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, float) and value.is_integer() and -2.0 ** 63 <= value < 2.0 ** 63:
            return int(value)
    elif kind == "REAL" and isinstance(value, int):
        return float(value)
    elif kind == "TEXT" and isinstance(value, int):
        return str(int(value))
    elif kind == "TEXT" and isinstance(value, float):
        return _real_text(value)
    return value


def _real_text(value: float) -> str:
    """A REAL as SQLite writes it into a TEXT column (``%!.15g``: always a decimal point)."""
    text = f"{value:.15g}"
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def prefix_key(text: str) -> int:
    """A 64-bit key of ``text`` (a preparation id), for an index that finds its candidates."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


def store_bodies(conn: sqlite3.Connection, bodies: Mapping[bytes, T],
                 pack: Callable[[T], bytes], table: str = "request_bodies") -> dict[bytes, int]:
    """The row number of each request body by its SHA-256 digest, inserting (packed) those the
    store does not hold. A body's row number is the first 8 bytes of its digest, so no second
    index is needed to find it; the digest kept in the row settles the (unlikely) case of two
    bodies sharing those bytes, the later one taking the next free number."""
    found: dict[bytes, int] = {}
    pending = {digest: int.from_bytes(digest[:8], "big", signed=True) for digest in bodies}
    while pending:
        keys = sorted(set(pending.values()))
        held: dict[int, bytes] = {}
        for i in range(0, len(keys), 500):
            batch = keys[i:i + 500]
            held.update(conn.execute(f"SELECT n, hash FROM {table} WHERE n IN "
                                     f"({','.join('?' * len(batch))})", batch).fetchall())
        new: list[tuple[int, bytes, bytes]] = []
        for digest, key in sorted(pending.items()):
            owner = held.get(key)
            if owner is None:
                held[key] = digest
                new.append((key, digest, pack(bodies[digest])))
            if owner is None or owner == digest:
                found[digest] = key
                del pending[digest]
            else:
                pending[digest] = key + 1 if key < 2 ** 63 - 1 else -2 ** 63
        conn.executemany(f"INSERT INTO {table} (n, hash, body) VALUES (?, ?, ?)", new)
    return found


def delta(previous: dict[str, list[Any]] | None, skeleton: dict[str, list[Any]]
          ) -> dict[str, list[Any]]:
    """``skeleton`` as ``[n, tail]`` per part list: the first ``n`` items are the previous
    skeleton's (consecutive requests resend almost the same messages)."""
    out: dict[str, list[Any]] = {}
    for key in _SKELETON_PARTS:
        old, new = (previous or {}).get(key, []), skeleton[key]
        n, limit = 0, min(len(old), len(new))
        while n < limit and old[n] == new[n]:
            n += 1
        out[key] = [n, new[n:]]
    return out


def undelta(previous: dict[str, list[Any]] | None, stored: dict[str, list[Any]]
            ) -> dict[str, list[Any]]:
    """The skeleton :func:`delta` was given."""
    out: dict[str, list[Any]] = {}
    for key in _SKELETON_PARTS:
        n, tail = stored[key]
        out[key] = [*(previous or {}).get(key, [])[:n], *tail]
    return out


def skeletons(request_lines: Sequence[str]) -> Iterator[tuple[str, dict[str, list[Any]]]]:
    """``(ref, skeleton)`` of each line of a chunk's ``requests`` stream, deltas undone."""
    previous: dict[str, list[Any]] | None = None
    for line in request_lines:
        ref, stored = json.loads(line)
        previous = undelta(previous, stored)
        yield ref, previous


class _Stream:
    """One compressed stream being written: lines in, the bytes to store out."""

    def __init__(self) -> None:
        self._z = zlib.compressobj(6)
        self._out: list[bytes] = []
        self.finished = False

    def add(self, line: str) -> None:
        self._out.append(self._z.compress(line.encode() + b"\n"))

    def stored(self, *, final: bool) -> bytes:
        """The stream so far: finished when ``final``, else flushed so it reads back whole."""
        if not self.finished:
            self._out.append(self._z.flush(zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH))
            self.finished = final
        joined = b"".join(self._out)
        self._out = [joined]
        return joined


class Chunk:
    """The chunk being filled: its number, its steps' count and its four streams."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.steps = self.requests = 0
        self.streams = {name: _Stream() for name in STREAMS}
        self._last_skeleton: dict[str, list[Any]] | None = None

    @property
    def empty(self) -> bool:
        return not self.steps and not self.requests

    @property
    def full(self) -> bool:
        return self.steps >= CHUNK_STEPS

    def add_step(self, steps_line: str, marks_line: str, record_line: str) -> None:
        self.steps += 1
        self.streams["steps"].add(steps_line)
        self.streams["marks"].add(marks_line)
        self.streams["records"].add(record_line)

    def add_request(self, ref: str, skeleton: dict[str, list[Any]]) -> None:
        self.requests += 1
        self.streams["requests"].add(dumps([ref, delta(self._last_skeleton, skeleton)]))
        self._last_skeleton = skeleton

    def add_stored_request(self, ref: str, stored: dict[str, list[Any]]) -> None:
        """Add a request's skeleton already in its stored form (what :func:`delta` makes of it
        against the request added before it; whole for the chunk's first request)."""
        self.requests += 1
        self.streams["requests"].add(dumps([ref, stored]))
        self._last_skeleton = None  # a skeleton added after it by add_request is stored whole

    def row(self, *, final: bool) -> dict[str, bytes]:
        return {name: stream.stored(final=final) for name, stream in self.streams.items()}
