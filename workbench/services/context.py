"""Building a context.yaml for the Context page (R-BUILD): read it (a bundled example, a path or
uploaded text), validate and build it with the engine, and measure the messages. Returns a
:class:`ContextView`: either the built messages with characters and local token estimates, or the
validation problems with their field paths and lines (never a traceback).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from iris.context import ContextBuilder, ContextMessage, ContextValidationError, parse_context_build_input
from iris.errors import ConfigError, TemplateError
from iris.frozen import FrozenModel
from iris.tokens import TokenEstimator, default_estimator

__all__ = ["ContextProblem", "ContextView", "MeasuredMessage", "bundled_examples", "context_view",
           "context_view_from_path"]


_Frozen = FrozenModel


class ContextProblem(_Frozen):
    field: str | None
    line: int | None
    problem: str
    source: str | None
    """The context file, or the template for template errors."""


class MeasuredMessage(_Frozen):
    message: ContextMessage
    chars: int
    tokens: int
    """Local estimate of the message (content plus framing, ``iris.tokens``)."""


class ContextView(_Frozen):
    source: str
    messages: tuple[MeasuredMessage, ...] = ()
    problems: tuple[ContextProblem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def bundled_examples() -> dict[str, Path]:
    """Bundled example files, name → path (``workbench/examples/*.yaml``), sorted by name."""
    folder = Path(str(resources.files("workbench") / "examples"))
    return {p.name: p for p in sorted(folder.glob("*.yaml"))}


def _problems(exc: Exception) -> tuple[ContextProblem, ...]:
    if isinstance(exc, ContextValidationError):
        return tuple(ContextProblem(field=i.field, line=i.line, problem=i.problem, source=i.path)
                     for i in exc.issues)
    if isinstance(exc, ConfigError):
        return (ContextProblem(field=exc.field, line=exc.line, problem=exc.problem, source=exc.path),)
    assert isinstance(exc, TemplateError)
    return (ContextProblem(field=None, line=exc.line, problem=exc.problem, source=exc.template),)


def context_view(text: str, *, base_dir: str | os.PathLike[str], source: str,
                 system_addendum: str = "", estimator: TokenEstimator | None = None) -> ContextView:
    """Parse, validate and build YAML text; templates resolve relative to ``base_dir``."""
    estimator = estimator or default_estimator()
    try:
        data = parse_context_build_input(text, base_dir=base_dir, path=source)
        output = ContextBuilder().build(data, system_addendum=system_addendum)
    except (ConfigError, TemplateError) as exc:
        return ContextView(source=source, problems=_problems(exc))
    measured = tuple(MeasuredMessage(message=m, chars=len(m.text),
                                     tokens=estimator.message_tokens(m.to_message()))
                     for m in output.messages)
    return ContextView(source=source, messages=measured)


def context_view_from_path(path: str | os.PathLike[str], *, system_addendum: str = "",
                           estimator: TokenEstimator | None = None) -> ContextView:
    """:func:`context_view` of a context.yaml file; a file that cannot be read is one problem."""
    file = Path(path).expanduser()
    try:
        text = file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return ContextView(source=str(file), problems=(
            ContextProblem(field=None, line=None, problem=f"cannot read file: {exc}", source=str(file)),))
    return context_view(text, base_dir=file.resolve().parent, source=str(file),
                        system_addendum=system_addendum, estimator=estimator)
