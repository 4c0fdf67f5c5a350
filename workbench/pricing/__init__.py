"""Money: what the recorded session was billed, what a replay of it would be billed, and what the
replay saves, priced with the maintained ``genai-prices`` library (its bundled price data, so it
works offline; nothing is fetched at run time). docs/pricing.md explains every figure.

Basis, so that replay and recording compare like with like:

- **Recorded.** Every response as billed (:mod:`workbench.pricing.billing`): the cost the transcript
  records for it, else its list price with its cache reads and its 5-minute and 1-hour cache
  writes, per model, at the time it was recorded.
- **Replayed requests.** Each step is priced with the model that answered it in the recording,
  at that time, on the whole-request basis (calibrated local estimate plus unrecorded overhead;
  the raw local estimate where a replay has no such figure), through the prompt-cache model of
  :mod:`workbench.pricing.cache` (unchanged prefix read, the rest written). A request the agent
  sent (the as-recorded replay; any replay before its first change) is priced as billed, with the
  provider's prompt count and its recorded cache reads and writes. Both sides count the recorded
  response's output tokens. A model whose responses record their cost is priced at the
  rate those costs imply: recorded cost ÷ list price of the same usage (``recorded_cost_rates``).
- **Summaries.** A compaction whose summary call reported usage is priced from it; otherwise the
  summary request and the checkpoint are counted with the local estimator and priced as if the
  session's model wrote them (``summaries_estimated``), since a real deployment would pay a model.
  A checkpoint that is the agent's own summary is priced at that call's recorded usage, or at
  nothing when the transcript does not record the call (the recorded bill does not hold it either);
  the saving leaves it out on both sides, since the agent paid for the same call.
- **Saved** = recorded as billed − (replayed requests + summaries), over the steps priced on both
  sides; ``savings`` splits it into what the smaller requests save, what the replay's cache
  misses cost and what its summaries cost.

A model the library does not know is "no price known": its steps are counted in
``steps_unpriced`` and named in ``unpriced_models``; when nothing could be priced every money
figure is None and ``note`` says why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from iris.session import Session, Usage
from iris.tokens import TokenEstimator, default_estimator

from ..records import ReplayStep
from .billing import (
    SYNTHETIC_MODEL,
    Ttl,
    billed,
    list_billed,
    money,
    recorded_bill,
    recorded_cost,
    response_model,
    responses,
    write_ttl,
)
from .cache import CacheRequest, CacheSplit, Prefix, cache_splits
from .prefixes import live_prefixes, prefix_sink, step_models, stored_prefixes
from .prices import list_price, prices_as_of, resolve, source
from .records import (
    BASIS,
    ModelBill,
    RecordedBill,
    ReplayCache,
    ReplayCost,
    Savings,
    Uncached,
)

__all__ = ["BASIS", "CostStep", "ModelBill", "RecordedBill", "ReplayCache", "ReplayCost", "Savings",
           "SummaryCallCost", "Uncached", "cost_lines", "prefix_sink", "price", "priced_steps",
           "recorded_cost_rates", "replay_cost", "step_models", "step_usd", "stored_replay_cost",
           "tally"]

def price(model: str | None, *, input_tokens: int, output_tokens: int = 0,
          cache_read_tokens: int = 0, cache_write_tokens: int = 0,
          cache_write_1h_tokens: int = 0, when: datetime | None = None) -> Decimal | None:
    """USD list price of one call (``input_tokens`` includes the cached ones; cache writes at
    the 5-minute and 1-hour rates), None if unknown."""
    return list_price(model, input_tokens=input_tokens, output_tokens=output_tokens,
                      cache_read_tokens=cache_read_tokens, cache_write_5m_tokens=cache_write_tokens,
                      cache_write_1h_tokens=cache_write_1h_tokens, when=when)


@dataclass(frozen=True)
class CostStep:
    """One step: the replayed request's whole-request tokens and how it meets the prompt cache
    (None: priced as uncached input), and the recorded response's usage."""

    step_index: int
    model: str | None
    replay_input_tokens: int | None
    recorded: Usage | None
    when: datetime | None = None
    cache: CacheSplit | None = None
    ttl: Ttl | None = "5m"
    """The TTL the replayed request writes at; None: the recording used no prompt cache, so
    what the replay does not read is plain input."""
    as_recorded: bool = False
    """The replayed request is the one the agent sent (no earlier step changed the history and
    this one sends what the agent sent): it is priced as billed, with its recorded cache reads
    and writes."""


