"""Failed preparations (R-UI-7): every failed or cancelled step with its error, the stage that
failed, and a link that opens that step on the step-through page.

The link is the same query a user sees in the address bar (``?session=…&replay=…&step=…``), so a
reviewer can paste it into a bug report and whoever opens it lands on the same step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol
from urllib.parse import urlencode

import pandas as pd

__all__ = ["FAILURE_COLUMNS", "failures_table", "step_link"]

#: The URL path of the step-through page (``pages/step_through.py``, url path as app.py names it).
STEP_PAGE = "step-through"

FAILURE_COLUMNS = ["step", "phase", "stage", "kind", "error", "link"]


class FailedLike(Protocol):
    """What the failures table reads of a step; read-only, so a frozen ContextPreparation is one."""

    @property
    def step_index(self) -> int: ...

    @property
    def phase(self) -> str: ...


def step_link(session_id: str, replay_id: str, step: int, *, page: str = STEP_PAGE) -> str:
    """A relative link to one step of one replay."""
    return f"{page}?" + urlencode({"session": session_id, "replay": replay_id, "step": step})


def failures_table(steps: Sequence[FailedLike], *, session_id: str, replay_id: str) -> pd.DataFrame:
    """Failed and cancelled steps, in step order, with a link to each."""
    rows = []
    for s in steps:
        if s.phase == "ready":
            continue
        stage, kind, message = _error_of(s)
        rows.append({"step": s.step_index, "phase": s.phase, "stage": stage or "—",
                     "kind": kind or "error", "error": message or "(no message recorded)",
                     "link": step_link(session_id, replay_id, s.step_index)})
    return pd.DataFrame(rows, columns=FAILURE_COLUMNS)


def _error_of(step: object) -> tuple[str | None, str | None, str | None]:
    """The error fields of a stored step row or of a full ``ContextPreparation``."""
    error = getattr(step, "error", None)
    if error is not None:
        return error.stage, error.kind, error.message
    return (getattr(step, "error_stage", None), getattr(step, "error_kind", None),
            getattr(step, "error_message", None))
