"""Unrecorded overhead and the calibrated estimate of a whole request (see docs/compaction.md).

A transcript does not contain everything the provider counted: the agent's system prompt, its tool
schemas and the provider's framing are sent with every request but never recorded. And the local
tokenizer (cl100k) is not the provider's. Both are measured per session on the requests the
recorded agent really sent (the *as-recorded* request: the recorded history, with the recorded
compactions applied and no engine reduction), so the replay never needs the future:

* **Unrecorded overhead** ``O``: at the first response with trusted usage of a recorded window,
  ``O = provider prompt − ratio × local`` (with ratio 1 before any sample). A recorded compaction
  opens a new window (the agent re-sends files and instructions it does not record), so the
  window overhead is measured again at the first response after it; :attr:`Calibration.overhead`
  stays the first measurement (system prompt and tools: what every replayed request carries)
  unless a later window's is smaller: the first window then carried history the file does not
  hold (a transcript that starts mid-session), which the agent's compaction summarised away.
* **Calibration ratio** ``r``: the first sample after the overhead's solves both from the two
  responses (``r = Δprovider / Δlocal``, the overhead measured again with it); then after every
  later response with trusted usage,
  ``r = (provider prompt − window overhead) / local`` of that request, once the local part is at
  least :data:`MIN_SAMPLE_TOKENS` (smaller samples are dominated by rounding). It is the latest
  sample, like Chord's byte calibration: the history only grows between samples, so the latest
  ratio is the best guess for the next request.

* **Unrecorded compactions**: when a provider count falls below :data:`UNRECORDED_DROP` of the
  previous one while the recorded history did not shrink, the agent compacted without recording
  it; the provider no longer measures the as-recorded request, so the ratio is frozen
  (:attr:`Calibration.frozen_at`) until a recorded compaction opens a new window.

* **History not in the file**: a transcript can continue a conversation whose start it does
  not hold (the file begins mid-session). Its first measured overhead is then the fixed part
  (system prompt and tools, what the agent sends before any message) plus that history. The
  fixed part is what the provider still reads from its cache at the first response after one of
  the agent's recorded compactions (the compaction rewrites everything after it):
  :func:`continued_prefix` measures it over the session and says whether the first response
  read more than that from the cache (it continued a history the provider had seen). An agent
  profile's own compaction summarises that history away with the rest
  (:meth:`Calibration.folded`): the overhead its later requests carry is the fixed part.

The calibrated whole-request estimate of a local estimate ``L`` is ``round(r × L) + O``. The
configuration can fix or disable both (``estimate:``, :class:`EstimateConfig`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ..frozen import UNCHANGED, FrozenModel
from ..session import Session

__all__ = ["MIN_SAMPLE_TOKENS", "UNRECORDED_DROP", "Calibration", "EstimateConfig", "TriggerBasis",
           "continued_prefix"]

#: Smallest local estimate whose provider count updates the ratio.
MIN_SAMPLE_TOKENS = 2000
#: A provider count below this share of the previous one, while the recorded history did not
#: shrink, is a compaction the transcript does not record: the ratio is frozen from then on.
UNRECORDED_DROP = 0.8

TriggerBasis = Literal["provider", "agent_count", "provider_estimate", "calibrated_local",
                       "disabled", "none"]
"""What the trigger compared: the provider's count of the recorded request (``provider``), the
agent's own count recorded with its compaction (``agent_count``: Claude Code's ``preTokens``), its
frozen byte estimate (``provider_estimate``, R-TOK-4), the calibrated local estimate plus the
unrecorded overhead (``calibrated_local``), nothing (``disabled``: threshold 0; ``none``: no
reading yet)."""


class EstimateConfig(FrozenModel):
    """``estimate:`` section: how whole-request figures are calibrated."""

    unrecorded_overhead: int | Literal["auto"] = "auto"
    """``auto`` measures it from the session; a number fixes it (0 disables it)."""
    calibrate: bool = True
    """False keeps the ratio at 1 (the raw local estimate)."""

    @field_validator("unrecorded_overhead")
    @classmethod
    def _non_negative(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 0:
            raise ValueError("must be 'auto' or a non-negative integer")
        return value


class Calibration(FrozenModel):
    """The calibration known before a request: built only from earlier responses."""

    overhead: int = 0
    """Unrecorded overhead carried in every whole-request figure of a replay."""
    overhead_step: int | None = None
    """Step whose response measured :attr:`overhead` (None: not measured, or fixed)."""
    overhead_source: Literal["measured", "configuration", "none"] = "none"
    window_overhead: int = 0
    """The overhead of the current recorded window (re-measured after a recorded compaction)."""
    window_step: int | None = None
    ratio: float = 1.0
    """Provider tokens per local token, from the latest sample."""
    ratio_step: int | None = None
    """Step whose response gave :attr:`ratio` (None: no sample yet, ratio 1)."""
    samples: int = 0
    window_sample: tuple[int, int] | None = None
    """``(local, provider)`` of the response that measured the window overhead."""
    last_sample: tuple[int, int] | None = None
    """``(local, provider)`` of the latest response with usage."""
    frozen_at: int | None = None
    """Step whose provider count fell while the recorded history did not (a compaction the
    transcript does not record): the provider no longer measures the as-recorded request, so
    the ratio keeps its last value until a recorded compaction opens a new window."""
    fixed_overhead: int | None = Field(default=None, exclude=True)
    calibrate: bool = Field(default=True, exclude=True)
    fixed_prefix: int | None = Field(default=None, exclude=True)
    """The session continues a conversation the file does not hold: what every request carries
    before the history (:func:`continued_prefix`); the measured overhead above it is that
    history, which :meth:`folded` drops. None: the file holds its conversation from the start."""
    remeasure: bool = Field(default=False, exclude=True)
    """Set by :meth:`folded`: the next recorded window measures overhead and ratio afresh."""
    restored_local: int = Field(default=0, exclude=True)
    """Local tokens of the files the replay's own compaction restored (set by :meth:`folded`):
    the agent's restored files are not in the transcript, so the overhead measured on the
    recorded request holds them, and the replay's request holds its own in their place."""

    @classmethod
    def start(cls, config: EstimateConfig | None) -> Calibration:
        config = config or EstimateConfig()
        if isinstance(config.unrecorded_overhead, int):
            o = config.unrecorded_overhead
            return cls(overhead=o, window_overhead=o, fixed_overhead=o,
                       overhead_source="configuration", calibrate=config.calibrate)
        return cls(calibrate=config.calibrate)

    def folded(self, restored: int = 0) -> Calibration:
        """The calibration after a compaction of the replay's own in a session that continues an
        earlier conversation: the summary replaced the history the file does not hold, so the
        overhead is the fixed part alone (unchanged for any other session). ``restored``: local
        tokens of the files that compaction restored."""
        if self.fixed_prefix is None:
            return self
        return self.evolve(**UNCHANGED, overhead=min(self.overhead, self.fixed_prefix),
                           fixed_prefix=None, remeasure=True, restored_local=restored)

    def whole(self, local: int, *, window: bool = False) -> int:
        """Calibrated whole-request estimate of a local estimate (plus the overhead)."""
        return round(self.ratio * local) + (self.window_overhead if window else self.overhead)

    def observe(self, step: int, local: int, provider: int | None, *,
                new_window: bool = False) -> Calibration:
        """The response of ``step`` reported ``provider`` prompt tokens for the as-recorded
        request whose local estimate is ``local``; ``new_window``: the first response after a
        recorded compaction."""
        if provider is None or provider <= 0:
            return self
        return self._observe(step, local, provider, new_window).evolve(
            **UNCHANGED, last_sample=(local, provider))

    def _unrecorded_drop(self, local: int, provider: int) -> bool:
        if self.last_sample is None:
            return False
        last_local, last_provider = self.last_sample
        return provider < UNRECORDED_DROP * last_provider and local >= last_local

    def _observe(self, step: int, local: int, provider: int, new_window: bool) -> Calibration:
        if new_window and self.frozen_at is not None:
            return self.evolve(**UNCHANGED, frozen_at=None)._measure(step, local, provider,
                                                                     new_window)
        if not new_window and self.frozen_at is not None:
            return self
        if not new_window and self._unrecorded_drop(local, provider):
            return self.evolve(**UNCHANGED, frozen_at=step)
        return self._measure(step, local, provider, new_window)

    def _measure(self, step: int, local: int, provider: int, new_window: bool) -> Calibration:
        if new_window and self.remeasure:
            return self._afresh(step, local, provider)
        first = self.window_step is None and self.fixed_overhead is None
        if first or (new_window and self.fixed_overhead is None):
            measured = max(provider - round(self.ratio * local), 0)
            window = self.evolve(**UNCHANGED, window_overhead=measured, window_step=step,
                                 window_sample=(local, provider))
            if first:
                return window.evolve(**UNCHANGED, overhead=measured, overhead_step=step,
                                     overhead_source="measured")
            if measured < self.overhead:  # the first window carried more than every request
                return window.evolve(**UNCHANGED, overhead=measured, overhead_step=step)
            return window
        if not self.calibrate or local < MIN_SAMPLE_TOKENS or new_window:
            return self
        if self.ratio_step is None and self.fixed_overhead is None and self.window_sample:
            return self._two_point(step, local, provider, self.window_sample)
        ratio = max(provider - self.window_overhead, 1) / local
        return self.evolve(**UNCHANGED, ratio=ratio, ratio_step=step, samples=self.samples + 1)

    def _afresh(self, step: int, local: int, provider: int) -> Calibration:
        """The first recorded window after the history not in the file was folded away: the
        earlier window measured its overhead on a request whose history lay almost all outside
        the file, so its ratio also took in whatever the agent added unrecorded since; this
        window's first response measures the overhead again (at ratio 1) and the next sample
        solves both, as at the start of a session. The agent's restored files are part of what
        the recorded request does not hold; the replay's requests hold their own restored files
        instead, so their overhead leaves those out (:attr:`restored_local`)."""
        measured = max(provider - local, 0)
        return self.evolve(**UNCHANGED, ratio=1.0, ratio_step=None,
                           overhead=max(measured - self.restored_local, 0), overhead_step=step,
                           window_overhead=measured, window_step=step,
                           window_sample=(local, provider), remeasure=False)

    def _two_point(self, step: int, local: int, provider: int, sample: tuple[int, int]
                   ) -> Calibration:
        """The first ratio sample: solve overhead and ratio from the two samples (the overhead
        measured alone assumed ratio 1)."""
        l0, p0 = sample
        if local - l0 < MIN_SAMPLE_TOKENS or provider <= p0:
            return self  # too close to the first sample: wait for the history to grow
        ratio = (provider - p0) / (local - l0)
        overhead = max(p0 - round(ratio * l0), 0)
        return self.evolve(**UNCHANGED, ratio=ratio, ratio_step=step, samples=self.samples + 1,
                           window_overhead=overhead,
                           overhead=max(overhead - round(ratio * self.restored_local), 0)
                           if self.window_step == self.overhead_step else self.overhead)


