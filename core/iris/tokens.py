"""Local token estimates with tiktoken, offline, cached by content (R-TOK-1, R-TOK-2).

The default encoding is ``cl100k_base_offline``: OpenAI's cl100k_base vocabulary, shipped inside
this package (``iris.vocabulary``, origin and licence in ``iris/data/NOTICE.md``), so nothing is
ever downloaded; its decoded rank table is kept in the user's cache folder to start faster.
Encodings that tiktoken would fetch from the network are refused with a clear error.

Counts are cached by text in a least-recently-used table bounded by the characters it holds
(``max_cached_chars``, default :data:`DEFAULT_CACHE_CHARS`), so a long-lived process (the app, a
notebook, a batch worker) does not keep every text it ever counted alive.

Whole-request framing (documented in the README, "Token estimates"):

* every message costs its content tokens plus ``MESSAGE_OVERHEAD`` (role and separators, as in
  OpenAI's chat format accounting: 3 tokens per message plus 1 for the role);
* every tool call block adds ``TOOL_CALL_OVERHEAD`` (id and type framing);
* every tool schema costs the tokens of its canonical JSON plus ``TOOL_SCHEMA_OVERHEAD``;
* a request adds ``REQUEST_OVERHEAD`` (the assistant reply priming).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import ConfigError
from .session import Message, block_text

__all__ = [
    "DEFAULT_CACHE_CHARS",
    "DEFAULT_ENCODING",
    "MESSAGE_OVERHEAD",
    "OFFLINE_ENCODINGS",
    "REQUEST_OVERHEAD",
    "TOOL_CALL_OVERHEAD",
    "TOOL_SCHEMA_OVERHEAD",
    "TokenEstimator",
    "default_estimator",
]

DEFAULT_ENCODING = "cl100k_base_offline"
MESSAGE_OVERHEAD = 4
TOOL_CALL_OVERHEAD = 3
TOOL_SCHEMA_OVERHEAD = 8
REQUEST_OVERHEAD = 3

#: Texts longer than twice this many characters are encoded in pieces of about this size.
CHUNK_CHARS = 1 << 18

#: Characters of text the count cache may hold before it drops the least recently used counts.
DEFAULT_CACHE_CHARS = 64 << 20

#: Encodings whose data ships inside an installed package (never downloaded).
OFFLINE_ENCODINGS = ("cl100k_base_offline",)


class TokenEstimator:
    """Counts tokens of texts, messages and whole requests; each distinct text is encoded once."""

    def __init__(self, encoding: str = DEFAULT_ENCODING, *,
                 max_cached_chars: int = DEFAULT_CACHE_CHARS) -> None:
        if encoding not in OFFLINE_ENCODINGS:
            raise ConfigError(
                f"encoding {encoding!r} is not available offline; choose one of {OFFLINE_ENCODINGS}",
                field="tokens.encoding")
        from .vocabulary import cl100k_encoding

        self.encoding_name = encoding
        self._encoding = cl100k_encoding()
        self.max_cached_chars = max_cached_chars
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cached_chars = 0
        self._lock = threading.Lock()
        self.encode_calls = 0
        """How many texts were really encoded (cache misses); tests and benchmarks read it."""

    def count(self, text: str) -> int:
        """Tokens of one text (cached by content)."""
        if not text:
            return 0
        cached = self._cache.get(text)
        if cached is not None:
            try:
                self._cache.move_to_end(text)
            except KeyError:  # evicted by another thread in between
                pass
            return cached
        n = self._encode_count(text)
        with self._lock:
            self._remember(text, n)
            self.encode_calls += 1
        return n

    def _remember(self, text: str, n: int) -> None:
        """Store a count (lock held), dropping the least recently used ones beyond the bound."""
        if text in self._cache:
            return
        self._cache[text] = n
        self._cached_chars += len(text)
        while self._cached_chars > self.max_cached_chars and len(self._cache) > 1:
            old, _ = self._cache.popitem(last=False)
            self._cached_chars -= len(old)

    def clear(self) -> None:
        """Forget every cached count."""
        with self._lock:
            self._cache.clear()
            self._cached_chars = 0

    def _encode_count(self, text: str) -> int:
        """Tokens of ``text``; a huge text is encoded piece by piece, cut after a newline where
        possible, so a 50 MB tool output never holds millions of token ids in memory at once."""
        if len(text) <= 2 * CHUNK_CHARS:
            return len(self._encoding.encode_ordinary(text))
        total, start = 0, 0
        while start < len(text):
            end = min(start + CHUNK_CHARS, len(text))
            if end < len(text):
                end = text.rfind("\n", start + CHUNK_CHARS // 2, end) + 1 or end
            total += len(self._encoding.encode_ordinary(text[start:end]))
            start = end
        return total

    def count_many(self, texts: Iterable[str]) -> list[int]:
        """Counts for many texts, encoding the misses in one batch."""
        texts = list(texts)
        misses = [t for t in dict.fromkeys(texts) if t and t not in self._cache]
        for t in [t for t in misses if len(t) > 2 * CHUNK_CHARS]:
            self.count(t)  # huge texts take the bounded-memory path
        misses = [t for t in misses if len(t) <= 2 * CHUNK_CHARS]
        counts: dict[str, int] = {}
        if misses:
            encoded = self._encoding.encode_ordinary_batch(misses)
            counts = {t: len(toks) for t, toks in zip(misses, encoded)}
            with self._lock:
                for t, n in counts.items():
                    self._remember(t, n)
                self.encode_calls += len(misses)
        return [counts[t] if t in counts else self.count(t) for t in texts]

    def message_tokens(self, message: Message) -> int:
        """Content tokens of a message plus its framing overhead."""
        total = MESSAGE_OVERHEAD
        for block in message.content:
            total += self.count(block_text(block))
            if block.type == "tool_call":
                total += TOOL_CALL_OVERHEAD
        return total

    def tool_schema_tokens(self, schema: Mapping[str, Any]) -> int:
        return self.count(json.dumps(schema, sort_keys=True, ensure_ascii=False)) + TOOL_SCHEMA_OVERHEAD

    def request_tokens(self, messages: Sequence[Message],
                       tools: Sequence[Mapping[str, Any]] = ()) -> int:
        """Estimate of a whole request: messages, tool schemas and framing (R-TOK-2)."""
        return (REQUEST_OVERHEAD + sum(self.message_tokens(m) for m in messages)
                + sum(self.tool_schema_tokens(t) for t in tools))

    @property
    def cache_size(self) -> int:
        """Number of cached counts."""
        return len(self._cache)

    @property
    def cached_chars(self) -> int:
        """Characters of text the cache holds (at most ``max_cached_chars`` plus one text)."""
        return self._cached_chars


_default: TokenEstimator | None = None
_default_lock = threading.Lock()


def default_estimator() -> TokenEstimator:
    """The process-wide estimator on the default encoding (shares one cache)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = TokenEstimator()
        return _default
