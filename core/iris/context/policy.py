"""`context_policy` (R-POL-1): read-back tools, old-body trimming and deferred tool disclosure."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["ContextPolicy"]


class ContextPolicy(BaseModel):
    """Context organisation policy. Disabling read-back does not disable organisation or summary."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    """Provide ``context_read``/``context_search`` and allow old-body trimming."""
    preserve_recent_tool_groups: int = Field(2, ge=0)
    """The most recent complete tool groups are never trimmed."""
    old_result_preview_chars: int = Field(512, ge=0)
    """Characters of a trimmed body kept as preview (0 keeps only the note and the reference)."""
    deferred_tools: bool = False
    """On-demand tool disclosure; requires ``enabled: true``."""

    @model_validator(mode="after")
    def _deferred_needs_enabled(self) -> ContextPolicy:
        if self.deferred_tools and not self.enabled:
            raise ValueError("deferred_tools requires enabled: true")
        return self
