"""The template snapshot a configuration's ``prompts.root`` names (R-PRM-1).

``prompts.root`` is relative to the workspace root (an absolute root is used as it is). A replay
given a workspace freezes that directory's templates (packaged defaults for ids without a file);
the default root ``.iris/prompts`` may be absent (then every template is the packaged default), a
root set to anything else must exist. Without a workspace a relative root cannot be resolved and
the packaged defaults are used.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .config import PromptConfig
from .snapshot import PromptSnapshot
from .source import PromptSource

if TYPE_CHECKING:  # iris.config imports this package
    from ..config import ContextConfig

__all__ = ["configured_snapshot", "prompts_directory"]


def _root(config: ContextConfig | PromptConfig | None) -> str:
    prompts: object = getattr(config, "prompts", config)
    return prompts.root if isinstance(prompts, PromptConfig) else PromptConfig().root


def prompts_directory(config: ContextConfig | PromptConfig | None, workspace_root: str | os.PathLike[str] | None) -> Path | None:
    """Where ``config``'s templates live, or None when a relative root has no workspace."""
    root = _root(config)
    if Path(root).is_absolute():
        return Path(root)
    return None if workspace_root is None else Path(workspace_root) / root


def configured_snapshot(config: ContextConfig | PromptConfig | None,
                        workspace_root: str | os.PathLike[str] | None = None) -> PromptSnapshot:
    """The snapshot of the templates under ``config.prompts.root`` (see the module docstring).

    ``config`` is a ``ContextConfig`` or a ``PromptConfig`` (None: the default root). A configured root other than the
    default that is not a directory is a :class:`ConfigError` naming ``prompts.root``."""
    root = _root(config)
    directory = prompts_directory(config, workspace_root)
    if directory is None:
        return PromptSnapshot.defaults()
    if not directory.is_dir():
        if root == PromptConfig().root:
            return PromptSnapshot.defaults()
        raise ConfigError(f"prompts root {root!r} is not a directory ({directory})",
                          field="prompts.root")
    return PromptSource(directory.parent, directory.name).snapshot()
