"""Counts that describe an imported session, for ``workbench inspect PATH --json`` and the UI.

The figures are chosen so they can be checked against the source file by hand:
messages, responses (model calls: request batches; copies a recorded compaction provided are
not responses), tool calls and results, unanswered calls, recorded
compactions, responses with provider usage, the largest normalised provider prompt, and the
local token estimate of the whole session text.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError
from iris.session import Session
from iris.tokens import default_estimator

from ..importers import ImportResult

__all__ = ["compaction_requests", "inspect_session", "session_counts", "subagent_figures"]


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


def subagent_figures(session: Session, children: Mapping[str, Session]) -> list[dict[str, Any]]:
    """Each tool call of ``session`` that ran a sub-agent, with what the sub-agent did: its model
    calls, tool calls, tokens (prompt and output summed over its calls) and its recorded bill
    (``billed_usd``, :func:`workbench.pricing.billing.recorded_bill`) when its transcript is in
    ``children`` (by session id), and what the parent recorded of it (R-TWIN-2)."""
    rows: list[dict[str, Any]] = []
    for run in session.subagents:
        child = children.get(run.session_id)
        loc = session.index.calls.get(run.call_id)
        row: dict[str, Any] = {"call_id": run.call_id, "message": loc.message if loc else None,
                               "agent_id": run.agent_id, "session_id": run.session_id,
                               "imported": child is not None, "model_calls": None, "tool_calls": None,
                               "prompt_tokens": None, "output_tokens": None,
                               "recorded_tokens": run.recorded_tokens,
                               "recorded_tool_calls": run.recorded_tool_calls}
        row["billed_usd"] = None
        if child is not None:
            from ..pricing.billing import recorded_bill

            usages = [m.usage for m in child.messages if m.role == "assistant" and m.usage is not None]
            row.update(model_calls=len(child.index.batches), tool_calls=len(child.index.calls),
                       prompt_tokens=sum(u.prompt_tokens for u in usages),
                       output_tokens=sum(u.output_tokens for u in usages),
                       billed_usd=recorded_bill(child).usd)
        rows.append(row)
    return rows


def compaction_requests(session: Session) -> list[dict[str, Any]]:
    """The recorded compactions whose summary call the transcript records (Claude Code's
    ``agent-acompact-*``): its prompt is the compaction's real input, its output the summary."""
    return [{"at_message": c.at_message, "request_session_id": c.request_session_id,
             "prompt_tokens": c.request_usage.prompt_tokens, "output_tokens": c.request_usage.output_tokens,
             "cache_read_tokens": c.request_usage.cache_read_tokens}
            for c in session.compactions if c.request_usage is not None]


def _sibling_children(result: ImportResult) -> dict[str, Session]:
    """The sub-agents of a main Claude Code transcript: the files beside it
    (``<stem>/subagents/``), else the conversations its ``agent_progress`` lines carry, read
    leniently (:func:`workbench.importers.claude_progress.subagent_sessions`)."""
    from ..importers.claude_progress import subagent_sessions

    if result.format != "claude_code" or not result.session.subagents:
        return {}
    try:
        return {s.header.session_id: s for s in subagent_sessions(Path(result.path))}
    except (SessionFormatError, OSError):  # a broken sub-agent transcript only loses its figures
        return {}


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
        "parent_id": result.session.header.parent_id,
        "agent_id": result.session.header.agent_id,
        "subagents": subagent_figures(result.session, _sibling_children(result)),
        "compaction_requests": compaction_requests(result.session),
    }
