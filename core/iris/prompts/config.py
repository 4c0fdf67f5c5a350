"""`prompts` configuration (R-PRM-1)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["PromptConfig"]


class PromptConfig(BaseModel):
    """Where the project's prompt templates live, relative to the workspace root."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    root: str = ".iris/prompts"
