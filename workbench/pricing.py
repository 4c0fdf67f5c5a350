"""Money: what a replay's requests and summaries would cost, and what it saves against the
recorded session, priced with the maintained ``genai-prices`` library (its bundled price
snapshot, so it works offline; nothing is fetched at run time).

Basis, so that replay and recording compare like with like:

- **Requests.** Each step is priced with the model that answered it in the recording, at the
  time it was recorded (prices change over time). The replayed request counts its whole-request
  tokens (calibrated local estimate plus unrecorded overhead, ``whole_request_tokens``; the raw
  local estimate where a replay has no such figure) as uncached input. The recorded request counts
  the provider's prompt tokens, also as uncached input, so caching never makes one side look
  cheaper; ``recorded_billed_usd`` additionally prices the recording with its recorded cache
  reads and writes. Both sides count the recorded response's output tokens.
- **Summaries.** A compaction whose summary call reported usage is priced from it; otherwise the
  summary request and the checkpoint are counted with the local estimator and priced as if the
  session's model wrote them (``summaries_estimated``), since a real deployment would pay a model.
- **Saved** = recorded − (replayed requests + summaries), over the steps priced on both sides.

A model the library does not know is "no price known": its steps are counted in
``steps_unpriced`` and named in ``unpriced_models``; when nothing could be priced every money
figure is None and ``note`` says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

from iris.session import Session, Usage
from iris.tokens import TokenEstimator, default_estimator

__all__ = ["CostStep", "CostSummary", "cost_lines", "price", "replay_cost", "saved_cost_lines",
           "stored_replay_cost", "tally"]

BASIS = ("input at the uncached list price for replayed and recorded requests alike (the "
         "replayed request on the whole-request basis: calibrated estimate + unrecorded "
         "overhead); output tokens as recorded")


@dataclass(frozen=True)
class CostStep:
    """One step: the replayed request's input tokens and the recorded response's usage."""

    step_index: int
    model: str | None
    replay_input_tokens: int | None
    recorded: Usage | None
    when: datetime | None = None


@dataclass(frozen=True)
class CostSummary:
    """One compaction summary call: measured usage, or local estimates of its text."""

    step_index: int
    model: str | None
    input_tokens: int
    output_tokens: int
    measured: bool


def _library() -> tuple[Any, str]:
    import genai_prices

    return genai_prices, f"genai-prices {genai_prices.__version__} (its bundled price data)"


@lru_cache(maxsize=256)
def _known(model: str) -> str | None:
    """The library's name for ``model`` (None: no price known)."""
    lib, _ = _library()
    try:
        found = lib.calc_price(lib.Usage(input_tokens=1, output_tokens=1), model)
    except LookupError:
        return None
    return f"{found.provider.name} {found.model.name or found.model.id}"


def price(model: str | None, *, input_tokens: int, output_tokens: int = 0,
          cache_read_tokens: int = 0, cache_write_tokens: int = 0,
          when: datetime | None = None) -> Decimal | None:
    """USD price of one call (``input_tokens`` includes the cached ones), None if unknown."""
    if not model or _known(model) is None:
        return None
    lib, _ = _library()
    usage = lib.Usage(input_tokens=input_tokens, output_tokens=output_tokens,
                      cache_read_tokens=cache_read_tokens, cache_write_tokens=cache_write_tokens)
    try:
        return lib.calc_price(usage, model, genai_request_timestamp=when).total_price
    except LookupError:  # a model known today may have had no price at ``when``
        return lib.calc_price(usage, model).total_price


def _money(value: Decimal | None) -> float | None:
    return None if value is None else round(float(value), 6)


def _billed(step: CostStep, u: Usage) -> Decimal | None:
    """The step's recorded usage ``u`` priced with its cache reads and writes."""
    return price(step.model, input_tokens=u.prompt_tokens, output_tokens=u.output_tokens,
                 cache_read_tokens=u.cache_read_tokens, cache_write_tokens=u.cache_write_tokens,
                 when=step.when)


