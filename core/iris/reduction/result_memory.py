"""What the reduction memory keeps per tool result, and the keys of its slots.

:mod:`.memory` (the run's :class:`~iris.reduction.memory.ReductionMemory`) and :mod:`.tracker`
(the incremental tracker it holds) both read these; this module imports neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..context.policy import ContextPolicy
from ..session import ToolResultBlock
from .classify import ResultInfo, Verdict
from .render import Rendering
from .validity import Validity

__all__ = ["InfoKey", "KindsKey", "RenderKey", "ResultMemory", "TrackerKey", "VerdictKey"]

KindsKey = tuple[str, tuple[tuple[str, str], ...]]
"""A tool-kind map's source format and its sorted overrides."""
InfoKey = tuple[str, str | None, str, bool, bool, bool, KindsKey]
"""Call id, tool name (None: no call), result text, is_error, reducible, has an artifact, kinds;
the call's arguments are compared on a hit (see :class:`ResultMemory`)."""
VerdictKey = tuple[int, Validity | None, bool, bool, int, str]
"""Age (capped at the last age gate), validity, repeated, recalled, results (capped at
``min_tool_results_prune``), configuration key: everything a verdict depends on besides the
result itself."""
RenderKey = tuple[str | None, str | None, bool, str | None]
"""Renderer, its ``why``, whether artifacts are written, the existing artifact."""
TrackerKey = tuple[str, ContextPolicy, bool, bool, KindsKey, str]
"""Configuration key, policy, read-back hint, whether artifacts are written, kinds, encoding."""
@dataclass(eq=False, slots=True)
class ResultMemory:
    """What one tool result's content gave, and what was decided from it per request context."""

    arguments: Mapping[str, Any] | None
    """The call arguments it was described with (None: no call); a hit must have equal ones."""
    info: ResultInfo
    verdicts: dict[VerdictKey, Verdict] = field(default_factory=dict[VerdictKey, Verdict])
    renderings: dict[RenderKey, Rendering] = field(default_factory=dict[RenderKey, Rendering])
    externalized: tuple[ToolResultBlock, str | None] | None = None
    """The preview block and ``tool-outputs/`` path of a result over the inline budget."""
