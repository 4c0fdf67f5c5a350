"""The recorded session's bill: every response priced as its provider billed it.

A response is priced, in this order:

1. at the **cost the transcript records** for it (mini-swe-agent's ``extra.cost``, an
   OpenTelemetry cost attribute: :attr:`iris.session.Usage.cost_usd`), which is what the agent
   was charged and beats any list price (a recorded 0 is not a cost: litellm writes 0 for a
   model it cannot price);
2. else at the **list price** (:mod:`workbench.pricing.prices`) of its model at the time it was
   recorded, with its cache reads at the read rate and its cache writes at the 5-minute or
   1-hour write rate as recorded (Anthropic's ``cache_creation.ephemeral_5m_input_tokens`` /
   ``ephemeral_1h_input_tokens``; a write without that split is a 5-minute write, the default
   TTL);
3. else it is unpriced (its model is named in ``unpriced_models``).

Each response is priced on its own: long-context tiers apply to one request's prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, cast

from iris.session import Message, Session, Usage

from .prices import list_price, resolve
from .records import ModelBill, RecordedBill

__all__ = ["SYNTHETIC_MODEL", "Billed", "Ttl", "billed", "cache_writes", "compaction_requests", "list_billed", "money",
           "recorded_bill", "recorded_cost", "response_model", "responses", "write_ttl"]

Ttl = Literal["5m", "1h"]


def money(value: Decimal | None) -> float | None:
    """A USD amount for JSON: rounded to a millionth of a dollar."""
    return None if value is None else round(float(value), 6)


def cache_writes(usage: Usage) -> tuple[int, int]:
    """``(5-minute, 1-hour)`` cache-write tokens of one response. The split comes from the raw
    ``cache_creation`` object when it adds up to no more than the recorded writes; anything
    else (no split recorded, or a split that does not fit) counts as 5-minute writes."""
    total = usage.cache_write_tokens
    split = (usage.raw or {}).get("cache_creation")
    if isinstance(split, Mapping):
        split = cast("Mapping[str, Any]", split)
        five, hour = split.get("ephemeral_5m_input_tokens"), split.get("ephemeral_1h_input_tokens")
        five = five if type(five) is int and five >= 0 else 0
        hour = hour if type(hour) is int and hour >= 0 else 0
        if 0 < five + hour <= total:
            return total - hour, hour
    return total, 0


def write_ttl(usage: Usage | None) -> Ttl | None:
    """The cache TTL a response wrote at (the larger share), None when it wrote nothing."""
    if usage is None or usage.cache_write_tokens <= 0:
        return None
    five, hour = cache_writes(usage)
    return "1h" if hour > five else "5m"


def uncached_input(usage: Usage) -> int:
    """Prompt tokens neither read from nor written to the cache."""
    return max(usage.prompt_tokens - usage.cache_read_tokens - usage.cache_write_tokens, 0)


def list_billed(usage: Usage, model: str | None, when: datetime | None) -> Decimal | None:
    """One response at the list price with its recorded cache reads and writes."""
    five, hour = cache_writes(usage)
    return list_price(model, input_tokens=usage.prompt_tokens, output_tokens=usage.output_tokens,
                      cache_read_tokens=usage.cache_read_tokens, cache_write_5m_tokens=five,
                      cache_write_1h_tokens=hour, when=when)


@dataclass(frozen=True)
class Billed:
    """What one response cost and where the figure comes from."""

    usd: Decimal | None
    source: Literal["recorded cost", "list price", "unpriced"]


def recorded_cost(usage: Usage) -> float | None:
    """The cost the transcript records for a response, None when it records none. A recorded
    cost of 0 is not taken as one: litellm writes 0 for a model it cannot price."""
    return usage.cost_usd if usage.cost_usd else None


def billed(usage: Usage, model: str | None, when: datetime | None) -> Billed:
    """One response as billed: its recorded cost, else its list price with caching."""
    cost = recorded_cost(usage)
    if cost is not None:
        return Billed(Decimal(repr(cost)), "recorded cost")
    price = list_billed(usage, model, when)
    return Billed(price, "unpriced" if price is None else "list price")


#: The model name Claude Code gives a response no model wrote (an interrupted or refused
#: request): no price applies to it, so it is never "no price known".
SYNTHETIC_MODEL = "<synthetic>"


def response_model(message: Message, fallback: str | None) -> str | None:
    """The model that wrote a response: its own, its usage's, else the session's (``fallback``);
    a ``<synthetic>`` response names no model, so its step is priced with ``fallback``."""
    if message.model == SYNTHETIC_MODEL:
        return fallback
    return message.model or (message.usage.model if message.usage else None) or fallback


@dataclass
class _ModelBill:
    responses: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0
    usd: Decimal = Decimal(0)
    recorded_cost: int = 0
    list_price: int = 0

    def add(self, usage: Usage, bill: Billed) -> None:
        five, hour = cache_writes(usage)
        self.responses += 1
        self.input_tokens += uncached_input(usage)
        self.output_tokens += usage.output_tokens
        self.cache_read_tokens += usage.cache_read_tokens
        self.cache_write_5m_tokens += five
        self.cache_write_1h_tokens += hour
        self.usd += bill.usd or 0
        self.recorded_cost += bill.source == "recorded cost"
        self.list_price += bill.source == "list price"

    def bill(self, model: str) -> ModelBill:
        found = resolve(model)
        return ModelBill(responses=self.responses, priced_as=found.name if found else None,
                         input_tokens=self.input_tokens, output_tokens=self.output_tokens,
                         cache_read_tokens=self.cache_read_tokens,
                         cache_write_5m_tokens=self.cache_write_5m_tokens,
                         cache_write_1h_tokens=self.cache_write_1h_tokens,
                         usd=money(self.usd) if self.recorded_cost + self.list_price else None,
                         from_recorded_cost=self.recorded_cost, from_list_price=self.list_price)


def responses(session: Session) -> Iterable[tuple[str | None, Usage, datetime | None]]:
    """``(model, usage, time)`` of every response with trusted usage, in session order."""
    for message in session.messages:
        if message.role == "assistant" and message.usage is not None and message.usage.is_trusted:
            yield response_model(message, session.header.model), message.usage, message.timestamp


def compaction_requests(session: Session) -> Iterable[tuple[str | None, Usage, datetime | None]]:
    """``(model, usage, time)`` of the agent's own compaction calls the transcript records (a
    Claude Code ``agent-acompact-*`` request linked to its compaction): billed like responses."""
    for c in session.compactions:
        usage: Usage | None = getattr(c, "request_usage", None)
        if usage is not None and usage.is_trusted:
            at = c.at_message
            when = session.messages[at].timestamp if 0 <= at < len(session.messages) else None
            yield usage.model or session.header.model, usage, when


def recorded_bill(session: Session) -> RecordedBill:
    """The whole recorded session as billed: total ``usd`` (None when nothing could be priced),
    per-model token sums and figures (``models``), and how many responses (and recorded
    compaction calls, ``compaction_requests``) were priced from a recorded cost, from a list
    price, or not at all."""
    per_model: dict[str, _ModelBill] = {}
    unpriced: set[str] = set()
    calls = list(compaction_requests(session))
    for model, usage, when in [*responses(session), *calls]:
        bill = billed(usage, model, when)
        per_model.setdefault(model or "unknown model", _ModelBill()).add(usage, bill)
        if bill.usd is None:
            unpriced.add(model or "unknown model")
    priced = [b for b in per_model.values() if b.recorded_cost + b.list_price]
    total = sum((b.usd for b in priced), Decimal(0))
    return RecordedBill(usd=money(total) if priced else None,
                        responses=sum(b.responses for b in per_model.values()) - len(calls),
                        compaction_requests=len(calls),
                        from_recorded_cost=sum(b.recorded_cost for b in per_model.values()),
                        from_list_price=sum(b.list_price for b in per_model.values()),
                        unpriced_models=tuple(sorted(unpriced)),
                        models={m: b.bill(m) for m, b in sorted(per_model.items())})
