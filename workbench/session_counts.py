"""Counts that describe an imported session, for ``workbench inspect PATH --json`` and the UI.

The figures are chosen so they can be checked against the source file by hand:
messages, responses (model calls: request batches; copies a recorded compaction provided are
not responses), tool calls and results, unanswered calls, recorded
compactions, responses with provider usage, the largest normalised provider prompt, and the
local token estimate of the whole session text.
"""

from __future__ import annotations

from typing import Any

from iris.session import Session
from iris.tokens import default_estimator

from .importers import ImportResult

__all__ = ["inspect_session", "session_counts"]


def session_counts(session: Session) -> dict[str, Any]:
    """The format-independent counts of a session."""
    index = session.index
    assistants = [m for m in session.messages if m.role == "assistant" and not m.compaction_provided]
    usages = [m.usage for m in assistants if m.usage is not None]
    return {
        "session_id": session.header.session_id,
        "title": session.header.title,
        "model": session.header.model,
        "messages": len(session.messages),
        "messages_by_role": {role: sum(1 for m in session.messages if m.role == role)
                             for role in ("system", "user", "assistant", "tool")},
        "synthetic_messages": sum(1 for m in session.messages if m.synthetic),
        "compaction_provided_messages": sum(1 for m in session.messages if m.compaction_provided),
        "responses": len(index.batches),
        "tool_calls": sum(len(m.tool_calls) for m in assistants),
        "tool_results": sum(len(m.tool_results) for m in session.messages),
        "unanswered_calls": len(index.unanswered_calls),
        "orphan_results": len(index.orphan_results),
        "compactions": len(session.compactions),
        "model_switches": len(session.model_switches),
        "responses_with_usage": len(usages),
        "max_prompt_tokens": max((u.prompt_tokens for u in usages), default=None),
        "estimated_tokens": default_estimator().request_tokens(session.messages),
    }


def inspect_session(result: ImportResult) -> dict[str, Any]:
    """Counts of an imported session plus how it was read (format, skipped lines, hash, and the
    lines it could not place in the conversation, each with its line and why)."""
    return {
        "path": result.path,
        "format": result.format,
        "content_hash": result.content_hash,
        **session_counts(result.session),
        "skipped_lines": len(result.skipped),
        "warnings": len(result.warnings),
        "unplaced_lines": len(result.unplaced),
        "unplaced": [u.model_dump(mode="json") for u in result.unplaced],
    }