@dataclass(frozen=True)
class SummaryCallCost:
    """One compaction summary call: measured usage, or local estimates of its text."""

    step_index: int
    model: str | None
    input_tokens: int
    output_tokens: int
    measured: bool
    usage: Usage | None = None
    """The measured usage (priced as billed: cache reads and writes, a recorded cost)."""
    agents_own: bool = False
    """The checkpoint is the agent's own summary: the agent paid for the same call, so the saving
    (recorded steps against replayed ones) leaves it out on both sides. Its price is in
    ``summaries_usd`` when the transcript records the call, nothing otherwise (the recorded bill
    does not hold an unrecorded call either)."""


def recorded_cost_rates(session: Session) -> dict[str, Decimal]:
    """Per model whose responses record their cost: recorded cost ÷ list price of the same usage
    (what the agent really paid per list-price dollar). Models without recorded costs or without
    a list price are left out (rate 1)."""
    paid: dict[str, list[Decimal]] = {}
    for model, usage, when in responses(session):
        cost = recorded_cost(usage)
        listed = list_billed(usage, model, when) if cost is not None else None
        if model and cost is not None and listed:
            sums = paid.setdefault(model, [Decimal(0), Decimal(0)])
            sums[0] += Decimal(repr(cost))
            sums[1] += listed
    return {m: cost / listed for m, (cost, listed) in paid.items() if listed}


def _replayed(step: CostStep, read: int | None, rate: Decimal) -> Decimal | None:
    """The replayed request priced with ``read`` cache-read tokens (None: uncached input)."""
    assert step.replay_input_tokens is not None
    out = step.recorded.output_tokens if step.recorded else 0
    written = 0 if read is None or step.ttl is None else step.replay_input_tokens - read
    five, hour = (written, 0) if step.ttl == "5m" else (0, written)
    value = list_price(step.model, input_tokens=step.replay_input_tokens, output_tokens=out,
                       cache_read_tokens=read or 0, cache_write_5m_tokens=five,
                       cache_write_1h_tokens=hour, when=step.when)
    return None if value is None else value * rate


def step_usd(step: CostStep, rate: Decimal = Decimal(1)) -> Decimal | None:
    """What one replayed request costs: as billed when it is the request the agent sent, else
    through its cache split at ``rate`` × the list price (None: no request or no price)."""
    if step.replay_input_tokens is None:
        return None
    u = step.recorded
    if step.as_recorded and u is not None and u.is_trusted:
        return billed(u, step.model, step.when).usd
    return _replayed(step, step.cache.read if step.cache else None, rate)


def priced_steps(session: Session, preparations: Sequence[Any],
                 request_of: Callable[[Any], Any] | None = None, *,
                 estimator: TokenEstimator | None = None) -> dict[int, tuple[CostStep, Decimal | None]]:
    """Each step of a replay by index: its :class:`CostStep` (the request's tokens as priced, its
    cache split) and what it costs, as :func:`replay_cost` prices them. ``request_of`` gives a
    step's request body (None: not kept; the cache then sees only compactions)."""
    prefixes = None
    if request_of is not None:
        sink = prefix_sink(session, estimator or default_estimator())
        for p in preparations:
            if (request := request_of(p)) is not None:
                sink.save(p, request)
        prefixes = sink.prefixes
    rates = recorded_cost_rates(session)
    return {s.step_index: (s, step_usd(s, rates.get(s.model or "", Decimal(1))))
            for s in _steps(session, preparations, prefixes)}


