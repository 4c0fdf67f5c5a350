"""The cost object as typed records: the recorded bill (:func:`workbench.pricing.billing.recorded_bill`)
and the cost of a replay (:func:`workbench.pricing.tally`, ``--summary-json``'s ``cost``).

Field order is the key order of the JSON ``--summary-json`` writes (``model_dump()``), so the
declarations below are that document's layout (docs/cli.md, docs/pricing.md). Money is a float
rounded to a millionth of a dollar (:func:`workbench.pricing.billing.money`): the sums behind it
stay :class:`~decimal.Decimal` until then.
"""

from __future__ import annotations

from typing import Literal

from iris.frozen import FrozenModel
from pydantic import Field

__all__ = ["BASIS", "ModelBill", "RecordedBill", "ReplayCache", "ReplayCost", "Savings", "Uncached"]

BASIS = ("as billed: the recorded responses at their recorded cost, else at the list price with "
         "their cache reads and 5-minute/1-hour cache writes; the replayed requests on the "
         "whole-request basis (calibrated estimate + unrecorded overhead) through a prompt-cache "
         "model (unchanged prefix read, the rest written); output tokens as recorded")


class ModelBill(FrozenModel):
    """One model's share of the recorded bill: its token sums and what they cost."""

    responses: int
    priced_as: str | None
    """The library's name of the model (None: no price known)."""
    input_tokens: int
    """Prompt tokens neither read from nor written to the cache."""
    output_tokens: int
    cache_read_tokens: int
    cache_write_5m_tokens: int
    cache_write_1h_tokens: int
    usd: float | None
    """None when none of its responses could be priced."""
    from_recorded_cost: int
    from_list_price: int


class RecordedBill(FrozenModel):
    """The whole recorded session as billed."""

    usd: float | None
    """None when nothing could be priced."""
    responses: int
    compaction_requests: int
    """The agent's own compaction calls the transcript records (billed like responses)."""
    from_recorded_cost: int
    from_list_price: int
    unpriced_models: tuple[str, ...]
    models: dict[str, ModelBill]
    """By model, in name order."""


class Savings(FrozenModel):
    """What the saving is made of: smaller requests, the replay's cache misses, its summaries."""

    smaller_requests_usd: float | None
    cache_misses_usd: float | None
    summaries_usd: float | None


class ReplayCache(FrozenModel):
    """How the replayed requests met the prompt cache."""

    read_tokens: int
    written_tokens: int
    read_tokens_if_kept: int
    """Had no rewrite invalidated the cache."""


class Uncached(FrozenModel):
    """Both sides at the uncached list price, for reference."""

    recorded_usd: float | None
    requests_usd: float | None
    saved_usd: float | None


class ReplayCost(FrozenModel):
    """What the recorded session was billed, what the replay would be billed and what it saves
    (docs/pricing.md). Without any price known every money figure is None and ``note`` says why.
    The defaults are those of a replay nothing could be priced for."""

    currency: Literal["USD"] = "USD"
    price_known: bool = False
    source: str = "genai-prices"
    """The library release whose bundled data priced the figures."""
    prices_as_of: str | None = None
    """The newest price change the bundled data records (ISO date)."""
    basis: str = BASIS
    models: dict[str, str | None] = Field(default_factory=dict[str, str | None])
    """Each priced model id with the library's name of it."""
    unpriced_models: tuple[str, ...] = ()
    steps_priced: int = 0
    steps_unpriced: int = 0
    steps_compared: int = 0
    """Steps priced on both sides (the replayed request and the recorded response)."""
    requests_usd: float | None = None
    summaries_usd: float | None = None
    summaries_estimated: bool = False
    """Some summary call reported no usage: its tokens are local estimates."""
    replay_usd: float | None = None
    recorded_usd: float | None = None
    """The recorded bill of the compared steps."""
    recorded_billed_usd: float | None = None
    """The whole recorded session as billed (the main conversation)."""
    subagents_billed_usd: float | None = None
    """The session's sub-agents as billed, beside the main conversation's bill: their files, or
    the usage their ``agent_progress`` copies record (:mod:`workbench.pricing.subagents`); None
    when the session has no sub-agent with priced usage."""
    saved_usd: float | None = None
    saved_pct: float | None = None
    savings: Savings | None = None
    replay_cache: ReplayCache | None = None
    uncached: Uncached | None = None
    recorded_bill: RecordedBill | None = None
    recorded_cost_rates: dict[str, float] = Field(default_factory=dict[str, float])
    """Recorded cost ÷ list price per model whose responses record their cost (4 decimals)."""
    note: str = ""
