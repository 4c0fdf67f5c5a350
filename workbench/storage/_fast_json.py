"""The stored text of a message, written by orjson where it is provably :func:`canonical`'s.

A message row holds ``canonical(message.model_dump(mode="json", exclude_none=True))``: sorted
keys, no whitespace, UTF-8 kept (``iris.hashing.canonical_json``, ``json.dumps``). orjson with
sorted keys writes the same text for plain JSON values at a tenth of the cost, except for floats:
below 1e-4 it writes ``0.00001`` and ``1.5e-6`` where Python writes ``1e-05`` and ``1.5e-06``, and
NaN and infinities as null. It refuses integers beyond 64 bits, lone surrogates, deep nesting and
(with these options) anything but the plain types, which ``json.dumps`` treats its own way; those
go to ``json.dumps``.

So floats decide. Most messages hold none, which their models tell without reading the text:
a field typed ``str``, ``int``, ``bool``, a datetime or a ``Literal`` cannot hold one, so only the
other fields' values (nested records, free-form dicts such as tool arguments, ``float`` fields)
are looked at. A message that may hold a float has its orjson text searched for the spellings
that differ (``null``, ``0.0000``, a one-digit negative exponent) and goes to ``json.dumps`` on
any match.
"""

from __future__ import annotations

import re
import types
from datetime import date, datetime, time
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import orjson
from iris.hashing import canonical_json
from pydantic import BaseModel

__all__ = ["canonical_dump", "may_hold_float"]

_ORJSON = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
           | orjson.OPT_PASSTHROUGH_SUBCLASS)
_SHORT_EXPONENT = re.compile(rb"e-[1-9](?![0-9])")  # one regex with ``|0\.0000`` is 3x slower
#: Values whose text orjson must write as Python does for the fast writer to be used at all (an
#: orjson before 3.11.7 wrote ``1e16`` for Python's ``1e+16``).
_PROBES = (1e16, -1.5e300, 1e22, 1.2345678901234568e17, 1e-10, 2.5e-300, 1e-4, 0.1, 1e15, -0.0, 2**64 - 1,
           -(2**63), "é\u2028\x7f\x00\x1f\"\\😀", {"b": [True, None], "a": {"é": 1, "B": 2.5}})


def _orjson_writes_canonical() -> bool:
    try:
        return all(orjson.dumps(v, option=_ORJSON).decode() == canonical_json(v) for v in _PROBES)
    except TypeError:
        return False


_FAST_WRITER = _orjson_writes_canonical()


def canonical_dump(model: BaseModel) -> str:
    """``canonical(model.model_dump(mode="json", exclude_none=True))``, written by orjson when
    its text is provably the same, else by ``json.dumps``."""
    value = model.model_dump(mode="json", exclude_none=True)
    if not _FAST_WRITER:
        return canonical_json(value)
    try:
        text = orjson.dumps(value, option=_ORJSON)
    except TypeError:  # orjson.JSONEncodeError: a value only json.dumps writes (or refuses itself)
        return canonical_json(value)
    if not may_hold_float(model):
        return text.decode()
    if b"null" in text or b"0.0000" in text or _SHORT_EXPONENT.search(text) is not None:
        return canonical_json(value)
    return text.decode()


_NO_FLOAT = frozenset({str, int, bool, type(None), datetime, date, time})
#: Per record class: the fields whose values may hold a float, or None when the class's dump is
#: not its fields' values (serializers, computed fields, extra fields): then always "may".
_PLANS: dict[type, tuple[str, ...] | None] = {}
_UNSEEN: tuple[str, ...] = ("",)  # never a plan: not a field name


def _float_free(annotation: Any) -> bool:
    """True when no value of ``annotation`` is or holds a float (statically, from the type)."""
    if annotation in _NO_FLOAT:
        return True
    origin = get_origin(annotation)
    if origin is Literal:
        return not any(isinstance(a, float) for a in get_args(annotation))
    if origin is Annotated:
        return _float_free(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return all(_float_free(a) for a in get_args(annotation))
    if origin is tuple:
        return all(a is Ellipsis or _float_free(a) for a in get_args(annotation))
    return False


def _plan(cls: type[BaseModel]) -> tuple[str, ...] | None:
    decorators = cls.__pydantic_decorators__
    if (cls.model_computed_fields or decorators.field_serializers or decorators.model_serializers
            or cls.model_config.get("extra") == "allow"):
        plan = None
    else:  # the annotations as pydantic resolved them when it built the class
        plan = tuple(name for name, info in cls.model_fields.items() if not _float_free(info.annotation))
    _PLANS[cls] = plan
    return plan


def may_hold_float(value: Any) -> bool:
    """False when ``value`` (a record or decoded JSON) provably holds no float, else True."""
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind in _NO_FLOAT:
        return False
    plan = _PLANS.get(kind, _UNSEEN)
    if plan is _UNSEEN:
        if not isinstance(value, BaseModel):
            return _may_hold_float_json(value)
        plan = _plan(type(value))
    if plan is None:
        return True
    fields = value.__dict__
    for name in plan:  # loops, not any(), and plain values judged inline: this runs per message
        item = fields[name]
        if type(item) not in _NO_FLOAT and may_hold_float(item):
            return True
    return False


def _may_hold_float_json(value: Any) -> bool:
    kind: Any = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is dict:
        value = value.values()
    elif kind is not list and kind is not tuple:
        return kind not in _NO_FLOAT  # a float, or anything not known to be float-free
    for item in value:
        kind = type(item)  # pyright: ignore[reportUnknownVariableType]
        if kind in _NO_FLOAT:
            continue
        if kind is float or may_hold_float(item):
            return True
    return False
