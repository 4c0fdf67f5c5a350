"""The one base of the project's records: a frozen pydantic model that rejects unknown fields.

Records are values (STYLE.md 4): built once, never mutated, compared and hashed by content.
``FrozenModel`` is the base every record model derives from; a model that also holds arbitrary
Python objects (a DataFrame, a figure) sets ``arbitrary_types_allowed`` on top of it.

A record that differs from another in a few fields is ``record.evolve(**UNCHANGED, field=value)``.
The checker reads ``record.evolve`` as the record's class, so each ``field=value`` is checked
against the constructor like any keyword argument (an unknown name or a value of the wrong type
is an error); ``**UNCHANGED`` stands for the fields left as they are (it is empty: the checker
only needs it so as not to ask for the required fields). At run time ``evolve`` is pydantic's
``model_copy(update=...)``, which neither validates nor re-runs ``__init__`` (a replay derives a
few records a step this way); the names are the checker's to check (testing them at run time
cost a fifth of a copy).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn, Self, TypeVar

from pydantic import BaseModel, ConfigDict

__all__ = ["UNCHANGED", "FrozenModel", "constructed"]


def _refuse(*_: object, **__: object) -> NoReturn:
    raise TypeError("UNCHANGED stays empty")


class _Unchanged(dict[str, Any]):
    """An empty dict that stays empty (``**`` of a dict is the fast path of a call; a read-only
    mapping proxy made each ``evolve`` half again as slow)."""

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _refuse


UNCHANGED: Mapping[str, Any] = _Unchanged()
"""``record.evolve(**UNCHANGED, field=value)``: the fields an evolved record keeps (see above)."""


class FrozenModel(BaseModel):
    """Frozen, ``extra="forbid"``: the base of every record model."""

    # defer_build: a class's validator and serializer are built when it is first used, not when
    # it is defined. A replay of a file uses about a third of the record classes it imports
    # (43 of 124: not the compaction engine's, the runner's or the store's); building every one
    # at import cost `workbench replay FILE` about 30 ms of CPU.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    if TYPE_CHECKING:
        @property
        def evolve(self) -> type[Self]:
            """This record with the given fields replaced:
            ``record.evolve(**UNCHANGED, field=value)`` (see the module docstring)."""
            ...
    else:
        def evolve(self, **changes: Any) -> Any:
            return self.model_copy(update=changes)


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
