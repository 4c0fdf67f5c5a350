"""The cost object of :mod:`workbench.pricing` in plain words: the lines the Usage page and the
reports show. Every line that states a price ends up next to the line naming the price data and
its date."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["cost_lines", "price_source_line"]


def _usd(value: float | None) -> str:
    if value is None:
        return "—"
    sign = "−" if value < 0 else ""
    return f"{sign}${abs(value):,.4f}" if abs(value) < 10 else f"{sign}${abs(value):,.2f}"


def price_source_line(cost: Mapping[str, Any]) -> str:
    """Which price data priced the figures, how recent it is, and the rates recorded costs set."""
    dated = f", newest price change {cost['prices_as_of']}" if cost.get("prices_as_of") else ""
    rates = "; ".join(f"{m} at {r:g} × its list price (the rate its recorded costs imply)"
                      for m, r in (cost.get("recorded_cost_rates") or {}).items())
    return (f"Prices: {cost.get('source', 'genai-prices')} (bundled data{dated})"
            + (f"; {rates}" if rates else "") + ".")


def _recorded_line(cost: Mapping[str, Any]) -> str | None:
    bill = cost.get("recorded_bill") or {}
    if cost.get("recorded_billed_usd") is None:
        return None
    how = []
    if bill.get("from_recorded_cost"):
        how.append(f"{bill['from_recorded_cost']} at the cost the transcript records")
    if bill.get("from_list_price"):
        how.append(f"{bill['from_list_price']} at list prices with their cache reads and writes")
    detail = f" ({'; '.join(how)})" if how else ""
    return (f"Recorded session as billed: {_usd(cost['recorded_billed_usd'])} over "
            f"{bill.get('responses', cost.get('steps_compared'))} responses{detail}.")


def _model_line(cost: Mapping[str, Any]) -> str | None:
    """The bill per model, with the cache reads and writes that made it."""
    models = (cost.get("recorded_bill") or {}).get("models") or {}
    parts = []
    for model, m in models.items():
        if m.get("usd") is None:
            continue
        cache = [f"{m['cache_read_tokens']:,} tokens read from the cache"] if m.get(
            "cache_read_tokens") else []
        cache += [f"{m[k]:,} written at the {label} rate" for k, label in (
            ("cache_write_5m_tokens", "5-minute"), ("cache_write_1h_tokens", "1-hour")) if m.get(k)]
        detail = "".join(f", {c}" for c in cache)
        parts.append(f"{model} {_usd(m['usd'])} ({m['responses']} responses{detail})")
    return f"By model: {'; '.join(parts)}." if parts else None


def _replay_line(cost: Mapping[str, Any]) -> str:
    cache = cost.get("replay_cache") or {}
    reads = (f" (prompt cache: {cache['read_tokens']:,} tokens read, {cache['written_tokens']:,} "
             "written)") if cache else ""
    estimated = (" (estimated: no summary call reported usage)"
                 if cost.get("summaries_estimated") else "")
    return (f"Replay as billed: requests {_usd(cost['requests_usd'])}{reads} + summaries "
            f"{_usd(cost['summaries_usd'])}{estimated} = {_usd(cost['replay_usd'])}.")


def _saved_lines(cost: Mapping[str, Any]) -> list[str]:
    if cost.get("saved_usd") is None:
        return []
    parts = cost.get("savings") or {}
    # A negative saving is said as what the replay costs more: "Saved −$1.27" reads as a typo.
    more = cost["saved_usd"] < 0
    pct = cost.get("saved_pct")
    pct = f"{abs(pct)}" if more and pct is not None else f"{pct}"
    head = (f"Costs {_usd(-cost['saved_usd'])} more (+{pct} %) than the recorded" if more
            else f"Saved {_usd(cost['saved_usd'])} ({pct} %) against the recorded")
    saved = (f"{head} bill of the same {cost['steps_compared']} steps ({_usd(cost['recorded_usd'])}): "
             f"the smaller requests save {_usd(parts.get('smaller_requests_usd'))}, the replay's "
             f"cache misses cost {_usd(parts.get('cache_misses_usd'))}, its summaries "
             f"{_usd(parts.get('summaries_usd'))}.")
    lines = [saved]
    bare = cost.get("uncached")
    if bare:
        lines.append(f"Without any prompt cache (uncached list price, for reference): recorded "
                     f"{_usd(bare['recorded_usd'])}, replayed requests {_usd(bare['requests_usd'])}.")
    return lines


def cost_lines(cost: Mapping[str, Any]) -> list[str]:
    """Plain-language lines: the recorded bill, the replay's bill, what it saves and why, the
    price data."""
    if not cost.get("price_known"):
        return [f"Cost: {cost.get('note') or 'no price known'}.", price_source_line(cost)]
    lines = [line for line in (_recorded_line(cost), _model_line(cost)) if line]
    lines.append(_replay_line(cost))
    lines += _saved_lines(cost)
    if cost.get("note"):
        lines.append(cost["note"] + ".")
    lines.append(price_source_line(cost))
    return lines
