"""One exception hierarchy for the engine and the workbench: every class derives from
:class:`IrisError` (``WorkbenchError`` is the same class under its older name).

Every message names what was wrong and where (file, line, field path, template, step) so the UI can
show it without a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "ConfigError",
    "ContextAccessError",
    "IrisError",
    "PreparationError",
    "SessionFormatError",
    "StorageError",
    "SummariserError",
    "TemplateError",
    "WorkbenchError",
]


class IrisError(Exception):
    """Base of every error the project raises on purpose."""


WorkbenchError = IrisError
"""The older name of :class:`IrisError` (the same class), kept for callers that catch it."""


def _locate(path: object | None, line: int | None, field: str | None) -> str:
    where = ""
    if path is not None:
        where = str(path)
        if line is not None:
            where += f":{line}"
    elif line is not None:
        where = f"line {line}"
    if field:
        where = f"{where} [{field}]" if where else f"[{field}]"
    return where


class SessionFormatError(IrisError):
    """A session file (or one line of it) does not have the shape its format requires."""

    def __init__(self, problem: str, *, path: object | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.problem = problem
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        where = _locate(path, line, field)
        super().__init__(f"{where}: {problem}" if where else problem)


class ConfigError(IrisError):
    """A configuration (context.yaml, the context configuration YAML) is invalid.

    `field` is the dotted path of the offending field, e.g. ``system.slots[2].name``.
    """

    def __init__(self, problem: str, *, path: object | None = None, field: str | None = None,
                 line: int | None = None) -> None:
        self.problem = problem
        self.path = None if path is None else str(path)
        self.field = field
        self.line = line
        where = _locate(path, line, field)
        super().__init__(f"{where}: {problem}" if where else problem)

    @classmethod
    def from_validation(cls, exc: ValidationError, field: str | None = None) -> ConfigError:
        """The first problem of a section's validation error, worded like every configuration
        error (``unknown field`` for a key the section does not have), at ``field`` + its path."""
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        problem = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        where = ".".join(p for p in (field, loc) if p)
        return cls(problem.removeprefix("Value error, "), field=where or None)


class TemplateError(IrisError):
    """A prompt or context template failed to compile or render (names the template and line)."""

    def __init__(self, problem: str, *, template: str | None = None, line: int | None = None) -> None:
        self.problem = problem
        self.template = template
        self.line = line
        where = ""
        if template is not None:
            where = f"template {template!r}"
            if line is not None:
                where += f", line {line}"
        super().__init__(f"{where}: {problem}" if where else problem)


class StorageError(IrisError):
    """The SQLite store cannot be opened, migrated, read or written."""


class PreparationError(IrisError):
    """A preparation stage failed (names the stage and the step)."""

    def __init__(self, problem: str, *, stage: str | None = None, step: int | None = None) -> None:
        self.problem = problem
        self.stage = stage
        self.step = step
        where = ", ".join(p for p in (f"step {step}" if step is not None else "",
                                      f"stage {stage!r}" if stage else "") if p)
        super().__init__(f"{where}: {problem}" if where else problem)


class SummariserError(IrisError):
    """A summariser failed: endpoint error, timeout, junk answer, or an invalid checkpoint."""


class ContextAccessError(IrisError):
    """`context_read` / `context_search` was called with a bad reference or out-of-range parameters."""

