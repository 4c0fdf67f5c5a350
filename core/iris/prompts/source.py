"""The workspace's prompt directory (R-PRM-1): fill in missing templates, freeze, save edits.

``initialize`` only writes templates that are missing and never overwrites an existing file, so a
user's edits survive upgrades. ``snapshot()`` reads the directory once; later disk changes do not
affect a snapshot already taken. A file missing from the directory falls back to the packaged
default (so a partly populated directory still yields a complete snapshot).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import TemplateError
from ..safe_files import ensure_dir, write_file
from .config import PromptConfig
from .ids import PROMPT_IDS
from .snapshot import PromptSnapshot, check_prompt_id, default_template_source

__all__ = ["PromptSource"]


class PromptSource:
    """Templates under ``<workspace_root>/<root>`` (``root`` defaults to ``.iris/prompts``)."""

    def __init__(self, workspace_root: str | os.PathLike[str],
                 root: str = PromptConfig().root) -> None:
        self.workspace_root = Path(workspace_root)
        self.directory = self.workspace_root / root

    @classmethod
    def initialize(cls, workspace_root: str | os.PathLike[str],
                   root: str = PromptConfig().root) -> PromptSource:
        """Create the directory and write only the missing ``<id>.j2`` files; never overwrite."""
        source = cls(workspace_root, root)
        ensure_dir(source.directory, root=source.workspace_root)
        for pid in PROMPT_IDS:
            try:
                # overwrite=False: creation fails if the file appeared meanwhile.
                write_file(source.path_of(pid), default_template_source(pid),
                           root=source.workspace_root, overwrite=False)
            except FileExistsError:
                continue
        return source

    def path_of(self, prompt_id: str) -> Path:
        check_prompt_id(prompt_id)
        return self.directory / f"{prompt_id}.j2"

    def saved_ids(self) -> tuple[str, ...]:
        """Ids that have a file in the directory."""
        return tuple(pid for pid in PROMPT_IDS if self.path_of(pid).is_file())

    def snapshot(self) -> PromptSnapshot:
        """Freeze the directory's current sources (defaults for ids without a file)."""
        sources: dict[str, str] = {}
        for pid in PROMPT_IDS:
            path = self.path_of(pid)
            try:
                sources[pid] = path.read_text("utf-8") if path.is_file() else default_template_source(pid)
            except (OSError, UnicodeDecodeError) as exc:
                raise TemplateError(f"cannot read {path}: {exc}", template=pid) from None
        return PromptSnapshot(sources)

    def save(self, prompt_id: str, source: str) -> Path:
        """Write one template (after checking it compiles); the explicit Save of the workbench.

        The write is atomic and never follows a symbolic link (see :mod:`iris.safe_files`)."""
        PromptSnapshot.defaults().with_template(prompt_id, source)
        return write_file(self.path_of(prompt_id), source, root=self.workspace_root)