@dataclass
class _Sums:
    """Running totals of :func:`tally`."""

    requests: Decimal = Decimal(0)
    uncached: Decimal = Decimal(0)
    same: Decimal = Decimal(0)
    """The replayed requests (cache model) of the steps also priced as recorded."""
    same_if_kept: Decimal = Decimal(0)
    """The same, had no rewrite invalidated the cache."""
    same_uncached: Decimal = Decimal(0)
    recorded: Decimal = Decimal(0)
    recorded_uncached: Decimal = Decimal(0)
    read: int = 0
    written: int = 0
    read_if_kept: int = 0
    priced: int = 0
    compared: int = 0
    unpriced: set[str] = field(default_factory=set)
    """Models without a price."""
    unsent: int = 0
    """Steps without a request to price (failed or cancelled)."""

    def add(self, step: CostStep, rate: Decimal) -> None:
        if step.replay_input_tokens is None:  # failed or cancelled: no request to price
            self.unsent += 1
            return
        if resolve(step.model) is None:
            self.unpriced.add(step.model or "unknown model")
            return
        split = step.cache
        u = step.recorded
        mine = step_usd(step, rate) or Decimal(0)
        if step.as_recorded and u is not None and u.is_trusted:
            if_kept = mine
        else:
            if_kept = _replayed(step, split.read_if_kept if split else None, rate) or Decimal(0)
        bare = _replayed(step, None, Decimal(1)) or Decimal(0)
        self.priced += 1
        self.requests += mine
        self.uncached += bare
        if split:
            self.read, self.written = self.read + split.read, self.written + split.written
            self.read_if_kept += split.read_if_kept
        if u is not None and u.is_trusted:
            bill = billed(u, step.model, step.when)
            self.compared += 1
            self.same, self.same_if_kept, self.same_uncached = (
                self.same + mine, self.same_if_kept + if_kept, self.same_uncached + bare)
            self.recorded += bill.usd or 0
            self.recorded_uncached += price(step.model, input_tokens=u.prompt_tokens,
                                            output_tokens=u.output_tokens, when=step.when) or 0


def _summary_cost(summaries: Iterable[SummaryCallCost], rates: Mapping[str, Decimal]) -> tuple[Decimal, Decimal]:
    """``(all summaries, those the saving compares)``: the agent's own summaries are left out of
    the second (the agent paid for them too)."""
    total = compared = Decimal(0)
    for s in summaries:
        if s.usage is not None:
            value = billed(s.usage, s.model, None).usd or Decimal(0)
        elif s.input_tokens or s.output_tokens:
            value = (price(s.model, input_tokens=s.input_tokens, output_tokens=s.output_tokens)
                     or Decimal(0)) * rates.get(s.model or "", Decimal(1))
        else:
            value = Decimal(0)
        total += value
        compared += Decimal(0) if s.agents_own else value
    return total, compared


def _pct(part: Decimal, whole: Decimal) -> float | None:
    return round(float(part / whole * 100), 1) if whole else None


def tally(steps: Sequence[CostStep], summaries: Iterable[SummaryCallCost] = (), *,
          bill: RecordedBill | None = None,
          rates: Mapping[str, Decimal] | None = None) -> ReplayCost:
    """The cost (see the module docstring for the basis) of priced steps and summaries. ``bill``
    is :func:`workbench.pricing.billing.recorded_bill` of the whole session (without it the
    recorded bill is that of the compared steps); ``rates`` are :func:`recorded_cost_rates`."""
    rates = dict(rates or {})
    sums = _Sums()
    for step in steps:
        sums.add(step, rates.get(step.model or "", Decimal(1)))
    summaries = list(summaries)
    models = sorted({st.model for st in steps if st.model and st.model not in sums.unpriced})
    found = {m: resolve(m) for m in models}
    unknown = ", ".join(repr(m) for m in sorted(sums.unpriced))
    priced, compared = sums.priced > 0, sums.compared > 0
    all_summaries, summary_cost = _summary_cost(summaries, rates) if priced else (None, None)
    saved = sums.recorded - sums.same - (summary_cost or 0)
    if bill is not None:
        billed_usd = bill.usd
    else:
        billed_usd = money(sums.recorded) if priced and compared else None
    return ReplayCost(
        price_known=priced, source=source(), prices_as_of=prices_as_of(),
        models={m: f.name if f else None for m, f in found.items()},
        unpriced_models=tuple(sorted(sums.unpriced)), steps_priced=sums.priced,
        steps_unpriced=len(steps) - sums.priced, steps_compared=sums.compared,
        requests_usd=money(sums.requests) if priced else None,
        summaries_usd=money(all_summaries),
        summaries_estimated=any(not s.measured for s in summaries),
        replay_usd=money(sums.requests + all_summaries) if all_summaries is not None else None,
        recorded_usd=money(sums.recorded) if priced and compared else None,
        recorded_billed_usd=billed_usd,
        saved_usd=money(saved) if priced and compared else None,
        saved_pct=_pct(saved, sums.recorded) if priced and compared else None,
        savings=Savings(smaller_requests_usd=money(sums.recorded - sums.same_if_kept),
                        cache_misses_usd=money(sums.same - sums.same_if_kept),
                        summaries_usd=money(summary_cost)) if priced and compared else None,
        replay_cache=ReplayCache(read_tokens=sums.read, written_tokens=sums.written,
                                 read_tokens_if_kept=sums.read_if_kept) if priced else None,
        uncached=Uncached(recorded_usd=money(sums.recorded_uncached),
                          requests_usd=money(sums.same_uncached),
                          saved_usd=money(sums.recorded_uncached - sums.same_uncached
                                          - (summary_cost or 0))) if priced and compared else None,
        recorded_bill=bill,
        recorded_cost_rates={m: round(float(r), 4) for m, r in sorted(rates.items())},
        note=_note(unknown, priced, sums.unsent))