@dataclass
class _Sums:
    """Running totals of :func:`tally`."""

    requests: Decimal = Decimal(0)
    recorded: Decimal = Decimal(0)
    billed: Decimal = Decimal(0)
    same_steps: Decimal = Decimal(0)
    """The replayed requests of the steps that are also priced as recorded."""
    priced: int = 0
    compared: int = 0
    unpriced: set[str] = field(default_factory=set)

    def add(self, step: CostStep) -> None:
        out = step.recorded.output_tokens if step.recorded else 0
        mine = (price(step.model, input_tokens=step.replay_input_tokens, output_tokens=out,
                      when=step.when) if step.replay_input_tokens is not None else None)
        if mine is None:
            self.unpriced.add(step.model or "unknown model")
            return
        self.priced += 1
        self.requests += mine
        if step.recorded is not None and step.recorded.is_trusted:
            self.compared += 1
            self.same_steps += mine
            self.recorded += price(step.model, input_tokens=step.recorded.prompt_tokens,
                                   output_tokens=out, when=step.when) or 0
            self.billed += _billed(step, step.recorded) or 0


def tally(steps: Sequence[CostStep], summaries: Iterable[CostSummary] = ()) -> dict[str, Any]:
    """The cost object (see the module docstring for the basis) of priced steps and summaries."""
    sums = _Sums()
    for step in steps:
        sums.add(step)
    summaries = list(summaries)
    summary_cost = sum((price(s.model, input_tokens=s.input_tokens, output_tokens=s.output_tokens)
                        or Decimal(0) for s in summaries), Decimal(0))
    models = sorted({st.model for st in steps if st.model and st.model not in sums.unpriced})
    unknown = ", ".join(repr(m) for m in sorted(sums.unpriced))
    cost: dict[str, Any] = {
        "currency": "USD", "price_known": sums.priced > 0, "source": _library()[1],
        "basis": BASIS, "models": {m: _known(m) for m in models},
        "unpriced_models": sorted(sums.unpriced), "steps_priced": sums.priced,
        "steps_unpriced": len(steps) - sums.priced, "steps_compared": sums.compared,
        "requests_usd": None, "summaries_usd": None,
        "summaries_estimated": any(not s.measured for s in summaries), "replay_usd": None,
        "recorded_usd": None, "recorded_billed_usd": None, "saved_usd": None, "saved_pct": None,
        "note": f"no price known for {unknown}" if unknown else ""}
    if not sums.priced:
        cost["note"] = f"no price known for {unknown or 'no model recorded'}"
        return cost
    cost.update(requests_usd=_money(sums.requests), summaries_usd=_money(summary_cost),
                replay_usd=_money(sums.requests + summary_cost))
    if sums.compared:
        saved = sums.recorded - sums.same_steps - summary_cost
        cost.update(recorded_usd=_money(sums.recorded), recorded_billed_usd=_money(sums.billed),
                    saved_usd=_money(saved), saved_pct=round(float(saved / sums.recorded * 100), 1)
                    if sums.recorded else None)
    return cost


def _step_model(session: Session, at: int, fallback: str | None) -> tuple[str | None, Any, Any]:
    msg = session.messages[at] if 0 <= at < len(session.messages) else None
    if msg is None:
        return fallback, None, None
    model = msg.model or (msg.usage.model if msg.usage else None) or fallback
    return model, msg.usage, msg.timestamp


def _whole(preparation: Any) -> int | None:
    if getattr(preparation, "phase", "ready") != "ready":
        return None
    whole = getattr(preparation, "whole_request_tokens", None)
    return whole if whole is not None else preparation.final_input_tokens


def _steps(session: Session, preparations: Iterable[Any]) -> list[CostStep]:
    out, model = [], session.header.model
    for p in preparations:
        model, usage, when = _step_model(session, p.response_message_index, model)
        out.append(CostStep(p.step_index, model, _whole(p), usage, when))
    return out


