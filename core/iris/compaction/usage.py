"""Usage tracking (R-TOK-3…6): what the context gauge shows and what may trigger compaction.

A pure, incremental tracker: each ``observe_*`` returns a new frozen :class:`UsageTracker`.
Provider usage is authoritative. A response without usage (or with 0) gets a byte-calibrated
estimate from the last trusted sample, frozen for that request and marked ``≈``; with no sample
the reading is 0 and never triggers. A model switch or a restored snapshot keeps the old reading
for display (``≈``) but it triggers nothing until a new response replaces it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from typing import Literal

from pydantic import Field

from ..frozen import UNCHANGED, FrozenModel
from ..session import Message, ThinkingBlock, ToolCallBlock, Usage, block_text
from .thresholds import Thresholds

__all__ = ["RunUsage", "TriggerDecision", "UsageReading", "UsageSample", "UsageTotals",
           "UsageTracker", "context_bytes", "should_trigger"]


_Frozen = FrozenModel


def context_bytes(messages: Sequence[Message]) -> int:
    """UTF-8 bytes of what a request replays: text, tool-call arguments, thinking (R-TOK-4)."""
    total = 0
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolCallBlock):
                total += len(json.dumps(block.arguments, sort_keys=True, ensure_ascii=False)
                             .encode()) + len(block.name.encode())
            elif isinstance(block, ThinkingBlock):
                total += len(block.text.encode())
            else:
                total += len(block_text(block).encode())
    return total


class UsageTotals(_Frozen):
    """Summed provider usage of one kind of call."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    prompt_tokens: int = 0
    """Normalised prompt sizes summed (R-TOK-3)."""
    attempts: int = 0
    """HTTP requests, retries included (summary clients that count them; 0 otherwise)."""
    failures: int = 0
    """Summary calls that failed after their attempts."""
    refused: int = 0
    """Summary requests refused without a call by an open circuit breaker."""
    cache_hits: int = 0
    """Summary requests answered from the summary cache (no call, no tokens)."""

    def add(self, usage: Usage | None) -> UsageTotals:
        if usage is None:
            return self.evolve(**UNCHANGED, calls=self.calls + 1)
        return self.evolve(
            **UNCHANGED, calls=self.calls + 1, input_tokens=self.input_tokens + usage.input_tokens,
            output_tokens=self.output_tokens + usage.output_tokens,
            prompt_tokens=self.prompt_tokens + usage.prompt_tokens)


class RunUsage(_Frozen):
    """Main-model and compaction (summary) usage counted apart (R-TOK-6)."""

    main: UsageTotals = Field(default_factory=UsageTotals)
    compaction: UsageTotals = Field(default_factory=UsageTotals)


class UsageSample(_Frozen):
    """The last trusted prompt size and the context bytes of the request it measured."""

    prompt_tokens: int
    context_bytes: int
    model: str | None = None


ReadingKind = Literal["observed", "estimated", "none"]


class UsageReading(_Frozen):
    """The gauge value for one request."""

    tokens: int
    kind: ReadingKind
    approximate: bool
    """Shown with ``≈`` (estimates, readings carried over a switch or restored)."""
    can_trigger: bool
    """False for the old model's reading after a switch, restored readings and "no sample"."""
    output_tokens: int = 0
    source: Literal["response", "byte_estimate", "no_sample", "model_switch", "restored",
                    "compaction"] = "no_sample"

    @property
    def label(self) -> str:
        return f"≈{self.tokens:,}" if self.approximate else f"{self.tokens:,}"


_NO_READING = UsageReading(tokens=0, kind="none", approximate=False, can_trigger=False)


