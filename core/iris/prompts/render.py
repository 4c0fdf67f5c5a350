"""The one sandboxed Jinja environment shared by prompt templates and context.yaml templates.

User-edited templates must not reach Python internals (R-BUILD-4): every template compiles in an
``ImmutableSandboxedEnvironment`` with ``StrictUndefined`` and no autoescape (output is plain text).
Jinja errors become :class:`~iris.errors.TemplateError` naming the template and its line. Operators
and calls that could build huge values (``*``, ``**``, ``%``, width arguments) are bounded.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Mapping
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..errors import TemplateError

__all__ = ["compile_template", "render_template", "sandbox_environment"]


#: Largest string/sequence a template may build with ``*``, ``%`` or a padding/width argument, and
#: the largest integer result of ``**`` (in bits): without them ``{{ 'a' * 10**10 }}`` or
#: ``{{ 9**9**9 }}`` exhaust memory or hang (the latter already at compile time, by constant folding).
MAX_BUILT_SIZE = 1_000_000
MAX_POWER_BITS = 65_536
_PRINTF_WIDE = re.compile(r"%[-#0 +]*(\d{7,}|\*|\d*\.(\d{7,}|\*))")
_FORMAT_WIDE = re.compile(r"\{[^{}]*:[^{}]*?\d{7,}")
#: Callables whose integer arguments are widths (the output grows with them); other calls (e.g.
#: ``"{:,}".format(tokens)``) take any number.
_WIDTH_METHODS = frozenset({"ljust", "rjust", "center", "zfill", "expandtabs"})
_WIDTH_FILTERS = frozenset({"center", "indent", "wordwrap", "truncate"})


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, plus bounds on the operators and calls that can build huge values."""

    intercepted_binops = frozenset({"*", "**", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        # Filters are called directly by compiled templates (not through ``call``): bound them too.
        filters: dict[str, Any] = self.filters  # pyright: ignore[reportUnknownMemberType] (jinja2's type)
        self.filters = {name: _bounded(f, name) if name in _WIDTH_FILTERS | {"format"} else f
                        for name, f in filters.items()}

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            _check_repeat(left, right)
        elif operator == "**":
            _check_power(left, right)
        elif isinstance(left, str) and _PRINTF_WIDE.search(left):
            raise SecurityError("format width or precision too large")
        return super().call_binop(context, operator, left, right)

    def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        if isinstance(getattr(obj, "__self__", None), str) and obj.__name__ in _WIDTH_METHODS:
            _check_args((*args, *kwargs.values()))
        return super().call(context, obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Any:
        owner = getattr(value, "__self__", None)
        if isinstance(owner, str) and getattr(value, "__name__", "") in ("format", "format_map") \
                and _FORMAT_WIDE.search(owner):
            raise SecurityError("format width or precision too large")
        return super().wrap_str_format(value)


def _check_args(args: Any) -> None:
    for value in args:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_BUILT_SIZE:
            raise SecurityError(f"argument {value} is larger than {MAX_BUILT_SIZE:,}")


def _bounded(fn: Any, name: str) -> Any:
    @functools.wraps(fn)  # keeps jinja's pass_context/pass_environment marks (copied __dict__)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if name in _WIDTH_FILTERS:
            _check_args((*args, *kwargs.values()))
        if name == "format" and any(isinstance(a, str) and _PRINTF_WIDE.search(a) for a in args):
            raise SecurityError("format width or precision too large")
        return fn(*args, **kwargs)
    return wrapper


def _check_repeat(left: Any, right: Any) -> None:
    seq, n = (left, right) if isinstance(right, int) else (right, left)
    if isinstance(n, int) and hasattr(seq, "__len__") and len(seq) * max(n, 0) > MAX_BUILT_SIZE:
        raise SecurityError(f"repetition would build more than {MAX_BUILT_SIZE:,} items")


def _check_power(base: Any, exponent: Any) -> None:
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0 \
            and exponent * abs(base).bit_length() > MAX_POWER_BITS:
        raise SecurityError(f"power result larger than {MAX_POWER_BITS:,} bits")


@functools.cache
def sandbox_environment() -> ImmutableSandboxedEnvironment:
    """The shared environment (stateless after creation, so safe to share between threads)."""
    return _BoundedSandbox(
        undefined=jinja2.StrictUndefined, autoescape=False,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)


def _template_line(name: str) -> int | None:
    """Line of the failing template frame in the current traceback (Jinja rewrites frames)."""
    tb = sys.exc_info()[2]
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == name:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def compile_template(source: str, name: str) -> jinja2.Template:
    """Compile at load time so a syntax error surfaces with the template name and line."""
    env = sandbox_environment()
    try:
        code = env.compile(source, name=name, filename=name)
        return env.template_class.from_code(env, code, env.make_globals(None), None)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"syntax error: {exc.message}", template=name, line=exc.lineno) from None


def render_template(template: jinja2.Template, variables: Mapping[str, Any], name: str) -> str:
    """Render; undefined names, sandbox refusals and runtime errors name the template and line."""
    try:
        return template.render(dict(variables))
    except SecurityError as exc:
        raise TemplateError(f"refused by the sandbox: {exc}", template=name,
                            line=_template_line(name)) from None
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"undefined value: {exc.message}", template=name,
                            line=_template_line(name)) from None
    except jinja2.TemplateError as exc:
        raise TemplateError(str(exc), template=name, line=_template_line(name)) from None
    except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError) as exc:
        raise TemplateError(f"{type(exc).__name__}: {exc}", template=name,
                            line=_template_line(name)) from None
