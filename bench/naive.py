"""The naive replay the replay benchmark is compared with.

It runs the same pipeline on the same session with the same configuration, so it takes the same
decisions and applies the same compactions, but without any of the engine's incremental work:

* no token cache: every text is encoded with tiktoken each time it is counted, message counts are
  not kept per message object, and the whole final request is encoded again at every step;
* no reduction state reuse: the reduction engine gets its carried state (frozen renderings, which
  are part of the *semantics*: R-RED-9) but an empty cache, so it rescans every message and
  recomputes every fact, verdict and rendering from scratch at every step.

The patches live only inside :func:`naive_mode` and are undone on exit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import iris.replay as replay_module
from iris.preparation.state import PipelineSettings, TokenCache
from iris.session import Message
from iris.tokens import TokenEstimator


class NaiveEstimator(TokenEstimator):
    """Encodes every text on every call (the cache is never read)."""

    def count(self, text: str) -> int:
        self.encode_calls += 1
        return len(self._encoding.encode_ordinary(text)) if text else 0

    def count_many(self, texts: Iterable[str]) -> list[int]:
        return [self.count(t) for t in texts]


class NaiveTokenCache(TokenCache):
    """Counts a message again every time it is asked for."""

    def message(self, message: Message) -> int:
        return self.estimator.message_tokens(message)


@contextmanager
def naive_mode() -> Iterator[None]:
    """Within the block, ``iris.replay.replay`` runs without caches or incremental state."""
    real_settings, real_prepare, real_cache = (replay_module.PipelineSettings, replay_module.prepare,
                                               replay_module.TokenCache)

    def prepare_and_recount(state, settings, meta, **kw):
        outcome = real_prepare(state, settings, meta, **kw)
        if outcome.request is not None:  # the whole request, encoded again
            settings.cache.estimator.request_tokens(outcome.request.messages)
        return outcome

    # every step from scratch: same decisions carried, no cached scan/facts/verdicts/renderings
    # (the runner passes ``incremental`` itself, from its options: a default would be overridden)
    def from_scratch(*args, **kw) -> PipelineSettings:
        return PipelineSettings(*args, **{**kw, "incremental": False})

    replay_module.PipelineSettings = from_scratch
    replay_module.prepare = prepare_and_recount
    replay_module.TokenCache = NaiveTokenCache
    try:
        yield
    finally:
        replay_module.PipelineSettings, replay_module.prepare = real_settings, real_prepare
        replay_module.TokenCache = real_cache
