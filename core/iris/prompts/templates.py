"""What the engine asks of a set of prompt templates: render one by id, and name the set.

:class:`~iris.prompts.PromptSnapshot` is the implementation; a caller may pass anything with the
same two members (for example a wrapper that records each render, or that switches snapshots at
one step of a re-run).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

__all__ = ["PromptTemplates"]


@runtime_checkable
class PromptTemplates(Protocol):
    """Renders the named templates (R-PRM-2) and names the set it renders from."""

    @property
    def snapshot_id(self) -> str:
        """Content hash of the template sources (part of a replay's configuration id)."""
        ...

    def render(self, prompt_id: str, variables: Mapping[str, Any]) -> str:
        """The template ``prompt_id`` rendered with ``variables``."""
        ...
