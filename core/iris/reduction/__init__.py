"""Request-level reduction of tool outputs (SPEC §8) and context-policy trimming (R-POL-2).

Entry point: :func:`reduce_request`. Configuration: :class:`ReductionConfig`. Tool names map to
kinds through :class:`ToolKindMap`.
"""

from .artifacts import INLINE_BUDGET_BYTES, externalize_large_result, safe_tool_name
from .config import REDUCTION_DEFAULTS, ReductionConfig, parse_reduction
from .engine import reduce_request
from .facts import FileChange, ToolFacts, extract_facts
from .memory import ReductionMemory
from .models import FrozenRendering, ReductionResult, ReductionState, ToolResultDecision
from .todos import todos_all_completed
from .toolkinds import DEFAULT_TOOL_KINDS, ToolKind, ToolKindMap

__all__ = [
    "DEFAULT_TOOL_KINDS",
    "INLINE_BUDGET_BYTES",
    "REDUCTION_DEFAULTS",
    "FileChange",
    "FrozenRendering",
    "ReductionConfig",
    "ReductionMemory",
    "ReductionResult",
    "ReductionState",
    "ToolFacts",
    "ToolKind",
    "ToolKindMap",
    "ToolResultDecision",
    "externalize_large_result",
    "extract_facts",
    "parse_reduction",
    "reduce_request",
    "safe_tool_name",
    "todos_all_completed",
]
