"""The one conversion of a YAML syntax error into a :class:`~iris.errors.ConfigError`.

Every YAML file the project reads (configurations, presets, context.yaml) reports a syntax error
the same way: ``invalid YAML: <problem>`` with the file and the 1-based line of the problem.
:func:`read_yaml` reads a document together with its node tree (for the line of a field).
"""

from __future__ import annotations

import yaml

from .errors import ConfigError

__all__ = ["read_yaml", "yaml_error"]


def yaml_error(exc: yaml.YAMLError, path: str | None) -> ConfigError:
    """``exc`` as a ConfigError naming ``path`` and the line of the problem (when YAML knows it)."""
    mark = getattr(exc, "problem_mark", None)
    line = getattr(mark, "line", None)
    problem = getattr(exc, "problem", None) or exc
    return ConfigError(f"invalid YAML: {problem}", path=path,
                       line=line + 1 if isinstance(line, int) else None)


def read_yaml(text: str, path: str | None) -> tuple[object, yaml.Node | None]:
    """The document in ``text`` (safe loader) and its node tree; a syntax error is the
    :class:`~iris.errors.ConfigError` of :func:`yaml_error` naming ``path``."""
    try:
        loader = yaml.SafeLoader(text)  # yaml.compose(), whose stub is unannotated
        try:
            node = loader.get_single_node()
        finally:  # the stub leaves Parser.dispose() unannotated (it returns None)
            loader.dispose()  # pyright: ignore[reportUnknownMemberType]
        data: object = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise yaml_error(exc, path) from None
    return data, node