class UsageTracker(_Frozen):
    """Incremental usage state of one session run."""

    model: str | None = None
    sample: UsageSample | None = None
    reading: UsageReading = _NO_READING
    totals: RunUsage = Field(default_factory=RunUsage)

    @classmethod
    def restored(cls, tokens: int, *, model: str | None = None) -> UsageTracker:
        """A session restored from a snapshot: display the reading with ``≈``, trigger nothing."""
        return cls(model=model, reading=UsageReading(
            tokens=tokens, kind="estimated", approximate=True, can_trigger=False,
            source="restored"))

    def observe_response(self, usage: Usage | None, *, context_bytes: int,
                         model: str | None = None) -> UsageTracker:
        """A main-model response arrived; ``context_bytes`` are the bytes of its request."""
        totals = self.totals.evolve(**UNCHANGED, main=self.totals.main.add(usage))
        model = model or self.model
        if usage is not None and usage.is_trusted:
            reading = UsageReading(tokens=usage.prompt_tokens, kind="observed", approximate=False,
                                   can_trigger=True, output_tokens=usage.output_tokens,
                                   source="response")
            sample = UsageSample(prompt_tokens=usage.prompt_tokens, context_bytes=context_bytes,
                                 model=model)
            return UsageTracker(model=model, sample=sample, reading=reading, totals=totals)
        if self.sample is None or self.sample.context_bytes <= 0:
            return self.evolve(**UNCHANGED, model=model, reading=_NO_READING, totals=totals)
        estimate = round(self.sample.prompt_tokens * context_bytes / self.sample.context_bytes)
        reading = UsageReading(tokens=estimate, kind="estimated", approximate=True,
                               can_trigger=True, source="byte_estimate")
        return self.evolve(**UNCHANGED, model=model, reading=reading, totals=totals)

    def observe_switch(self, model: str) -> UsageTracker:
        """The model changed: the old reading stays displayed with ``≈`` and triggers nothing."""
        if model == self.model:
            return self
        reading = self.reading
        if reading.kind != "none":
            reading = reading.evolve(**UNCHANGED, approximate=True, can_trigger=False,
                                     source="model_switch")
        return self.evolve(**UNCHANGED, model=model, reading=reading)

    def observe_rejected_summary(self, usage: Usage | None) -> UsageTracker:
        """A summary call whose summary was not applied: its reported usage still goes to
        ``totals.compaction`` (R-TOK-6); the reading is unchanged."""
        if usage is None:
            return self
        totals = self.totals.evolve(**UNCHANGED, compaction=self.totals.compaction.add(usage))
        return self.evolve(**UNCHANGED, totals=totals)

    def observe_compaction(self, tokens_after: int, usage: Usage | None = None) -> UsageTracker:
        """An applied compaction replaces the reading with its local estimate (``≈``); the
        summary call's usage goes to ``totals.compaction``."""
        totals = self.totals
        if usage is not None:
            totals = totals.evolve(**UNCHANGED, compaction=totals.compaction.add(usage))
        reading = UsageReading(tokens=tokens_after, kind="estimated", approximate=True,
                               can_trigger=False, source="compaction")
        return self.evolve(**UNCHANGED, reading=reading, totals=totals)


class TriggerDecision(_Frozen):
    """Whether the usage reading starts automatic compaction at the next main request."""

    trigger: bool
    basis: Literal["provider", "estimate", "no_sample", "untrusted", "disabled", "below"]
    tokens: int
    line: int | None
    local_estimate: int | None = None
    reason: str


def should_trigger(reading: UsageReading, t: Thresholds, *,
                   local_estimate: int | None = None) -> TriggerDecision:
    """R-TOK-3…5 / R-CMP-10: provider usage decides; a lower local estimate never cancels it.

    The effective size is prompt + output of the last response (the next request carries that
    output too). Byte-calibrated ``≈`` estimates may trigger (early compaction only).
    """
    line = t.threshold_line
    tokens = reading.tokens + reading.output_tokens
    common = partial(TriggerDecision, tokens=tokens, line=line, local_estimate=local_estimate)
    if line is None:
        return common(trigger=False, basis="disabled", reason="automatic compaction is "
                      "disabled (threshold 0)")
    if reading.kind == "none":
        return common(trigger=False, basis="no_sample", reason="no trusted usage sample "
                      "yet: the gauge shows 0 and never triggers")
    if not reading.can_trigger:
        return common(trigger=False, basis="untrusted", reason=f"reading from "
                      f"{reading.source.replace('_', ' ')} is display-only")
    basis = "provider" if reading.kind == "observed" else "estimate"
    if tokens >= line:
        return common(trigger=True, basis=basis, reason=f"{tokens:,} ≥ threshold line "
                      f"{line:,} ({basis} usage)")
    return common(trigger=False, basis="below", reason=f"{tokens:,} < threshold line "
                  f"{line:,}")
