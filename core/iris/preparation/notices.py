"""Pressure notices and the compaction grace inside the pipeline (R-CMP-11, R-CMP-12 grace).

The compaction stage asks :func:`pressure` once per step. It hands the same reading the stage's
own trigger uses (the provider's usage while the replayed history is the one measured, else the
replay's whole-request estimate) to :func:`iris.compaction.decide_trigger`, with the window the
replay carries: a line reached for the first time in the window yields one notice, the highest
applicable one (decide_trigger's priority order), and, with ``model_driven`` on, the first crossing
may be deferred by the grace.

Delivery follows the reference (seed 002): a notice is a durable ``<system-reminder>`` runtime
message (a synthetic user message) appended to the history when the line is reached; later
requests replay it from the history and nothing is appended again. Request-side notices are
injected only with ``model_driven`` on; without it the line is still recorded (``delivered`` false)
so the step-through shows where it was reached. A new window (applied compaction, model switch)
withdraws the notices of the old one: their numbers no longer describe the request.
"""

from __future__ import annotations

from dataclasses import replace

from ..compaction.triggers import PressureWindow, TriggerStep, decide_trigger
from ..compaction.usage import UsageReading
from ..frozen import UNCHANGED
from ..session import Message, TextBlock
from .records import PressureNotice
from .state import Part, PipelineSettings, PreparationState

__all__ = ["deliver", "pressure", "withdraw"]

NOTICE_KEY = "pressure-notice"


def _reading(state: PreparationState, basis: str, added: tuple[int, int]) -> UsageReading:
    """The reading behind the stage's trigger: the provider's, or the local estimate as one
    (basis ``none`` without any reading: 0, which reaches no line, R-TOK-4), with what the
    stage's trigger adds to it (``compaction.count_earlier_reasoning``: the earlier reasoning,
    and for the provider's count the messages after the last response)."""
    reasoning, after = added
    if basis == "agent_count" and state.usage_reading is not None:
        # the agent's own count of this very request, recorded with its compaction: a reading
        # of the model in use, also right after a model switch (R-TOK-5 holds back the old
        # model's reading, which this is not)
        return state.usage_reading.evolve(
            **UNCHANGED, tokens=state.usage_reading.tokens + reasoning + after, kind="observed",
            approximate=False, can_trigger=True, source="response")
    if basis != "calibrated_local" and state.usage_reading is not None:
        reading = state.usage_reading
        if reasoning or after:
            reading = reading.evolve(**UNCHANGED, tokens=reading.tokens + reasoning + after)
        return reading
    if basis == "none":
        return UsageReading(tokens=0, kind="none", approximate=False, can_trigger=False)
    return UsageReading(tokens=state.whole(state.input_tokens) + reasoning, kind="estimated",
                        approximate=True, can_trigger=True, source="byte_estimate")


def pressure(state: PreparationState, settings: PipelineSettings, basis: str,
             added: tuple[int, int] = (0, 0)) -> tuple[TriggerStep, str]:
    """decide_trigger for this step with the carried window (a fresh one when None), and what
    the reading is: ``provider`` usage, a frozen ``estimate`` or the replay's ``local`` one."""
    reading = _reading(state, basis, added)
    provider = basis != "calibrated_local" and state.usage_reading is not None
    source = "calibrated_local" if not provider else (
        "provider" if reading.kind == "observed" else "provider_estimate")
    step = decide_trigger(reading, settings.thresholds, window=state.window or PressureWindow(),
                          model_driven=bool(settings.config.compaction.model_driven),
                          local_estimate=state.input_tokens)
    return step, source


def deliver(state: PreparationState, settings: PipelineSettings, step: TriggerStep,
            basis: str) -> tuple[PreparationState, PressureNotice | None]:
    """Record the step's notice; with ``model_driven`` append it to the durable history and this
    request (the window is stored either way, so a line is reported once per window)."""
    state = replace(state, window=step.window)
    notice = step.notice
    if notice is None:
        return state, None
    t = settings.thresholds
    line = t.reminder_line if notice.kind == "reminder" else t.threshold_line
    tokens = step.usage.tokens if step.usage is not None else state.input_tokens
    what = (f"{notice.kind} line {line:,} reached at {tokens:,} tokens ({basis} reading)"
            if line else f"{notice.kind} notice")
    if not settings.config.compaction.model_driven:
        return state, PressureNotice(
            notice=notice.kind, line=line, reading_tokens=tokens, basis=basis, delivered=False,
            reason=f"{what}; no notice injected: request-side notices need model_driven "
                   "(without it the runtime owns compaction)")
    message = Message(role="user", content=(TextBlock(text=notice.text),), synthetic=True)
    n = settings.cache.message(message)
    part = Part(message, n, "notice", None, f"{NOTICE_KEY}:{notice.kind}", marks=("notice",))
    index = len(state.history)
    new = replace(state, durable=state.durable + (part,), durable_tokens=state.durable_tokens + n,
                  history=state.history + (part,), history_tokens=state.history_tokens + n)
    return new, PressureNotice(
        notice=notice.kind, line=line, reading_tokens=tokens, basis=basis, delivered=True,
        text=notice.text, tokens=n, message_index=index,
        reason=f"{what}: first time in this window, one durable notice appended "
               f"({n:,} tokens); later requests carry it from the history")


def withdraw(state: PreparationState) -> PreparationState:
    """A new window: the old window's notices leave the durable history and this request.

    ``durable`` and ``history`` are aligned position by position, so the same positions go from
    both (a notice is recognised in either copy)."""
    drop = {i for i, p in enumerate(state.history) if p.origin == "notice"}
    drop |= {i for i, p in enumerate(state.durable) if p.origin == "notice"}
    if not drop:
        return replace(state, window=None)
    durable = tuple(p for i, p in enumerate(state.durable) if i not in drop)
    history = tuple(p for i, p in enumerate(state.history) if i not in drop)
    return replace(state, window=None, durable=durable,
                   durable_tokens=sum(p.tokens for p in durable), history=history,
                   history_tokens=sum(p.tokens for p in history))
