"""The price list: the maintained ``genai-prices`` library and its bundled price data (nothing is
fetched at run time), with what a user needs to judge a price: which release and how recent its
data is, and which of its models a transcript's model id (also provider-prefixed, as litellm
writes it: ``mistral/mistral-small-latest``) resolves to.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

__all__ = ["Resolved", "list_price", "prices_as_of", "resolve", "source"]


def _library() -> Any:
    import genai_prices

    return genai_prices


@lru_cache(maxsize=1)
def source() -> str:
    """The library release whose bundled data prices everything, e.g. ``genai-prices 0.2.3``."""
    return f"genai-prices {_library().__version__}"


@lru_cache(maxsize=1)
def prices_as_of() -> str | None:
    """How recent the bundled price data is: the date (ISO) of the newest price change it records
    that is in force today. The library states no snapshot date of its own; a price list whose
    newest change is months old is a stale list, whatever today's date is. Changes it announces
    for a later date are not counted."""
    from genai_prices.data import providers

    today = datetime.now(UTC).date()
    newest: date | None = None
    for provider in providers:
        for model in provider.models:
            prices = model.prices if isinstance(model.prices, list) else []
            for conditional in prices:
                start = getattr(conditional.constraint, "start_date", None)
                if isinstance(start, datetime):
                    start = start.date()
                if isinstance(start, date) and start <= today and (newest is None or start > newest):
                    newest = start
    return newest.isoformat() if newest else None


@dataclass(frozen=True)
class Resolved:
    """A transcript's model id as the library knows it."""

    ref: str
    """The id passed to the library (a provider prefix removed when that was needed)."""
    provider_id: str | None
    name: str
    """Provider and model name, e.g. ``Anthropic Claude Opus 4.6``."""


def _lookup(ref: str, provider_id: str | None) -> Resolved | None:
    lib = _library()
    try:
        found = lib.calc_price(lib.Usage(input_tokens=1, output_tokens=1), ref,
                               provider_id=provider_id)
    except LookupError:
        return None
    return Resolved(ref, provider_id, f"{found.provider.name} {found.model.name or found.model.id}")


@lru_cache(maxsize=256)
def resolve(model: str | None) -> Resolved | None:
    """The library's model for ``model``, None when it lists no price for it.

    Tried in turn: the id as written; a provider-prefixed id (``anthropic/claude-…``,
    ``deepseek/deepseek-reasoner``) through the library's litellm rule, which takes the prefix
    as the provider; the last path segment alone (``openrouter/anthropic/claude-…``)."""
    if not model or not model.strip():
        return None
    found = _lookup(model, None)
    if found is None and "/" in model:
        found = _lookup(model, "litellm") or _lookup(model.rsplit("/", 1)[-1], None)
    return found


def list_price(model: str | None, *, input_tokens: int, output_tokens: int = 0,
               cache_read_tokens: int = 0, cache_write_5m_tokens: int = 0,
               cache_write_1h_tokens: int = 0, when: datetime | None = None) -> Decimal | None:
    """USD list price of one call, None when the model has no known price.

    ``input_tokens`` is the whole prompt, cached tokens included. Cache writes are priced at the
    model's 5-minute and 1-hour write rates; a model whose price has no write rate (OpenAI,
    DeepSeek: the provider caches on its own) charges them as input. Price one call at a time:
    long-context tiers apply to one request's prompt, not to a sum of them."""
    found = resolve(model)
    if found is None:
        return None
    # a prompt is never smaller than its cached parts (the library refuses such usage)
    input_tokens = max(input_tokens,
                       cache_read_tokens + cache_write_5m_tokens + cache_write_1h_tokens)
    return _call_price(found.ref, found.provider_id, input_tokens, output_tokens,
                       cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, when)


@lru_cache(maxsize=16384)
def _call_price(ref: str, provider_id: str | None, input_tokens: int, output_tokens: int,
                cache_read_tokens: int, cache_write_5m_tokens: int, cache_write_1h_tokens: int,
                when: datetime | None) -> Decimal:
    """The library's price of one call, kept: the prices are the bundled data's, and a replay's
    cost tables price the same usage several times (the recorded bill, the list price of each
    side; about 0.7 ms a call, 30 % of them repeats on a real session)."""
    lib = _library()
    usage = lib.Usage(input_tokens=input_tokens, output_tokens=output_tokens,
                      cache_read_tokens=cache_read_tokens,
                      cache_write_tokens=cache_write_5m_tokens + cache_write_1h_tokens,
                      cache_write_1h_tokens=cache_write_1h_tokens)
    try:
        return lib.calc_price(usage, ref, provider_id=provider_id,
                              genai_request_timestamp=when).total_price
    except LookupError:  # a model known today may have had no price at ``when``
        return lib.calc_price(usage, ref, provider_id=provider_id).total_price
