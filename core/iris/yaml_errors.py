"""The one conversion of a YAML syntax error into a :class:`~iris.errors.ConfigError`.

Every YAML file the project reads (configurations, presets, context.yaml) reports a syntax error
the same way: ``invalid YAML: <problem>`` with the file and the 1-based line of the problem.
"""

from __future__ import annotations

import yaml

from .errors import ConfigError

__all__ = ["yaml_error"]


def yaml_error(exc: yaml.YAMLError, path: str | None) -> ConfigError:
    """``exc`` as a ConfigError naming ``path`` and the line of the problem (when YAML knows it)."""
    mark = getattr(exc, "problem_mark", None)
    line = getattr(mark, "line", None)
    problem = getattr(exc, "problem", None) or exc
    return ConfigError(f"invalid YAML: {problem}", path=path,
                       line=line + 1 if isinstance(line, int) else None)
