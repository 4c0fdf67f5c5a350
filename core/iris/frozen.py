"""The one base of the project's records: a frozen pydantic model that rejects unknown fields.

Records are values (STYLE.md 4): built once, never mutated, compared and hashed by content.
``FrozenModel`` is the base every record model derives from; a model that also holds arbitrary
Python objects (a DataFrame, a figure) sets ``arbitrary_types_allowed`` on top of it.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

__all__ = ["FrozenModel", "constructed"]


class FrozenModel(BaseModel):
    """Frozen, ``extra="forbid"``: the base of every record model."""

    model_config = ConfigDict(frozen=True, extra="forbid")


M = TypeVar("M", bound=BaseModel)
_new, _set = object.__new__, object.__setattr__


def constructed(cls: type[M], values: dict[str, Any]) -> M:
    """What ``cls.model_construct(**values)`` makes when ``values`` gives every field in field
    order (the caller's own values, already of the declared types; ``values`` is taken over),
    without its per-field pass: pydantic's ``model_construct`` costs more than validating a small
    model, and a replay makes a few such records per step."""
    obj = _new(cls)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", None)
    private = cls.__private_attributes__
    _set(obj, "__pydantic_private__",
         {name: attr.get_default() for name, attr in private.items()} if private else None)
    return obj
