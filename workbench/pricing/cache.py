"""A prompt-cache model for replayed requests: which tokens of each request a provider would read
from its cache and which it would have to write (or take as uncached input).

Rules (docs/pricing.md):

- The part of a request that is unchanged since the previous request of the same model (same
  tool schemas, same leading messages) is a **cache read** (the first request of a model reads
  what its recorded request read: a system prefix cached by the agent's earlier sessions). What follows the first changed
  message is **written** (or, for a provider that caches on its own, sent as input): a
  reduction that rewrites an old tool output invalidates the cache from that message on, and a
  compaction invalidates everything after the system prefix (tools, system prompt and whatever
  leading messages it kept).
- A step whose recorded request read nothing from the cache found it gone (expired): the
  replayed request reads nothing either.
- The replay writes at the TTL the recording wrote at (a Claude Code main agent writes 1-hour
  entries, its sub-agents 5-minute ones); 5 minutes where the recording does not say.

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
from typing import Any

from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.tokens import TokenEstimator

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


def _calibrated(preparation: Any, local: int) -> int:
    return round((getattr(preparation, "calibration_ratio", None) or 1.0) * local)


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


@dataclass(frozen=True)
class CacheSplit:
    """How one replayed request meets the cache (whole-request tokens)."""

    read: int
    written: int
    read_if_kept: int
    """What it would have read had no rewrite invalidated the cache."""


def _read(req: CacheRequest, kept: int) -> int:
    if req.prefix is None:  # body not kept: only a compaction is known to rewrite
        return min(req.system_tokens, kept) if req.compaction else kept
    if req.prefix.tools_changed:
        return 0
    if req.prefix.kept_all:
        return kept
    return max(0, min(kept, req.whole - req.prefix.tail))


def cache_splits(requests: Sequence[CacheRequest]) -> list[CacheSplit]:
    """The cache split of every request, in step order, each against the previous request of
    its model. The first request of a model reads what its recorded request read, up to its
    own size: a prompt prefix (system prompt, tools) that the agent's earlier sessions left
    in the cache."""
    out: list[CacheSplit] = []
    last: dict[str | None, CacheRequest] = {}
    for req in requests:
        prev = last.get(req.model)
        if req.recorded_read == 0:
            kept = read = 0
        elif prev is None:
            kept = read = min(req.recorded_read or 0, req.whole)
        else:
            kept = min(prev.whole, req.whole)
            read = _read(req, kept)
        out.append(CacheSplit(read=read, written=req.whole - read, read_if_kept=kept))
        last[req.model] = req
    return out
