"""The one progress protocol of the workbench: ``progress(fraction, label)``.

Long calls (imports, replays that save, reports) report the fraction of their work done (0…1) and
a short label of what runs; the CLI draws it on a terminal, the app in a progress bar. The engine
reports steps instead (``iris.replay.StepProgress``: steps done, steps in all).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Progress", "no_progress"]


class Progress(Protocol):
    """``fraction`` of the work done (0…1) and a short label of what runs."""

    def __call__(self, fraction: float, label: str, /) -> object: ...


def no_progress(fraction: float, label: str, /) -> None:
    """The default: report nothing."""

