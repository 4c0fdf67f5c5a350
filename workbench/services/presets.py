"""Named configurations (``workbench/presets/<name>.yaml``) and :func:`resolve_config`, the one
way the CLI, the notebook, the corpus runner and the replay service turn "a preset name, a YAML
path, a mapping or nothing" into a validated :class:`~iris.config.ContextConfig`."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from iris.config import ContextConfig, default_config, load_config, parse_config
from iris.errors import ConfigError

__all__ = ["PRESET_NAMES", "config_label", "load_preset", "preset_text", "resolve_config"]

#: The presets shipped in ``workbench/presets/<name>.yaml``; ``claude-code`` and ``codex`` are the
#: agent profiles (docs/profiles.md).
PRESET_NAMES: tuple[str, ...] = ("default", "cost-first", "quality-first", "chord-style",
                                 "claude-code", "codex")


def preset_text(name: str) -> str:
    """The YAML text of a preset (``ConfigError`` naming the known presets for another name)."""
    if name not in PRESET_NAMES:
        raise ConfigError(f"unknown preset {name!r}; known presets: {', '.join(PRESET_NAMES)}")
    return (resources.files("workbench") / "presets" / f"{name}.yaml").read_text("utf-8")


def load_preset(name: str) -> ContextConfig:
    """A preset, validated."""
    return parse_config(preset_text(name), source=f"workbench/presets/{name}.yaml")


def resolve_config(config: ContextConfig | Mapping[str, Any] | str | Path | None) -> ContextConfig:
    """A configuration from None (bundled default), a mapping, a YAML path or a preset name."""
    if config is None:
        return default_config()
    if isinstance(config, ContextConfig):
        return config
    if isinstance(config, Mapping):
        return parse_config(config, source="<mapping>")
    path = Path(config).expanduser()
    if path.is_file():
        return load_config(path)
    if str(config) in PRESET_NAMES:
        return load_preset(str(config))
    raise ConfigError(f"neither a configuration file nor a preset (presets: "
                      f"{', '.join(PRESET_NAMES)})", path=str(config))


def config_label(config: Any) -> str:
    """How a configuration is named in comparisons and batch tables: the preset name or file
    stem, else ``default`` (None) or ``custom`` (an object)."""
    if isinstance(config, str | Path):
        return Path(str(config)).stem
    return "default" if config is None else "custom"
