"""The workbench store as the engine's evidence sink (R-PREP-5): ``store.replays.sink(...)``
writes each published preparation as it arrives, through the repository's one write path."""

from __future__ import annotations

from .replays import StoreSink

__all__ = ["StoreSink"]
