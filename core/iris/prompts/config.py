"""`prompts` configuration (R-PRM-1)."""

from __future__ import annotations

from ..frozen import FrozenModel

__all__ = ["PromptConfig"]


class PromptConfig(FrozenModel):
    """Where the project's prompt templates live, relative to the workspace root."""

    root: str = ".iris/prompts"
