"""Whether the todo list is finished, for the wrap-up grace of R-RED-9.

The caller of :func:`~iris.reduction.reduce_request` passes ``todos_completed``; this helper derives it
from the conversation: the latest todo call (``TodoWrite``/``todo_write``/Codex ``update_plan``)
lists at least one item and every item is completed or cancelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from ..session import Message
from .toolkinds import ToolKindMap

__all__ = ["todos_all_completed"]

_DONE = {"completed", "cancelled", "canceled", "done"}


def todos_all_completed(messages: Sequence[Message], tool_kinds: ToolKindMap | None = None) -> bool:
    kinds = tool_kinds or ToolKindMap()
    for msg in reversed(messages):
        for call in reversed(msg.tool_calls):
            if kinds.kind(call.name) != "todo":
                continue
            items = call.arguments.get("todos", call.arguments.get("plan"))
            if not isinstance(items, list) or not items:
                return False
            return all(isinstance(i, dict) and str(cast("dict[str, object]", i).get("status", "")).lower()
                       in _DONE for i in cast("list[object]", items))
    return False
