"""Fewer garbage-collector passes over a replay's long-lived objects.

A replay keeps the loaded session and every earlier step's records alive until it returns. CPython's
full collections traverse all of them, and they come more often as the result grows: at 2,000
steps a few of them cost hundreds of milliseconds each and set the per-step p99. While a replay
runs, :func:`replay_collections` moves everything alive at its start, and after each step what that
step left alive, into the collector's permanent generation (:func:`gc.freeze`, an O(1) list splice),
so the regular young-generation passes only look at what the current step allocates. The objects
return to the normal generations when the outermost replay ends (:func:`gc.unfreeze`); garbage
cycles frozen on the way are freed by the next full collection after that.

Replays on several threads share the freeze: the first to start and the last to end decide.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Generator
from contextlib import contextmanager

from . import lineage

__all__ = ["StepFreezer", "replay_collections"]

_lock = threading.Lock()
_active = 0
_running = 0
"""Replays running now, whether they freeze or not."""


class StepFreezer:
    """Handed to the replay loop: :meth:`step_done` freezes what the step left alive."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def step_done(self) -> None:
        if self.enabled:
            gc.freeze()


@contextmanager
def replay_collections(enabled: bool = True) -> Generator[StepFreezer]:
    """Freeze long-lived objects for the duration of one replay (see the module doc). When the
    last running replay ends, the shared-prefix notes (:mod:`iris.lineage`), which hold its latest
    histories, are dropped too."""
    global _running
    with _lock:
        _running += 1
    try:
        if not enabled or not gc.isenabled():
            yield StepFreezer(False)
        else:
            with _frozen():
                yield StepFreezer(True)
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                lineage.forget()


@contextmanager
def _frozen() -> Generator[None]:
    global _active
    with _lock:
        _active += 1
        gc.freeze()
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                gc.unfreeze()