def replay_cost(session: Session, replay: Any, *,
                estimator: TokenEstimator | None = None) -> dict[str, Any]:
    """The cost object of an ``iris.replay.Replay`` of ``session`` (``--summary-json``'s
    ``cost``)."""
    estimator = estimator or default_estimator()
    steps = _steps(session, replay.preparations)
    models = {s.step_index: s.model for s in steps}
    summaries = []
    for c in replay.checkpoints:
        model = models.get(c.step_index) or session.header.model
        if c.summary_usage is not None and c.summary_usage.is_trusted:
            u = c.summary_usage
            summaries.append(CostSummary(c.step_index, u.model or model, u.prompt_tokens,
                                         u.output_tokens, True))
        else:
            summaries.append(CostSummary(c.step_index, model,
                                         estimator.count(c.summary_request_text),
                                         estimator.count(c.checkpoint_text), False))
    return tally(steps, summaries)


def stored_replay_cost(session: Session, stored: Any, *,
                       estimator: TokenEstimator | None = None) -> dict[str, Any]:
    """The cost object of a saved replay (``services.replay.open_saved``): the summary request
    is estimated from the archived head, which is what the summariser read."""
    from .services.truth import truth_steps  # whole-request figures without parsing each preparation

    estimator = estimator or default_estimator()
    steps = _steps(session, truth_steps(stored))
    models = {s.step_index: s.model for s in steps}
    usage = {c.step_index: c.summary_usage for c in stored.facts.compactions}
    summaries = []
    for a in stored.archives():
        model = models.get(a.step_index) or session.header.model
        measured = usage.get(a.step_index)
        if measured is not None:
            summaries.append(CostSummary(a.step_index, measured.model or model,
                                         measured.prompt_tokens, measured.output_tokens, True))
        else:
            summaries.append(CostSummary(a.step_index, model, estimator.count(a.text),
                                         estimator.count(a.checkpoint_text), False))
    return tally(steps, summaries)


def saved_cost_lines(store: Any, session_id: str, replay_id: str) -> list[str]:
    """:func:`cost_lines` of a saved replay, cached until it is saved again (the Usage page)."""
    return list(store.replays.cached(replay_id, "cost lines",
                                     lambda: _saved_lines(store, session_id, replay_id)))


def _saved_lines(store: Any, session_id: str, replay_id: str) -> tuple[str, ...]:
    try:
        cost = stored_replay_cost(store.get_session(session_id), store.replays.open(replay_id))
    except Exception as exc:  # noqa: BLE001 -- a price that cannot be computed is a note, not a crash
        return (f"Cost: could not be computed ({exc}).",)
    return tuple(cost_lines(cost))


def cost_lines(cost: dict[str, Any]) -> list[str]:
    """Plain-language lines for the UI and reports."""
    if not cost.get("price_known"):
        return [f"Cost: {cost.get('note') or 'no price known'}."]
    lines = [f"Replayed requests ${cost['requests_usd']:,.4f} + summaries "
             f"${cost['summaries_usd']:,.4f}"
             + (" (estimated: no summary call reported usage)" if cost["summaries_estimated"]
                else "") + f" = ${cost['replay_usd']:,.4f}."]
    if cost.get("recorded_usd") is not None:
        lines.append(f"Recorded session ${cost['recorded_usd']:,.4f} on the same basis "
                     f"(${cost['recorded_billed_usd']:,.4f} as billed with its cache reads and "
                     f"writes): saved ${cost['saved_usd']:,.4f} ({cost['saved_pct']}%) over "
                     f"{cost['steps_compared']} steps.")
    if cost.get("note"):
        lines.append(cost["note"] + ".")
    lines.append(f"Prices: {cost['source']}; basis: {cost['basis']}.")
    return lines
