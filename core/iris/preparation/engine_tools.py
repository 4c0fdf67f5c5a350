"""Tools the engine itself provides, on top of the session's own tools (R-POL-3, R-CMP-12): a
replay and a live run (``iris.runner``) offer them alike.

With ``context_policy.enabled`` the engine offers ``context_read`` and ``context_search`` (they are
not builtin tools and only read the session's committed material); with ``compaction.model_driven``
it offers ``compact_context``. Their schemas count against the input budget like any other tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..compaction.model_driven import COMPACT_CONTEXT_TOOL
from ..config import ContextConfig
from ..context.access import READ_LIMIT_MAX, SEARCH_LIMIT_MAX

__all__ = ["CONTEXT_READ_TOOL", "CONTEXT_SEARCH_TOOL", "ENGINE_TOOL_NAMES", "engine_tools", "with_engine_tools"]

CONTEXT_READ_TOOL: dict[str, Any] = {
    "name": "context_read",
    "description": ("Read back committed session material by reference: message:N or result:N:B "
                    "(0-based). Pages by characters; representation 'raw' only for results saved "
                    "as an artifact. Never re-runs the original tool."),
    "input_schema": {
        "type": "object", "required": ["ref"], "additionalProperties": False,
        "properties": {
            "ref": {"type": "string"},
            "offset": {"type": "integer", "minimum": 0, "default": 0},
            "limit": {"type": "integer", "minimum": 1, "maximum": READ_LIMIT_MAX, "default": 4000},
            "representation": {"enum": ["text", "raw"], "default": "text"},
        },
    },
}

CONTEXT_SEARCH_TOOL: dict[str, Any] = {
    "name": "context_search",
    "description": ("Case-insensitive substring search over this session's committed text, tool "
                    "previews and image names; one match per message; continue from next_after."),
    "input_schema": {
        "type": "object", "required": ["query"], "additionalProperties": False,
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "after": {"type": "integer", "minimum": 0, "default": 0},
            "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_LIMIT_MAX, "default": 10},
        },
    },
}


ENGINE_TOOL_NAMES = frozenset({"context_read", "context_search", str(COMPACT_CONTEXT_TOOL["name"])})


def engine_tools(config: ContextConfig) -> tuple[dict[str, Any], ...]:
    """The tool schemas the engine adds for this configuration."""
    tools: list[dict[str, Any]] = []
    if config.context_policy.enabled:
        tools += [CONTEXT_READ_TOOL, CONTEXT_SEARCH_TOOL]
    if config.compaction.model_driven:
        tools.append(COMPACT_CONTEXT_TOOL)
    return tuple(tools)


def with_engine_tools(tools: Sequence[Mapping[str, Any]], config: ContextConfig
                      ) -> tuple[Mapping[str, Any], ...]:
    """The caller's tools followed by the engine's, skipping names the caller already has."""
    names = {str(t["name"]) for t in tools}
    return (*tools, *(t for t in engine_tools(config) if t["name"] not in names))
