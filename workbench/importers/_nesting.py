"""Free-form JSON objects nested deeper than the session records can hold, kept as their text.

Tool-call arguments and a provider's usage object are stored as the agent wrote them, but the
records are serialised by pydantic, which stops at about 255 levels ("Maximum serialization depth
exceeded"), and the replay walks them recursively. A file a real agent wrote is never refused for
this: an object nested deeper than :data:`MAX_NESTING` levels is kept as ``{"_raw": <its JSON
text>}`` (the form arguments that are not a JSON object already take), written without recursion.
"""

from __future__ import annotations

import json
from typing import Any, cast

__all__ = ["MAX_NESTING", "json_text", "too_deep", "within_nesting"]

MAX_NESTING = 200
"""Deepest object or array nesting kept as parsed JSON (pydantic serialises about 255 levels)."""


def too_deep(value: object, limit: int = MAX_NESTING) -> bool:
    """Whether ``value`` nests objects and arrays more than ``limit`` levels (``value`` itself
    is level 1); a walk without recursion that visits containers only."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = cast("dict[str, object]", item).values() if type(item) is dict else \
            cast("list[object]", item)
        for child in children:
            if type(child) is dict or type(child) is list:  # JSON decodes to these exact types
                stack.append((child, depth + 1))
    return False


class _Text(str):
    """Punctuation already written out (told apart from string values on the stack)."""

    __slots__ = ()


_OPEN_OBJECT, _CLOSE_OBJECT = _Text("{"), _Text("}")
_OPEN_ARRAY, _CLOSE_ARRAY, _COMMA = _Text("["), _Text("]"), _Text(", ")


def json_text(value: object) -> str:
    """``json.dumps(value, ensure_ascii=False)`` written without recursion (any depth)."""
    parts: list[str] = []
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Text:
            parts.append(item)
        elif isinstance(item, dict):
            entries: list[object] = [_CLOSE_OBJECT]
            for i, (key, child) in enumerate(reversed(list(item.items()))):
                entries.extend((child, _Text(json.dumps(str(key), ensure_ascii=False) + ": ")))
                if i < len(item) - 1:
                    entries.append(_COMMA)
            entries.append(_OPEN_OBJECT)
            stack.extend(entries)
        elif isinstance(item, list):
            entries = [_CLOSE_ARRAY]
            for i, child in enumerate(reversed(item)):
                entries.append(child)
                if i < len(item) - 1:
                    entries.append(_COMMA)
            entries.append(_OPEN_ARRAY)
            stack.extend(entries)
        else:
            parts.append(json.dumps(item, ensure_ascii=False))
    return "".join(parts)


def within_nesting(value: dict[str, Any]) -> dict[str, Any]:
    """``value``, or ``{"_raw": <its JSON text>}`` when it nests deeper than :data:`MAX_NESTING`."""
    return {"_raw": json_text(value)} if too_deep(value) else value
