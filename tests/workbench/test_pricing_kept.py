"""One call's list price is kept once computed (R-TOK-6): the same usage priced again gives the
library's own figure without asking it again, and a different moment or usage is priced anew."""

from __future__ import annotations

from datetime import UTC, datetime

import genai_prices

from workbench.pricing import prices as price_data
from workbench.pricing.prices import list_price, resolve

OPUS = "claude-opus-4-6"


def _library_price(model: str, when: datetime | None, counts: dict[str, int]):
    found = resolve(model)
    assert found is not None
    usage = genai_prices.Usage(**counts)
    return genai_prices.calc_price(usage, found.ref, provider_id=found.provider_id,
                                   genai_request_timestamp=when).total_price


def test_r_tok_6_repeated_price_is_the_library_price_computed_once():
    """R-TOK-6: pricing the same call twice returns the library's price, the second time from
    what was kept; another usage or another moment is a new computation."""
    price_data._call_price.cache_clear()
    counts = {"input_tokens": 123_457, "output_tokens": 2_345, "cache_read_tokens": 100_000}
    first = list_price(OPUS, input_tokens=123_457, output_tokens=2_345, cache_read_tokens=100_000)
    again = list_price(OPUS, input_tokens=123_457, output_tokens=2_345, cache_read_tokens=100_000)
    assert first is not None
    assert first == again == _library_price(OPUS, None, counts)
    info = price_data._call_price.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    when = datetime(2026, 6, 1, tzinfo=UTC)
    at = list_price(OPUS, when=when, input_tokens=123_457, output_tokens=2_345,
                    cache_read_tokens=100_000)
    assert at == _library_price(OPUS, when, counts)
    other = list_price(OPUS, input_tokens=1_000, output_tokens=10)
    assert other is not None and other < first
    assert price_data._call_price.cache_info().misses == 3
