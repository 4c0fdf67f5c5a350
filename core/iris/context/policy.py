"""`context_policy` (R-POL-1): read-back tools, old-body trimming and deferred tool disclosure."""

from __future__ import annotations

from pydantic import Field, StrictBool, StrictInt, model_validator

from ..frozen import FrozenModel

__all__ = ["ContextPolicy"]


class ContextPolicy(FrozenModel):
    """Context organisation policy. Disabling read-back does not disable organisation or summary.

    Fields are strict: booleans are ``true``/``false`` only (no ``"yes"``, ``"off"``, ``1``) and
    integers whole numbers only (no ``"2"``, no ``true``), like the slot fields."""

    enabled: StrictBool = True
    """Provide ``context_read``/``context_search`` and allow old-body trimming."""
    preserve_recent_tool_groups: StrictInt = Field(default=2, ge=0)
    """The most recent complete tool groups are never trimmed."""
    old_result_preview_chars: StrictInt = Field(default=512, ge=0)
    """Characters of a trimmed body kept as preview (0 keeps only the note and the reference)."""
    deferred_tools: StrictBool = False
    """On-demand tool disclosure; requires ``enabled: true``."""

    @model_validator(mode="after")
    def _deferred_needs_enabled(self) -> ContextPolicy:
        if self.deferred_tools and not self.enabled:
            raise ValueError("deferred_tools requires enabled: true")
        return self
