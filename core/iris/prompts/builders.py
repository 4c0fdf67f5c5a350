"""Checks, before the call, of the template operations that build a large value in one step.

A result can only be checked once it exists, and ``'x' * 10**10`` or ``s.replace('x', s)`` would
exhaust memory inside one C call. So these operations are sized from their arguments first:
repetition and integer products, powers, padding and width arguments, printf (``%``) and
``str.format`` widths and field counts, ``replace``, ``join``, ``expandtabs``, ``translate``,
``indent`` and ``wordwrap``. Each refusal is a :class:`~jinja2.exceptions.SecurityError` (the
renderer names the template).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from string import Formatter
from typing import Any, cast

from jinja2.exceptions import SecurityError

from .bounds import active_limits, check_size, tick, value_size

__all__ = [
    "MAX_BUILT_SIZE",
    "MAX_POWER_BITS",
    "bounded_formatter",
    "check_filter",
    "check_method",
    "check_power",
    "check_printf",
    "check_repeat",
    "check_widths",
]

#: Largest string/sequence a template may build with ``*`` or a padding/width argument, and the
#: largest integer result of ``**`` (in bits): without them ``{{ 'a' * 10**10 }}`` or
#: ``{{ 9**9**9 }}`` exhaust memory or hang (the latter already at compile time, by constant folding).
MAX_BUILT_SIZE = 1_000_000
MAX_POWER_BITS = 65_536
_PRINTF_WIDE = re.compile(r"%(\([^)]*\))?[-#0 +]*(\d{7,}|\*|\d*\.(\d{7,}|\*))")
_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?")
#: Callables whose integer arguments are widths (the output grows with them); other calls (e.g.
#: ``"{:,}".format(tokens)``) take any number.
_WIDTH_METHODS = frozenset({"ljust", "rjust", "center", "zfill"})
WIDTH_FILTERS = frozenset({"center", "truncate"})
#: A ``translate`` mapping with at most this many keys is sized exactly (one count per key).
_TRANSLATE_EXACT = 256


def check_widths(args: Sequence[Any]) -> None:
    for value in args:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_BUILT_SIZE:
            raise SecurityError(f"argument {value} is larger than {MAX_BUILT_SIZE:,}")


def check_repeat(left: Any, right: Any) -> None:
    """``left * right``: a repeated sequence within :data:`MAX_BUILT_SIZE` items, an integer
    product within :data:`MAX_POWER_BITS` bits (sized from the operands' bit lengths)."""
    if isinstance(left, int) and isinstance(right, int):
        if left.bit_length() + right.bit_length() > MAX_POWER_BITS:
            raise SecurityError(f"integer product larger than {MAX_POWER_BITS:,} bits")
        return
    seq: Any
    seq, n = (left, right) if isinstance(right, int) else (right, left)
    if isinstance(n, int) and hasattr(seq, "__len__") and len(seq) * max(n, 0) > MAX_BUILT_SIZE:
        raise SecurityError(f"repetition would build more than {MAX_BUILT_SIZE:,} items")


def check_power(base: Any, exponent: Any) -> None:
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0 \
            and exponent * abs(base).bit_length() > MAX_POWER_BITS:
        raise SecurityError(f"power result larger than {MAX_POWER_BITS:,} bits")


def _size(value: object) -> int:
    return value_size(value, active_limits().output_chars) if not isinstance(value, str) \
        else len(value)


def check_printf(template: str, values: Any) -> None:
    """``template % values``: no huge width or precision, and no more fields times the longest
    value than the size limit."""
    if _PRINTF_WIDE.search(template):
        raise SecurityError("format width or precision too large")
    items: Sequence[object] = (
        tuple(cast("Mapping[object, object]", values).values()) if isinstance(values, Mapping)
        else cast("tuple[object, ...]", values) if isinstance(values, tuple) else (values,))
    longest = max((_size(v) for v in items), default=0)
    check_size(len(template) + template.count("%") * longest, "a printf-style format")


def _replace_size(s: str, old: str, new: str) -> int:
    times = s.count(old) if old else len(s) + 1
    return len(s) + times * max(len(new) - len(old), 0)


def _join_size(separator: str, items: Any) -> int:
    count = len(items) if hasattr(items, "__len__") else 0
    return len(separator) * max(count - 1, 0)


def _translate_size(s: str, table: object) -> int:
    """Largest result of ``s.translate(table)``: exact per key for a small mapping, else every
    character replaced by the table's longest value."""
    if isinstance(table, Mapping):
        entries = cast("Mapping[object, object]", table)
        if len(entries) <= _TRANSLATE_EXACT:
            size = len(s)
            for key, value in entries.items():
                if isinstance(value, str) and len(value) > 1:
                    char = chr(key) if isinstance(key, int) and 0 <= key <= 0x10FFFF else key
                    if isinstance(char, str):
                        size += s.count(char) * (len(value) - 1)
            return size
        values: Iterable[object] = entries.values()
    elif isinstance(table, (list, tuple)):
        values = cast("Sequence[object]", table)
    else:
        return len(s)
    longest = max((len(v) for v in values if isinstance(v, str)), default=1)
    return len(s) * max(longest, 1)


def check_method(obj: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Before a call of a bound ``str`` or ``bytes`` method: widths, ``replace``, ``join``,
    ``expandtabs``, ``translate``."""
    bound: object = getattr(obj, "__self__", None)
    if isinstance(bound, bytes):
        bound = bound.decode("latin-1")  # same length, same positions of tabs and separators
        args = tuple(a.decode("latin-1") if isinstance(a, bytes) else a for a in args)
    if not isinstance(bound, str):
        return
    owner: str = bound
    name = getattr(obj, "__name__", "")
    if name in _WIDTH_METHODS:
        check_widths((*args, *kwargs.values()))
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) \
            and isinstance(args[1], str):
        check_size(_replace_size(owner, args[0], args[1]), "str.replace")
    elif name == "join" and args:
        check_size(_join_size(owner, args[0]), "str.join")
    elif name == "expandtabs":
        size = (args or (kwargs.get("tabsize", 8),))[0]
        if isinstance(size, int):
            check_size(len(owner) + owner.count("\t") * max(size, 0), "str.expandtabs")
    elif name == "translate" and isinstance(obj.__self__, str) and args:
        check_size(_translate_size(owner, args[0]), "str.translate")


def _arg(args: Sequence[Any], kwargs: Mapping[str, Any], index: int, name: str,
         default: Any) -> Any:
    return args[index] if len(args) > index else kwargs.get(name, default)


def check_filter(name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
    """Before a filter call (``args`` without Jinja's context arguments; the value first)."""
    if name in WIDTH_FILTERS:
        check_widths((*args, *kwargs.values()))
        return
    text = args[0] if args else ""
    if name == "sum" and not isinstance(_arg(args, kwargs, 2, "start", 0), (int, float)):
        # adding lists or strings one by one copies the growing total each time (quadratic)
        raise SecurityError("sum with a list or string start is refused (it is quadratic); "
                            "join strings with |join, or loop over the lists")
    if name == "format" and isinstance(text, str):
        check_printf(text, kwargs or tuple(args[1:]))
    elif not isinstance(text, str):
        if name == "join":
            check_size(_join_size(str(_arg(args, kwargs, 1, "d", "")), text), "join")
    elif name == "indent":
        width = _arg(args, kwargs, 1, "width", 4)
        check_widths([width])
        per_line = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        check_size(len(text) + (text.count("\n") + 1) * max(per_line, 0), "indent")
    elif name == "wordwrap":
        width = _arg(args, kwargs, 1, "width", 79)
        wrap = _arg(args, kwargs, 3, "wrapstring", None) or "\n"
        lines = len(text) // max(width, 1) + 1 if isinstance(width, int) else len(text)
        check_size(len(text) + lines * len(str(wrap)), "wordwrap")
    elif name == "replace":
        old, new = _arg(args, kwargs, 1, "old", ""), _arg(args, kwargs, 2, "new", "")
        check_size(_replace_size(text, str(old), str(new)), "replace")
    elif name == "join":
        check_size(_join_size(str(_arg(args, kwargs, 1, "d", "")), text), "join")


def bounded_formatter(base: type[Formatter]) -> type[Formatter]:
    """``base`` (Jinja's sandboxed formatter) with each field's width and precision bounded and the
    formatted fields' total length counted against the size limit."""

    class Bounded(base):  # type: ignore[misc,valid-type]
        built = 0

        def format_field(self, value: Any, format_spec: str) -> Any:
            tick()
            match = _SPEC.match(format_spec)
            if match is not None:
                check_widths([int(g) for g in match.groups() if g])
            text = super().format_field(value, format_spec)
            self.built += len(text)
            check_size(self.built, "str.format")
            return text

    return Bounded