def _note(unknown: str, priced: bool, unsent: int) -> str:
    """Why something is missing: models without a price, steps without a request."""
    parts = [f"no price known for {unknown}"] if unknown else []
    if unsent:
        parts.append(f"{unsent:,} step{'s' if unsent != 1 else ''} sent no request to price "
                     "(failed or cancelled)")
    if not priced and not parts:
        parts.append("no price known for no model recorded")
    return "; ".join(parts)


# --------------------------------------------------------------------------------------------
# Replays


def _whole(step: ReplayStep, overhead: int = 0) -> int | None:
    """A ready step's request on the whole-request basis; ``overhead`` is added to a step whose
    figure carries none yet (before the first response measured it: the system prompt and tool
    schemas were sent all the same)."""
    if step.phase != "ready":
        return None
    whole = step.whole_request_tokens
    if whole is None:
        return step.final_input_tokens
    unmeasured = step.overhead_measured_at is None and not step.unrecorded_overhead_tokens
    return whole + overhead if unmeasured else whole


def _first_overhead(preparations: Sequence[ReplayStep]) -> int:
    """The unrecorded overhead the replay measured first (0: never measured)."""
    return next((o for p in preparations
                 if p.overhead_measured_at is not None and (o := p.unrecorded_overhead_tokens)), 0)


def _as_recorded(step: ReplayStep) -> bool:
    """The step sends the request the agent sent: its messages count what the recorded
    request's do (no stage of this step or an earlier one changed the history)."""
    recorded = step.recorded_request_tokens
    return recorded is not None and step.final_input_tokens == recorded


def _steps(session: Session, preparations: Iterable[ReplayStep],
           prefixes: Mapping[int, Prefix] | None) -> list[CostStep]:
    """Priced steps with their cache splits; ``prefixes`` by step index (None or missing: the
    request's body was not kept). Steps are sent as recorded until the first one that is not;
    a ``<synthetic>`` response (no model was called) is no step to price."""
    base: list[tuple[CostStep, CacheRequest | None]] = []
    model = session.header.model
    cached = any(u.cache_read_tokens or u.cache_write_tokens for _, u, _ in responses(session))
    ttl: Ttl | None = "5m" if cached else None
    same = True
    preparations = tuple(preparations)
    overhead = _first_overhead(preparations)
    for p in preparations:
        at = p.response_message_index
        msg = session.messages[at] if 0 <= at < len(session.messages) else None
        if msg is not None and msg.model == SYNTHETIC_MODEL:
            continue  # the agent wrote it without calling a model: no request to price
        usage = msg.usage if msg else None
        trusted = usage if usage is not None and usage.is_trusted else None
        model = response_model(msg, model) if msg else model
        ttl = write_ttl(usage) or ttl
        whole = _whole(p, overhead)
        same = same and whole is not None and _as_recorded(p)
        if same:  # the request the agent sent: the provider's count of it
            whole = trusted.prompt_tokens if trusted else (
                p.provider_prompt_tokens or whole)
        step = CostStep(p.step_index, model, whole, usage, msg.timestamp if msg else None,
                        ttl=ttl, as_recorded=same and trusted is not None)
        request = None if whole is None else CacheRequest(
            model=model, whole=whole, prefix=(prefixes or {}).get(p.step_index),
            compaction=bool(p.compaction_applied),
            system_tokens=p.unrecorded_overhead_tokens or 0,
            recorded_read=trusted.cache_read_tokens if trusted else None,
            recorded_written=trusted.cache_write_tokens if trusted else None,
            recorded_prompt=trusted.prompt_tokens if trusted else None,
            as_recorded=step.as_recorded, when=step.when, ttl=ttl or "5m")
        base.append((step, request))
    splits = iter(cache_splits([r for _, r in base if r is not None]))
    return [replace(s, cache=next(splits)) if r is not None else s for s, r in base]


