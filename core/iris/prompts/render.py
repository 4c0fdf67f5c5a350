"""The one sandboxed Jinja environment shared by prompt templates and context.yaml templates.

User-edited templates must not reach Python internals (R-BUILD-4): every template compiles in an
``ImmutableSandboxedEnvironment`` with ``StrictUndefined`` and no autoescape (output is plain text).
Jinja errors become :class:`~iris.errors.TemplateError` naming the template and its line. Every
render has a time and an output-size limit (:data:`LIMITS`), checked at each loop iteration, call,
operator, filter and output value; operations that could build a huge value in one step
are sized before they run (:mod:`iris.prompts.builders`); generators are collected within the
size limit before anything holds all their items (:mod:`iris.prompts.iterables`); ``lipsum`` and
``range`` are bounded;
``include``, ``import`` and ``extends`` are refused (no template reads another).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.nodes import EvalContext
from jinja2.runtime import Context
from jinja2.sandbox import (
    ImmutableSandboxedEnvironment,
    SandboxedEscapeFormatter,
    SandboxedFormatter,
)
from jinja2.utils import generate_lorem_ipsum
from jinja2.visitor import NodeTransformer
from markupsafe import Markup

from ..errors import TemplateError
from .bounds import (
    LIPSUM_MAX_PARAGRAPHS,
    LIPSUM_MAX_WORDS,
    RenderLimitExceeded,
    RenderLimits,
    check_output,
    check_size,
    check_value,
    guard_loop,
    limited,
    tick,
)
from .builders import (
    MAX_BUILT_SIZE,
    MAX_POWER_BITS,
    bounded_formatter,
    check_filter,
    check_method,
    check_power,
    check_printf,
    check_repeat,
)
from .iterables import LAZY_FILTERS, collected, collected_args, collected_kwargs

__all__ = ["LIMITS", "MAX_BUILT_SIZE", "MAX_POWER_BITS", "RenderLimits", "compile_template",
           "render_template", "sandbox_environment"]


LIMITS = RenderLimits()
"""Time and size limits of every render (10 s, 16,000,000 characters)."""

#: Template tags that read other templates: a template here is one self-contained source.
_LOADING_TAGS = {nodes.Include: "include", nodes.Import: "import", nodes.FromImport: "from … import",
                 nodes.Extends: "extends"}


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    """Jinja's ``lipsum`` with the paragraph and word counts bounded."""
    if n > LIPSUM_MAX_PARAGRAPHS or min > LIPSUM_MAX_WORDS or max > LIPSUM_MAX_WORDS:
        raise SecurityError(f"lipsum is limited to {LIPSUM_MAX_PARAGRAPHS} paragraphs of at most "
                            f"{LIPSUM_MAX_WORDS} words")
    return generate_lorem_ipsum(n=n, html=html, min=min, max=max)


def _user_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A filter's arguments without the context, eval context or environment Jinja passes first."""
    i = 0
    while i < len(args) and isinstance(args[i], (jinja2.Environment, EvalContext, Context)):
        i += 1
    return args[i:]


