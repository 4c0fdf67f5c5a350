"""A prompt-cache model for replayed requests: which tokens of each request a provider would read
from its cache and which it would have to write (or take as uncached input).

Rules (docs/pricing.md):

- A request the agent sent (no earlier change, the same messages) reads and writes what its
  recorded usage says.
- Otherwise the cache holds entries at breakpoints: the system prefix the first request of a
  model read (what the agent's earlier sessions left there; it stays warm) and the end of each
  earlier request of the same model, within the provider's lookback (:data:`LOOKBACK`). A request
  reads the longest live entry it still starts with and writes the rest (or, for a provider that
  caches on its own, sends it as input): a request that only grew reads all of the previous one,
  a reduction that rewrites an old tool output reads up to the breakpoint before it, a compaction
  reads the system prefix.
- An entry unused for longer than the TTL the agent wrote at (5 minutes or 1 hour, from its
  usage), judged from the recorded timestamps, has expired.
- Where the recorded request found the cache broken (it read nothing, or its history only grew
  and it read much less than the previous request cached), the replayed one reads no more.

For each step the model also gives the tokens it would have read **had no rewrite invalidated
the cache** (every request reading all of the previous one it still holds), so the cost of the
replay's cache misses can be told apart from what its smaller requests save.

Finding the shared prefix is cheap: consecutive requests share their unchanged message objects
(stored replays their part ids), and only a request that diverges before the end of the
previous one has its tail counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.tokens import TokenEstimator

from .billing import Ttl

__all__ = ["CacheRequest", "CacheSplit", "Prefix", "PrefixSink", "cache_splits", "common_prefix",
           "prefix_of"]


@dataclass(frozen=True)
class Prefix:
    """How a request starts compared with the previous one."""

    kept_all: bool
    """It begins with every message of the previous request (it only grew)."""
    tail: int = 0
    """Whole-request tokens from its first changed message on (when not ``kept_all``)."""
    tools_changed: bool = False


def common_prefix(before: Sequence[Any], after: Sequence[Any]) -> int:
    """How many leading parts two requests share (identity first, then equality)."""
    n = 0
    for a, b in zip(before, after, strict=False):
        if a is not b and a != b:
            break
        n += 1
    return n


def prefix_of(before: tuple[Sequence[Any], Any] | None, after: tuple[Sequence[Any], Any],
              tail: Callable[[int], int]) -> Prefix:
    """The :class:`Prefix` of request ``after`` (its parts and tools) against ``before`` (None:
    no previous request). ``tail(start)`` gives the whole-request tokens of ``after``'s parts
    from ``start`` on; it is called only for a request that diverges early."""
    if before is None:
        return Prefix(kept_all=False, tail=tail(0))
    if before[1] != after[1]:
        return Prefix(kept_all=False, tools_changed=True)
    shared = common_prefix(before[0], after[0])
    if shared == len(before[0]):
        return Prefix(kept_all=True)
    return Prefix(kept_all=False, tail=tail(shared))


def _calibrated(preparation: ContextPreparation, local: int) -> int:
    return round((preparation.calibration_ratio or 1.0) * local)


class PrefixSink:
    """An evidence sink that keeps only each step's :class:`Prefix`, against the previous request
    of the same model (a provider caches per model). It holds one request per model and no
    other, so a replay run with ``keep_bodies=False`` can still be priced with the cache model
    (the batch runner). ``model_of(step_index)`` names the model that answers a step."""

    def __init__(self, estimator: TokenEstimator,
                 model_of: Callable[[int], str | None] = lambda _: None) -> None:
        self.estimator = estimator
        self.model_of = model_of
        self.prefixes: dict[int, Prefix] = {}
        self._previous: dict[str | None, tuple[Sequence[Any], Any]] = {}

    def save(self, preparation: ContextPreparation, request: PreparedRequest | None) -> None:
        if request is None or preparation.phase != "ready":
            return
        parts, model = request.messages, self.model_of(preparation.step_index)
        self.prefixes[preparation.step_index] = prefix_of(
            self._previous.get(model), (parts, request.tools), lambda start: _calibrated(
                preparation, sum(self.estimator.message_tokens(m) for m in parts[start:])))
        self._previous[model] = (parts, request.tools)


@dataclass(frozen=True)
class CacheRequest:
    """One replayed request as the prompt cache sees it."""

    model: str | None
    whole: int
    """Its whole-request tokens (what the provider would count as the prompt)."""
    prefix: Prefix | None
    """How it starts compared with the previous request; None when its body was not kept."""
    compaction: bool = False
    """The step applied a compaction (read only when the body was not kept)."""
    system_tokens: int = 0
    """Tokens that lead every request and survive a compaction: system prompt, tool schemas,
    framing (the unrecorded overhead); read only when the body was not kept."""
    recorded_read: int | None = None
    """Cache-read tokens of the recorded request at the same step (None: no trusted usage)."""
    recorded_written: int | None = None
    """Cache-write tokens of the recorded request at the same step (None: no trusted usage)."""
    recorded_prompt: int | None = None
    """Prompt tokens the provider counted for the recorded request (None: no trusted usage)."""
    as_recorded: bool = False
    """The request is the one the agent sent: it reads and writes what the recording did."""
    when: datetime | None = None
    """When it was sent (the recorded response's time; None: unknown, nothing expires)."""
    ttl: Ttl = "5m"
    """The lifetime of the cache entries it writes and refreshes."""


@dataclass(frozen=True)
class CacheSplit:
    """How one replayed request meets the cache (whole-request tokens)."""

    read: int
    written: int
    read_if_kept: int
    """What it would have read had no rewrite invalidated the cache."""


TTL_SECONDS: dict[Ttl, int] = {"5m": 300, "1h": 3600}
BREAK_SHARE = 0.9
"""A recorded request that kept its whole history (its prompt did not shrink) but read less than
this share of what the previous recorded request cached found the cache broken (expired or
evicted) for a reason the transcript does not show: the replayed request reads no more than it."""


@dataclass
class _Entry:
    """A cached prefix: it ends at a breakpoint ``end`` tokens into the request."""

    end: int
    used: datetime | None
    warm: bool = False
    """Kept in the cache by the agent's other requests (the system prefix the first request of
    a model read): it does not expire with this session's pauses."""


@dataclass
class _Chain:
    """The cache of one model: its live entries and the last request."""

    entries: list[_Entry]
    last: CacheRequest


LOOKBACK = 20
"""How many of the latest requests' entries a request can still hit. The provider looks for a
cached prefix only within about 20 content blocks before a breakpoint, and every request adds at
least a response and a tool result or user message, so an entry older than this is out of reach
(the warm system prefix is reached through its own breakpoint). It also keeps the model linear in
the number of requests."""


def _recent(entries: list[_Entry]) -> list[_Entry]:
    """The warm entries and the latest :data:`LOOKBACK` others, in order."""
    if len(entries) <= LOOKBACK + 1:
        return entries
    cold = [e for e in entries if not e.warm]
    return [e for e in entries if e.warm] + cold[-LOOKBACK:]


def _shared(req: CacheRequest, prev: CacheRequest) -> tuple[int, int]:
    """``(shared, kept)``: the tokens ``req`` shares with ``prev`` from the start, and what it
    would share had nothing been rewritten."""
    kept = min(prev.whole, req.whole)
    if req.prefix is None:  # body not kept: only a compaction is known to rewrite
        return (min(req.system_tokens, kept) if req.compaction else kept), kept
    if req.prefix.tools_changed:
        return 0, kept
    if req.prefix.kept_all:
        return kept, kept
    return max(0, min(kept, req.whole - req.prefix.tail)), kept


def _expired(entry: _Entry, when: datetime | None, ttl: Ttl) -> bool:
    if entry.warm or entry.used is None or when is None:
        return False
    return (when - entry.used).total_seconds() > TTL_SECONDS[ttl]


def _hit(entries: Sequence[_Entry], upto: int) -> _Entry | None:
    """The longest cached prefix that ends at or before ``upto``."""
    fits = [e for e in entries if e.end <= upto]
    return max(fits, key=lambda e: e.end) if fits else None


def _broken(req: CacheRequest, prev: CacheRequest) -> bool:
    """The recorded request found the cache broken although its history only grew."""
    if req.recorded_read is None or prev.recorded_read is None or req.recorded_prompt is None:
        return False
    cached = prev.recorded_read + (prev.recorded_written or 0)
    grew = prev.recorded_prompt is None or req.recorded_prompt >= prev.recorded_prompt
    return grew and req.recorded_read < BREAK_SHARE * cached


def _first(req: CacheRequest) -> tuple[CacheSplit, list[_Entry]]:
    """The first request of a model reads what its recorded request read, up to its own size:
    a prompt prefix (system prompt, tools) that the agent's earlier sessions left in the cache."""
    if req.as_recorded and req.recorded_read is not None:
        read = req.recorded_read
        written = req.recorded_written if req.recorded_written is not None else req.whole - read
    else:
        read = min(req.recorded_read or 0, req.whole)
        written = req.whole - read
    entries = [_Entry(read, req.when, warm=True)] if read else []
    return CacheSplit(read=read, written=written, read_if_kept=read), entries


def _next(req: CacheRequest, chain: _Chain) -> tuple[CacheSplit, list[_Entry]]:
    prev = chain.last
    shared, kept = _shared(req, prev)
    live = [e for e in chain.entries if not _expired(e, req.when, req.ttl)]
    # the previous request's entry (at its end) still live: what is kept of it is read whole
    prev_live = any(e.end >= prev.whole for e in live)
    hit, hit_if_kept = _hit(live, shared), _hit(live, kept)
    read_if_kept = kept if prev_live else (hit_if_kept.end if hit_if_kept else 0)
    read = read_if_kept if shared == kept else (hit.end if hit else 0)
    broken = req.recorded_read == 0 or _broken(req, prev)
    if broken:
        cap = req.recorded_read or 0
        read, read_if_kept = min(read, cap), min(read_if_kept, cap)
    if req.as_recorded and req.recorded_read is not None:
        read = read_if_kept = req.recorded_read
        written = req.recorded_written if req.recorded_written is not None else req.whole - read
    else:
        written = req.whole - read
    for e in live:
        if e.end <= read:
            e.used = req.when if req.when is not None else e.used
    kept_entries = [e for e in live if e.end <= (min(shared, read) if broken else shared)]
    return CacheSplit(read=read, written=written, read_if_kept=read_if_kept), kept_entries


def cache_splits(requests: Sequence[CacheRequest]) -> list[CacheSplit]:
    """The cache split of every request, in step order, each against the cache its model's
    earlier requests left (docs/pricing.md):

    - a request the agent sent as recorded reads and writes what the recording did;
    - otherwise it reads the longest cached prefix it still starts with: caches sit at
      breakpoints (the system prefix and the end of each earlier request), so a rewrite inside
      the history reads up to the breakpoint before it, and everything after is written;
    - an entry not used for longer than the TTL the request writes at has expired;
    - where the recorded request found the cache broken (it read nothing, or its history only
      grew and it read much less than the previous request cached), the replayed one reads no
      more than the recorded one.
    """
    out: list[CacheSplit] = []
    chains: dict[str | None, _Chain] = {}
    for req in requests:
        chain = chains.get(req.model)
        if chain is None:
            split, entries = _first(req)
        else:
            split, entries = _next(req, chain)
        if req.whole > 0 and (not entries or entries[-1].end != req.whole):
            entries.append(_Entry(req.whole, req.when))
        chains[req.model] = _Chain(_recent(entries), req)
        out.append(split)
    return out
