"""The option objects of :func:`iris.replay.replay`, grouped by what they are.

``replay(session, config, prompts=..., summariser=...)`` is the common call; everything else has a
default and comes in three small frozen groups:

* :class:`ReplayObservers`: what the run reports to (evidence sink, event subscriber, progress,
  cancellation). Observers never change the records.
* :class:`ReplayEnvironment`: what the run reads besides the session (context source and static
  context, tool schemas, token estimator, workspace root) and the working directory it writes to.
* :class:`ReplayOptions`: how it runs (engine or as-recorded baseline, stop after a step,
  incremental step memory, whether the result keeps request and archive bodies, whether the
  garbage collector's passes skip the replay's long-lived objects).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .context import ContextBuildInput, ContextSource
    from .preparation.publisher import EvidenceSink, PreparationEvent
    from .tokens import TokenEstimator

__all__ = ["Baseline", "ReplayEnvironment", "ReplayObservers", "ReplayOptions", "StepProgress"]

StepProgress = Callable[[int, int], object]
"""The engine's progress callback: ``progress(steps done, steps in all)`` after each step."""

Baseline = Literal["engine", "recorded"]
"""``engine``: the configuration's reduction and compaction; ``recorded``: what the agent sent."""


@dataclass(frozen=True, kw_only=True)
class ReplayObservers:
    """What the replay reports to; a failing sink or subscriber never changes the records."""

    sink: EvidenceSink | None = None
    """Receives each preparation and its final request as the step is published (R-PREP-1)."""
    on_event: Callable[[PreparationEvent], object] | None = None
    """Subscribed to the publisher's broker: one ``context.preparation`` event per step."""
    progress: StepProgress | None = None
    """Called with ``(steps done, steps in all)`` after each step."""
    cancel: Callable[[], bool] | None = None
    """Asked between stages; True ends the replay with a ``cancelled`` step."""
    on_compaction: Callable[[Any, str], object] | None = None
    """Called with each compaction the replay commits (its ``iris.replay.AppliedCompaction``,
    named loosely here: that module imports this one) and its archive text, before the step is
    published (a host that streams the replay keeps the archive without the result holding it)."""


@dataclass(frozen=True, kw_only=True)
class ReplayEnvironment:
    """What the replay reads besides the session, and the working directory it writes to."""

    context_source: ContextSource | None = None
    """Dynamic context per step; None: the session's recorded context snapshots, if any."""
    context_input: ContextBuildInput | None = None
    """Static context (``context.yaml``), rendered once for every step."""
    tools: Sequence[Mapping[str, Any]] = ()
    """Tool schemas offered to the model (JSON objects with at least a ``name``)."""
    estimator: TokenEstimator | None = None
    """None: the shared default estimator."""
    workspace_root: str | Path | None = None
    """Where the configuration's ``prompts.root`` is looked up when no ``prompts`` are given."""
    work_dir: str | Path | None = None
    """Receives archives and reduction artifacts (use an empty directory: archive numbers continue
    from the ``history-N.md`` files already there). None: a temporary directory named after the
    session and configuration, removed afterwards."""


@dataclass(frozen=True, kw_only=True)
class ReplayOptions:
    """How the replay runs; the defaults replay every step with the engine."""

    baseline: Baseline = "engine"
    """``recorded``: what the agent really sent (see :attr:`iris.replay.Replay.baseline`)."""
    stop_after: int | None = None
    """``k``: prepare steps 0..k only (a complete, not cancelled, shorter replay)."""
    incremental: bool = True
    """False: every step is decided from scratch (no step memory carried between steps); the
    records are the same, it is only slower."""
    keep_bodies: bool = True
    """False: the result keeps neither the final requests nor the archive texts; each request goes
    only to the sink and the archives only to the session directory."""
    keep_records: bool = True
    """False: the result's ``preparations`` is empty; each preparation goes only to the sink, so
    a replay streamed into a store holds one step at a time (the records are the same)."""
    pause_collector: bool = True
    """True: while the replay runs, what each step leaves alive is moved into the collector's
    permanent generation (:mod:`iris.collector_pause`), so young-generation passes skip it; the
    objects return to the normal generations when the outermost replay ends. This touches
    process-wide collector state, shared with other threads: False leaves the collector alone
    (the records are the same, long replays are slower)."""

    def __post_init__(self) -> None:
        if self.baseline not in ("engine", "recorded"):
            raise ValueError(f"baseline must be 'engine' or 'recorded', got {self.baseline!r}")
        if self.stop_after is not None and self.stop_after < 0:
            raise ValueError(f"stop_after must be a step index (>= 0), got {self.stop_after}")