def continued_prefix(session: Session) -> int | None:
    """The fixed part of every request when ``session`` continues a conversation whose start the
    file does not hold; None otherwise, or when it cannot be measured.

    The fixed part is the largest cache read of the first response with usage after each of the
    agent's recorded compactions: a compaction rewrites the history, so the provider can still
    read only the system prompt and tools from its cache (a cache that expired reads less,
    hence the largest). Whether the session continues an earlier conversation is the file's own
    word where its format gives one (:attr:`SessionHeader.continues`: a Claude Code file's first
    line follows a message the file does not hold), which also covers a resume whose cache had
    expired (its first response read nothing from the cache and wrote it all). Where the format
    says nothing, it continues when its first response with usage read more than the fixed part
    from the cache: a history sent before, not in the file, is cached there (a session's first
    request holds little else before its first message; another session's cache of the same
    start can also be read, which only the file's own word rules out).
    """
    usages = [(i, m.usage) for i, m in enumerate(session.messages)
              if m.role == "assistant" and m.usage is not None and not m.compaction_provided]
    if not usages or not session.compactions:
        return None
    prefix = 0
    for compaction in session.compactions:
        after = next((u for i, u in usages if i >= compaction.at_message), None)
        if after is not None and not after.cache_read_in_input:
            prefix = max(prefix, after.cache_read_tokens)
    if prefix <= 0 or session.header.continues is False:
        return None
    if session.header.continues:
        return prefix
    first = usages[0][1]
    return None if first.cache_read_in_input or first.cache_read_tokens <= prefix else prefix