def _agent_summary_call(session: Session, checkpoint_text: str) -> tuple[bool, Usage | None]:
    """Whether the checkpoint is one of the agent's own summaries, and the usage of that summary
    call when the transcript records it (a replay that reuses the agent's summary at the agent's
    compaction pays what the agent paid for it; None when the call is not recorded)."""
    for c in session.compactions:
        usage: Usage | None = getattr(c, "request_usage", None)
        at = c.at_message
        text = c.summary or (session.messages[at].text if 0 <= at < len(session.messages)
                             and session.messages[at].is_compaction_summary else "")
        if text.strip() and text.strip()[:200] in checkpoint_text:
            return True, usage if usage is not None and usage.is_trusted else None
    return False, None


def _summary(session: Session, step_index: int | None, model: str | None, usage: Usage | None,
             checkpoint_text: str, request_tokens: Callable[[], int],
             estimator: TokenEstimator) -> SummaryCallCost:
    """One committed compaction's summary call: its reported usage, else the agent's own call
    when the checkpoint is the agent's summary (nothing when that call is not recorded: the bill
    does not hold it either), else local counts of its request and output."""
    model = model or session.header.model
    index = -1 if step_index is None else step_index
    if usage is None or not usage.is_trusted:
        agents, usage = _agent_summary_call(session, checkpoint_text)
        if agents:
            if usage is None:
                return SummaryCallCost(index, model, 0, 0, True, agents_own=True)
            return SummaryCallCost(index, usage.model or model, usage.prompt_tokens, usage.output_tokens,
                               True, usage, agents_own=True)
    if usage is not None:
        return SummaryCallCost(index, usage.model or model, usage.prompt_tokens, usage.output_tokens,
                           True, usage)
    return SummaryCallCost(index, model, request_tokens(), estimator.count(checkpoint_text), False)


def replay_cost(session: Session, replay: Any, *, estimator: TokenEstimator | None = None,
                prefixes: Mapping[int, Prefix] | None = None) -> ReplayCost:
    """The cost object of an ``iris.replay.Replay`` of ``session`` (``--summary-json``'s
    ``cost``). ``prefixes`` are those a :class:`~workbench.pricing.cache.PrefixSink` collected
    during a replay that kept no request bodies."""
    counter = estimator or default_estimator()
    if replay.requests:
        prefixes = live_prefixes(session, replay, counter)
    steps = _steps(session, replay.preparations, prefixes)
    models = {s.step_index: s.model for s in steps}
    summaries = [_summary(session, c.step_index, models.get(c.step_index), c.summary_usage,
                          c.checkpoint_text, lambda c=c: counter.count(c.summary_request_text),
                          counter) for c in replay.checkpoints]
    return tally(steps, summaries, bill=recorded_bill(session), rates=recorded_cost_rates(session))


def stored_replay_cost(session: Session, stored: Any, rows: Sequence[ReplayStep], *,
                       estimator: TokenEstimator | None = None) -> ReplayCost:
    """The cost object of a saved replay (``services.replay.open_saved``) whose step rows with
    their whole-request figures are ``rows`` (``services.truth.truth_steps``): the summary request
    is the count the replay kept when it was saved (the one :func:`replay_cost` counts), else
    the archived head's."""
    counter = estimator or default_estimator()
    steps = _steps(session, rows, stored_prefixes(session, stored, rows, counter))
    models = {s.step_index: s.model for s in steps}
    usage = {c.step_index: c.summary_usage for c in stored.facts.compactions}
    sent = {c.step_index: c.summary_request_tokens for c in stored.facts.compactions}

    def request_tokens(archive: Any) -> int:  # replays saved before the count was kept: the head
        known = sent.get(archive.step_index)
        return known if known is not None else counter.count(archive.text)

    summaries = [_summary(session, a.step_index, models.get(a.step_index) if a.step_index is not
                          None else None, usage.get(a.step_index), a.checkpoint_text,
                          lambda a=a: request_tokens(a), counter)
                 for a in stored.archives()]
    return tally(steps, summaries, bill=recorded_bill(session), rates=recorded_cost_rates(session))


def cost_lines(cost: ReplayCost) -> list[str]:
    """Plain-language lines for the UI and reports (:mod:`workbench.pricing.words`)."""
    from .words import cost_lines as words

    return words(cost)
