"""Positional construction for the typed context objects the seed writes positionally.

Seed 000 writes ``ContextContribution(key, text, required=True, priority=100)``,
``ContextBuildScope(session_id, run_id, step_index, workspace_root, run_input)``,
``ContextReadPage(ref, representation, offset, next_offset, has_more, content)`` and
``ContextSearchPage(matches, next_after, has_more)``. Pydantic models take keywords only; this base
maps positional arguments to the fields in declaration order (keywords keep working).
"""

from __future__ import annotations

from typing import Any

from ..frozen import FrozenModel

__all__ = ["PositionalModel"]


class PositionalModel(FrozenModel):
    """A frozen model that also accepts its fields positionally, in declaration order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            names = list(type(self).model_fields)
            name = type(self).__name__
            if len(args) > len(names):
                raise TypeError(f"{name}() takes at most {len(names)} positional arguments "
                                f"({', '.join(names)}), got {len(args)}")
            for field, value in zip(names, args, strict=False):
                if field in kwargs:
                    raise TypeError(f"{name}() got multiple values for argument {field!r}")
                kwargs[field] = value
        super().__init__(**kwargs)
