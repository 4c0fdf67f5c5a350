"""The one base of the project's records: a frozen pydantic model that rejects unknown fields.

Records are values (STYLE.md 4): built once, never mutated, compared and hashed by content.
``FrozenModel`` is the base every record model derives from; a model that also holds arbitrary
Python objects (a DataFrame, a figure) sets ``arbitrary_types_allowed`` on top of it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["FrozenModel"]


class FrozenModel(BaseModel):
    """Frozen, ``extra="forbid"``: the base of every record model."""

    model_config = ConfigDict(frozen=True, extra="forbid")
