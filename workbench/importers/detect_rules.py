"""What one JSON value of each built-in format looks like (the ``detect`` of each importer).

Each predicate gets a JSON Lines record or a whole single-document file, already parsed, and
answers from its shape alone; they never raise.
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_claude_code", "is_codex", "is_native", "is_openai_chat", "is_otel", "is_span",
           "is_swe_agent"]

_CODEX_TYPES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}
_CLAUDE_TYPES = {"user", "assistant", "system", "progress", "summary", "file-history-snapshot",
                 "queue-operation"}
_CLAUDE_BARE = {"summary", "file-history-snapshot", "queue-operation"}
_SPAN_IDS = ("spanId", "span_id", "context")


def is_native(data: Any) -> bool:
    return isinstance(data, dict) and data.get("type") == "header" and "session_id" in data


def is_codex(data: Any) -> bool:
    return isinstance(data, dict) and data.get("type") in _CODEX_TYPES and "payload" in data


def is_claude_code(data: Any) -> bool:
    if not isinstance(data, dict) or data.get("type") not in _CLAUDE_TYPES:
        return False
    return ("uuid" in data or "sessionId" in data or "message" in data
            or data.get("type") in _CLAUDE_BARE)


def is_swe_agent(data: Any) -> bool:
    """``{trajectory: [...], history: [...], info: {...}}`` (also ``environment``)."""
    if not isinstance(data, dict) or "messages" in data:
        return False
    history, steps = data.get("history"), data.get("trajectory")
    if isinstance(history, list) and (isinstance(steps, list) or "info" in data
                                      or "environment" in data):
        return True
    return isinstance(steps, list) and bool(steps) and isinstance(steps[0], dict) and (
        "action" in steps[0] and "observation" in steps[0])


def is_span(data: Any) -> bool:
    """One span of a flat span list: an id and attributes (a dict or an OTLP key/value list)."""
    return (isinstance(data, dict) and isinstance(data.get("attributes"), dict | list)
            and any(k in data for k in _SPAN_IDS) and "name" in data)


def is_otel(data: Any) -> bool:
    """OTLP JSON (``resourceSpans``), ``{spans: [...]}``, a list of spans, or one span."""
    if isinstance(data, list):
        return bool(data) and is_span(data[0])
    if not isinstance(data, dict):
        return False
    if isinstance(data.get("resourceSpans"), list):
        return True
    spans = data.get("spans")
    if isinstance(spans, list):
        return not spans or is_span(spans[0])
    return is_span(data)


def is_openai_chat(data: Any) -> bool:
    """A list (of messages: asked last, after the span lists), or an object with ``messages``."""
    return isinstance(data, list) or isinstance(data, dict) and isinstance(data.get("messages"), list)
