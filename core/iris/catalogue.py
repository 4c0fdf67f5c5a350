"""The packaged model catalogue: context window and maximum output per model, each with its source.

The data is ``iris/defaults/models.yaml``. A configuration's ``catalogue:`` section adds or
overrides entries (same fields). :func:`lookup` finds the entry for a model name: exact, else the
longest catalogue name that the model name starts with, followed by ``-``, ``@`` or ``:`` (dated
snapshots such as ``claude-3-5-sonnet-20241022``); a provider prefix (``anthropic/``) is ignored.

Budget from a catalogue entry (rule 4 of R-CMP-3): the documented input limit when the provider
publishes one (``gpt-5``: 272,000 of a 400,000 window), else the whole context window. The
maximum output is shown but not reserved: it is the longest completion the model can write, not
what an agent asks for (Claude Code requests far less and compacts near the full window). Set
``model.limit`` in the configuration to reserve output explicitly.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any, cast

from pydantic import BaseModel, Field

from .frozen import FrozenModel
from .yaml_errors import read_yaml

__all__ = ["CatalogueEntry", "builtin_catalogue", "lookup"]


class CatalogueEntry(FrozenModel):
    """One model's published limits."""

    name: str = ""
    """The catalogue name that matched (filled by :func:`lookup`)."""
    context: int = Field(gt=0)
    """Context window in tokens."""
    max_output: int | None = Field(default=None, gt=0)
    """Largest completion the model can write (shown, not reserved)."""
    input: int | None = Field(default=None, gt=0)
    """A separately documented input limit, when the provider publishes one."""
    source: str = ""
    """Where the figures come from (a documentation page, or ``configuration``)."""

    @property
    def input_budget(self) -> int:
        """The budget this entry gives: the input limit, else the whole window."""
        return self.input or self.context

    def describe(self) -> str:
        """``claude-opus-4-6: context 200,000, max output 128,000 (Anthropic, …)``."""
        parts = [f"context {self.context:,}"]
        if self.input:
            parts.append(f"input {self.input:,}")
        if self.max_output:
            parts.append(f"max output {self.max_output:,}")
        return f"{self.name}: {', '.join(parts)} ({self.source or 'no source given'})"


@lru_cache(maxsize=1)
def builtin_catalogue() -> dict[str, CatalogueEntry]:
    """The packaged entries by name (read once)."""
    text = resources.files("iris").joinpath("defaults/models.yaml").read_text(encoding="utf-8")
    data = cast("dict[str, Any]", read_yaml(text, "iris/defaults/models.yaml")[0])
    return {name: CatalogueEntry(name=name, **fields) for name, fields in data["models"].items()}


def _normalise(model: str) -> str:
    return model.strip().lower().rsplit("/", 1)[-1]


def lookup(model: str | None, extra: Mapping[str, Any] | None = None) -> CatalogueEntry | None:
    """The catalogue entry for ``model`` (configuration entries in ``extra`` first), or None."""
    if not model:
        return None
    entries = dict(builtin_catalogue())
    for name, entry in (extra or {}).items():
        fields = entry.model_dump() if isinstance(entry, BaseModel) else dict(entry)
        fields["name"] = name
        fields.setdefault("source", "configuration")
        entries[name.lower()] = CatalogueEntry(**fields)
    key = _normalise(model)
    if key in entries:
        return entries[key]
    matches = [name for name in entries
               if key.startswith(name) and key[len(name):len(name) + 1] in ("-", "@", ":")]
    return entries[max(matches, key=len)] if matches else None
