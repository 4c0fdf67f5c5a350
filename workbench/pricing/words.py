"""The cost of :mod:`workbench.pricing` in plain words: the lines the Usage page and the reports
show. Every line that states a price ends up next to the line naming the price data and its
date."""

from __future__ import annotations

from .records import ReplayCost

__all__ = ["cost_lines", "price_source_line"]


def _usd(value: float | None) -> str:
    """Dollars and cents from $1 on, four decimals below (a cent is a large share of a small
    bill), so figures side by side have the same form."""
    if value is None:
        return "—"
    sign = "−" if value < 0 else ""
    return f"{sign}${abs(value):,.4f}" if abs(value) < 1 else f"{sign}${abs(value):,.2f}"


def _saves(value: float | None, what: str) -> str:
    """``what`` with what it saves, or what it costs more when negative (never "saves −$x")."""
    if value is not None and value < 0:
        return f"{what} cost {_usd(-value)} more"
    return f"{what} save {_usd(value)}"


def _costs(value: float | None, what: str) -> str:
    """``what`` with what it costs, or what it saves when negative (never "cost −$x")."""
    if value is not None and value < 0:
        return f"{what} save {_usd(-value)}"
    return f"{what} cost {_usd(value)}"


def price_source_line(cost: ReplayCost) -> str:
    """Which price data priced the figures, how recent it is, and the rates recorded costs set."""
    dated = f", newest price change {cost.prices_as_of}" if cost.prices_as_of else ""
    rates = "; ".join(f"{m} at {r:g} × its list price (the rate its recorded costs imply)"
                      for m, r in cost.recorded_cost_rates.items())
    return (f"Prices: {cost.source} (bundled data{dated})" + (f"; {rates}" if rates else "") + ".")


def _recorded_line(cost: ReplayCost) -> str | None:
    bill = cost.recorded_bill
    if cost.recorded_billed_usd is None:
        return None
    how: list[str] = []
    if bill is not None and bill.from_recorded_cost:
        how.append(f"{bill.from_recorded_cost} at the cost the transcript records")
    if bill is not None and bill.from_list_price:
        how.append(f"{bill.from_list_price} at list prices with their cache reads and writes")
    detail = f" ({'; '.join(how)})" if how else ""
    responses = bill.responses if bill is not None else cost.steps_compared
    return (f"Recorded session as billed: {_usd(cost.recorded_billed_usd)} over "
            f"{responses} responses{detail}.")


def _subagents_line(cost: ReplayCost) -> str | None:
    """The sub-agents' bill, beside the main conversation's (not included in it)."""
    if cost.subagents_billed_usd is None:
        return None
    main = cost.recorded_billed_usd
    share = (f", {100 * cost.subagents_billed_usd / main:.0f} % on top of the main conversation's"
             if main else "")
    return (f"Sub-agents as billed: {_usd(cost.subagents_billed_usd)} (beside the recorded "
            f"session's bill{share}).")


def _model_line(cost: ReplayCost) -> str | None:
    """The bill per model, with the cache reads and writes that made it."""
    models = cost.recorded_bill.models if cost.recorded_bill is not None else {}
    parts: list[str] = []
    for model, m in models.items():
        if m.usd is None:
            continue
        cache = [f"{m.cache_read_tokens:,} tokens read from the cache"] if m.cache_read_tokens else []
        cache += [f"{tokens:,} written at the {label} rate" for tokens, label in (
            (m.cache_write_5m_tokens, "5-minute"), (m.cache_write_1h_tokens, "1-hour")) if tokens]
        detail = "".join(f", {c}" for c in cache)
        parts.append(f"{model} {_usd(m.usd)} ({m.responses} responses{detail})")
    return f"By model: {'; '.join(parts)}." if parts else None


def _replay_line(cost: ReplayCost) -> str:
    cache = cost.replay_cache
    reads = (f" (prompt cache: {cache.read_tokens:,} tokens read, {cache.written_tokens:,} "
             "written)") if cache is not None else ""
    estimated = (" (estimated: no summary call reported usage)"
                 if cost.summaries_estimated else "")
    return (f"Replay as billed: requests {_usd(cost.requests_usd)}{reads} + summaries "
            f"{_usd(cost.summaries_usd)}{estimated} = {_usd(cost.replay_usd)}.")


def _saved_lines(cost: ReplayCost) -> list[str]:
    if cost.saved_usd is None:
        return []
    parts = cost.savings
    # A negative saving is said as what the replay costs more: "Saved −$1.27" reads as a typo.
    more = cost.saved_usd < 0
    pct = cost.saved_pct
    pct = f"{abs(pct)}" if more and pct is not None else f"{pct}"
    head = (f"Costs {_usd(-cost.saved_usd)} more (+{pct} %) than the recorded" if more
            else f"Saved {_usd(cost.saved_usd)} ({pct} %) against the recorded")
    summaries = parts.summaries_usd if parts else None
    misses = "the replay's cache misses"
    own = ""
    if summaries is not None and cost.summaries_usd is not None and summaries != cost.summaries_usd:
        own = (f" (the agent's own summary, {_usd(cost.summaries_usd - summaries)}, is left out "
               "on both sides: the agent paid for it too)")
    saved = (f"{head} bill of the same {cost.steps_compared} steps ({_usd(cost.recorded_usd)}): "
             f"{_saves(parts.smaller_requests_usd if parts else None, 'the smaller requests')}, "
             f"{_costs(parts.cache_misses_usd if parts else None, misses)}, "
             f"the summaries it compares {_usd(summaries)}{own}.")
    lines = [saved]
    bare = cost.uncached
    if bare is not None:
        lines.append(f"Without any prompt cache (uncached list price, for reference): recorded "
                     f"{_usd(bare.recorded_usd)}, replayed requests {_usd(bare.requests_usd)}.")
    return lines


def cost_lines(cost: ReplayCost) -> list[str]:
    """Plain-language lines: the recorded bill, the replay's bill, what it saves and why, the
    price data."""
    if not cost.price_known:
        return [f"Cost: {cost.note or 'no price known'}.", price_source_line(cost)]
    lines = [line for line in (_recorded_line(cost), _subagents_line(cost), _model_line(cost))
             if line]
    lines.append(_replay_line(cost))
    lines += _saved_lines(cost)
    if cost.note:
        lines.append(cost.note + ".")
    lines.append(price_source_line(cost))
    return lines
