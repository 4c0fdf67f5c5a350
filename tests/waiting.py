"""Waiting for a condition, never for a fixed time: CI machines are shared and often loaded."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], *, seconds: float, what: str,
               poll: float = 0.05) -> None:
    """Return as soon as ``condition()`` is true; fail naming ``what`` after ``seconds``.

    The short poll only spaces out reads of another process's state (a store, a file); the test
    goes on the moment the condition holds."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:g} s for {what}")
        time.sleep(poll)
