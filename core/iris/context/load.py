"""Reading ``context.yaml`` into a :class:`ContextBuildInput` (R-BUILD-1, R-BUILD-2).

Every problem is reported, not just the first: :class:`ContextValidationError` carries one
:class:`~iris.errors.ConfigError` per problem, each with the file, the field path
(``system.slots[2].name``) and, when the YAML node can be found, its line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import yaml
from pydantic import ValidationError

from ..errors import ConfigError
from ..yaml_errors import node_line, read_yaml
from .model import POSITIONS, ContextBuildInput

__all__ = ["ContextValidationError", "field_path", "load_context_build_input", "parse_context_build_input"]


class ContextValidationError(ConfigError):
    """One or more problems in a context.yaml; ``issues`` lists them all in document order."""

    def __init__(self, issues: list[ConfigError] | tuple[ConfigError, ...]) -> None:
        self.issues = tuple(issues)
        first = self.issues[0]
        super().__init__(first.problem, path=first.path, field=first.field, line=first.line)
        if len(self.issues) > 1:
            more = "\n".join(f"  {issue}" for issue in self.issues[1:])
            self.args = (f"{self.args[0]}\n  (+{len(self.issues) - 1} more)\n{more}",)


def field_path(loc: tuple[str | int, ...]) -> str:
    """``("system", "slots", 2, "name")`` → ``system.slots[2].name``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _section(data: Mapping[object, object], position: str) -> dict[str, Any] | None:
    """The YAML mapping of one position (its fields are checked by the model), else None."""
    section = data.get(position)
    return cast("dict[str, Any]", section) if isinstance(section, dict) else None


def _resolve_templates(data: Mapping[object, object], base_dir: Path) -> None:
    for position in POSITIONS:
        section = _section(data, position)
        if section is not None and isinstance(section.get("template"), str):
            path = Path(section["template"]).expanduser()
            section["template"] = str(path if path.is_absolute() else (base_dir / path).resolve())


def _missing_templates(data: Mapping[object, object], node: yaml.Node | None,
                       path: str | None) -> list[ConfigError]:
    issues: list[ConfigError] = []
    for position in POSITIONS:
        section = _section(data, position)
        template = section.get("template") if section is not None else None
        if isinstance(template, str) and not Path(template).is_file():
            issues.append(ConfigError(f"template file not found: {template}", path=path,
                                      field=f"{position}.template",
                                      line=node_line(node, (position, "template"))))
    return issues


def parse_context_build_input(text: str, *, base_dir: str | os.PathLike[str],
                              path: str | None = None) -> ContextBuildInput:
    """Parse YAML text; relative template paths resolve against ``base_dir``."""
    parsed, node = read_yaml(text, path)
    if not isinstance(parsed, dict):
        raise ConfigError("the top level must be a mapping with a 'system' section", path=path, line=1)
    data = cast("dict[object, object]", parsed)  # keys are checked against POSITIONS below
    issues = [ConfigError(f"unknown top-level key {key!r}; allowed: {', '.join(POSITIONS)}",
                          path=path, field=str(key), line=node_line(node, (key,)))
              for key in data if key not in POSITIONS]
    _resolve_templates(data, Path(base_dir))
    issues += _missing_templates(data, node, path)
    known = {k: v for k, v in data.items() if isinstance(k, str) and k in POSITIONS}
    try:
        result = ContextBuildInput.model_validate({**known, "source_path": path})
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            problem = err["msg"].removeprefix("Value error, ")
            if err["type"] == "string_type" and isinstance(err.get("input"), bool):
                problem += " (YAML reads yes/no/on/off/true/false as booleans: quote the value)"
            issues.append(ConfigError(problem, path=path, field=field_path(loc) or None,
                                      line=node_line(node, loc)))
        result = None
    if issues:
        raise ContextValidationError(sorted(issues, key=lambda issue: issue.line or 0))
    assert result is not None
    return result


def load_context_build_input(path: str | os.PathLike[str]) -> ContextBuildInput:
    """Read a context.yaml file (R-BUILD-1)."""
    file = Path(path)
    try:
        text = file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read context file: {exc}", path=str(file)) from None
    return parse_context_build_input(text, base_dir=file.resolve().parent, path=str(file))