def _bounded_filter(fn: Any, name: str) -> Any:
    collects = name not in LAZY_FILTERS

    @functools.wraps(fn)  # keeps jinja's pass_context/pass_environment marks (copied __dict__)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tick()
        if collects:
            args, kwargs = collected_args(args), collected_kwargs(kwargs)
        check_filter(name, _user_args(args), kwargs)
        return check_value(fn(*args, **kwargs))
    return wrapper


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, plus time and size bounds (see :mod:`iris.prompts.bounds`)."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options, finalize=check_output)
        # Filters are called directly by compiled templates (not through ``call``): bound them too.
        filters: dict[str, Any] = self.filters  # pyright: ignore[reportUnknownMemberType] (jinja2's type)
        self.filters = {name: _bounded_filter(f, name) for name, f in filters.items()}
        self.globals["lipsum"] = _lipsum  # pyright: ignore[reportUnknownMemberType] (jinja2's type)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        tick()
        if operator == "*":
            check_repeat(left, right)
        elif operator == "**":
            check_power(left, right)
        elif operator == "%" and isinstance(left, str):
            check_printf(left, right)
        elif operator == "+" and hasattr(left, "__len__") and hasattr(right, "__len__"):
            check_size(len(left) + len(right))
        return check_value(super().call_binop(context, operator, left, right))

    def call(self, context: Any, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        tick()
        args, kwargs = collected_args(args), collected_kwargs(kwargs)
        check_method(obj, args, kwargs)
        return check_value(super().call(context, obj, *args, **kwargs))

    def concat(self, parts: Iterable[str]) -> str:  # pyright: ignore[reportIncompatibleVariableOverride]
        """Joins the output captured by macros and ``{% set %}`` blocks, within the size limit."""
        chunks = list(parts)
        check_size(sum(map(len, chunks)), "captured output")
        return "".join(chunks)

    @staticmethod
    def loop_guard(iterable: Iterable[Any]) -> Iterator[Any]:
        return guard_loop(iterable)

    @staticmethod
    def size_guard(value: Any) -> Any:
        return check_value(value)

    @staticmethod
    def collect_guard(value: Any) -> Any:
        return collected(value)

    @staticmethod
    def collected_loop_guard(iterable: Iterable[Any]) -> Iterator[Any]:
        # a generator: the sandbox's call sizes its result, which would walk a whole list
        return guard_loop(collected(iterable))

    def wrap_str_format(self, value: Any) -> Any:
        owner = getattr(value, "__self__", None)
        if not isinstance(owner, str) or getattr(value, "__name__", "") not in ("format",
                                                                                 "format_map"):
            return None
        base = SandboxedEscapeFormatter if isinstance(owner, Markup) else SandboxedFormatter
        formatter = bounded_formatter(base)(self)  # pyright: ignore[reportCallIssue] (jinja's formatters take the environment)
        format_map = value.__name__ == "format_map"

        def wrapper(*args: Any, **kwargs: Any) -> str:
            if format_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                args, kwargs = (), args[0]
            return type(owner)(formatter.vformat(owner, args, kwargs))  # pyright: ignore[reportUnknownArgumentType]

        return functools.update_wrapper(wrapper, value)


def _guard(method: str, expr: nodes.Node) -> nodes.Call:
    call = nodes.Call(nodes.EnvironmentAttribute(method), [expr], [], None, None,
                      lineno=expr.lineno)
    return call


def _uses_loop(node: nodes.For) -> bool:
    """Whether the loop's body, ``else`` or filter reads ``loop`` (whose ``length`` and
    ``revindex`` collect the rest of the sequence)."""
    parts: list[nodes.Node] = [*node.body, *node.else_, *([node.test] if node.test else [])]
    return any(name.name == "loop" for part in parts for name in part.find_all(nodes.Name))


class _Guards(NodeTransformer):
    """Routes every ``for`` loop through the deadline, every built string, list, tuple and
    dict through the size limit (``~`` and literals are compiled without a sandbox hook), and
    every generator that is collected at once (``*args``, a loop reading ``loop``) through
    :func:`~iris.prompts.iterables.collected`."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _guard("collected_loop_guard" if _uses_loop(node) else "loop_guard", node.iter)
        return node

    def _collect_dyn_args(self, node: nodes.Call | nodes.Filter | nodes.Test) -> nodes.Node:
        self.generic_visit(node)
        if node.dyn_args is not None:
            node.dyn_args = _guard("collect_guard", node.dyn_args)
        return node

    visit_Call = visit_Filter = visit_Test = _collect_dyn_args

    def _sized(self, node: nodes.Expr) -> nodes.Node:
        self.generic_visit(node)
        return _guard("size_guard", node)

    visit_Concat = visit_List = visit_Dict = _sized

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        return self._sized(node) if node.ctx == "load" else self.generic_visit(node)


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


def _refuse_loading_tags(tree: nodes.Template, name: str) -> None:
    for kind, tag in _LOADING_TAGS.items():
        for node in tree.find_all(kind):
            raise TemplateError(f"{{% {tag} %}} is not supported: templates cannot read other "
                                "templates (put the text in this one)", template=name,
                                line=node.lineno)


def compile_template(source: str, name: str) -> jinja2.Template:
    """Compile at load time so a syntax error surfaces with the template name and line."""
    env = sandbox_environment()
    try:
        tree = env.parse(source, name=name, filename=name)
        _refuse_loading_tags(tree, name)
        guarded = _Guards().visit(tree)
        guarded.set_environment(env)
        code = env.compile(guarded, name=name, filename=name)
        return env.template_class.from_code(env, code, env.make_globals(None), None)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"syntax error: {exc.message}", template=name, line=exc.lineno) from None


def _stream(template: jinja2.Template, variables: Mapping[str, Any]) -> str:
    """The output, read chunk by chunk under the render's limits."""
    with limited(LIMITS) as limits:
        chunks: list[str] = []
        size = 0
        for chunk in template.generate(dict(variables)):
            size += len(chunk)
            if size > limits.output_chars:
                raise RenderLimitExceeded(f"the output has more than {limits.output_chars:,} "
                                          "characters (the size limit of a template render)")
            chunks.append(chunk)
        return "".join(chunks)


def render_template(template: jinja2.Template, variables: Mapping[str, Any], name: str) -> str:
    """Render within :data:`LIMITS`; undefined names, sandbox refusals, limits and runtime errors
    (recursion and memory included) name the template and line."""
    try:
        return _stream(template, variables)
    except RenderLimitExceeded as exc:
        raise TemplateError(str(exc), template=name, line=_template_line(name)) from None
    except SecurityError as exc:
        raise TemplateError(f"refused by the sandbox: {exc}", template=name,
                            line=_template_line(name)) from None
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"undefined value: {exc.message}", template=name,
                            line=_template_line(name)) from None
    except jinja2.TemplateError as exc:
        raise TemplateError(str(exc), template=name, line=_template_line(name)) from None
    except RecursionError:
        raise TemplateError("recursion too deep (a macro or loop that calls itself without end)",
                            template=name) from None
    except MemoryError:
        raise TemplateError("out of memory while rendering", template=name) from None
    except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError) as exc:
        raise TemplateError(f"{type(exc).__name__}: {exc}", template=name,
                            line=_template_line(name)) from None
