"""The one sandboxed Jinja environment shared by prompt templates and context.yaml templates.

User-edited templates must not reach Python internals (R-BUILD-4): every template compiles in an
``ImmutableSandboxedEnvironment`` with ``StrictUndefined`` and no autoescape (output is plain text).
Jinja errors become :class:`~iris.errors.TemplateError` naming the template and its line.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from ..errors import TemplateError

__all__ = ["compile_template", "render_template", "sandbox_environment"]

_ENV: ImmutableSandboxedEnvironment | None = None


def sandbox_environment() -> ImmutableSandboxedEnvironment:
    """The shared environment (stateless after creation, so safe to share between threads)."""
    global _ENV
    if _ENV is None:
        _ENV = ImmutableSandboxedEnvironment(
            undefined=jinja2.StrictUndefined, autoescape=False,
            trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)
    return _ENV


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
