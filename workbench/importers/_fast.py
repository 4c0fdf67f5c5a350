"""Frozen session records built without validating again what the importer has already checked.

Pydantic validation of every block, usage and message was a large share of the import time of a
big transcript, although the importers check each field's type themselves first so that
a bad line names its file, line and field. :func:`maker` returns a constructor for one model that
fills the instance directly: the same field values, defaults and ``model_fields_set`` as the
validating constructor. Only the importers use it, and only with values of the declared types.

:func:`validating` switches every maker back to the validating constructor; the equivalence tests
import with and without it and require equal sessions. :func:`paused_gc` keeps the cycle
collector from rescanning the growing session while a file is read.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["maker", "paused_gc", "validating"]

M = TypeVar("M", bound=BaseModel)

_new, _set = object.__new__, object.__setattr__
_validate = [False]
"""One flag for all makers (a list so the closures see changes)."""


def maker(cls: type[M], *given: str) -> Callable[..., M]:
    """A constructor ``make(*values)`` for ``cls`` taking the fields ``given``, in that order.

    Every field not given must have a plain default (checked here, once, at import time)."""
    fields = cls.model_fields
    unknown = [n for n in given if n not in fields]
    lacking = [n for n, f in fields.items() if n not in given and (f.is_required() or f.default_factory)]
    if unknown or lacking:
        raise TypeError(f"maker({cls.__name__}): unknown fields {unknown}, fields without a default {lacking}")
    template = {n: (None if n in given else f.default) for n, f in fields.items()}  # field order
    fields_set = set(given)  # shared: frozen models never change it, and model_copy copies it

    def make(*values: Any) -> M:
        if _validate[0]:
            return cls(**dict(zip(given, values, strict=True)))
        data = template.copy()
        data.update(zip(given, values))
        obj = _new(cls)
        _set(obj, "__dict__", data)
        _set(obj, "__pydantic_fields_set__", fields_set)
        _set(obj, "__pydantic_extra__", None)
        _set(obj, "__pydantic_private__", None)
        return obj

    make.__name__ = f"make_{cls.__name__}"
    return make


@contextmanager
def validating() -> Iterator[None]:
    """Within the block, every maker validates through the model's own constructor."""
    before = _validate[0]
    _validate[0] = True
    try:
        yield
    finally:
        _validate[0] = before


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection within the block.

    An import keeps every record it builds, so the collector's full passes scan an ever larger
    heap that holds no garbage cycles: about a third of a big import's time. Reference counting
    still frees everything else at once. Collection resumes afterwards only if it was on before
    (a caller that had switched it off keeps it off)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
