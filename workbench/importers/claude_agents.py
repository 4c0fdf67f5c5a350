"""Sub-agents of a Claude Code session and the agent's recorded compaction requests (R-TWIN-2).

Claude Code writes each sub-agent to ``<session>/subagents/agent-<agentId>.jsonl``; its lines carry
the **parent's** ``sessionId`` plus their own ``agentId`` (and ``isSidechain: true``). So that one
file has one id everywhere (store, batch Parquet, CLI, notebook):

* the main transcript keeps the agent's ``sessionId``;
* a sub-agent transcript is ``<sessionId>/agent-<agentId>`` (:func:`subagent_session_id`), with
  ``SessionHeader.parent_id`` = ``sessionId`` and ``agent_id`` = ``agentId``.

The parent links each ``Task``/``Agent`` tool call to its sub-agent through the ``toolUseResult``
of the call's result (``agentId``, ``totalTokens``, ``totalToolUseCount``) or, for a call still
running when the file ends, an ``agent_progress`` line (``data.agentId``, ``parentToolUseID``).

``agent-acompact-<hex>.jsonl`` is the agent's own compaction call: its prompt is the whole
conversation being compacted (the compaction's real input, e.g. 169,248 tokens, almost all cache
reads), its answer the summary. :func:`compaction_requests` reads those files beside a main
transcript and :func:`request_for` pairs each with the boundary it produced: the request whose
prompt continues the boundary's ``logicalParentUuid``, else the last one answered at most
:data:`PAIRING_WINDOW` before the boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from iris.session import Usage

from . import claude_blocks as cc
from ._common import LINE_FAILURES, LineErrors, iter_json_lines, parse_time
from ._source import strip_gz

__all__ = ["PAIRING_WINDOW", "AgentRun", "CompactionRequest", "agent_run", "compaction_requests",
           "is_compaction_request", "request_for", "subagent_file", "subagent_session_id"]

#: How long before a compact boundary its request may have been answered (about 0.4 s in real files).
PAIRING_WINDOW = timedelta(minutes=15)
COMPACTION_PREFIX = "acompact-"


def subagent_session_id(session_id: str, agent_id: str) -> str:
    """The stable id of a sub-agent transcript: ``<parent session id>/agent-<agent id>``."""
    return f"{session_id}/agent-{agent_id}"


def is_compaction_request(agent_id: str | None) -> bool:
    """True for the agent id of a recorded compaction request (``acompact-…``)."""
    return bool(agent_id) and str(agent_id).startswith(COMPACTION_PREFIX)


@dataclass(frozen=True, slots=True)
class AgentRun:
    """What the parent transcript records of one sub-agent run."""

    call_id: str
    agent_id: str
    tokens: int | None = None
    tool_calls: int | None = None


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def agent_run(data: dict[str, Any], result_ids: tuple[str, ...]) -> AgentRun | None:
    """The sub-agent run a parent line records, if any: a tool result whose ``toolUseResult``
    names an ``agentId``, or an ``agent_progress`` line."""
    record = data.get("toolUseResult")
    if type(record) is dict and type(record.get("agentId")) is str and result_ids:
        return AgentRun(result_ids[0], record["agentId"], _count(record.get("totalTokens")),
                        _count(record.get("totalToolUseCount")))
    progress = data.get("data")
    if data.get("type") == "progress" and type(progress) is dict \
            and progress.get("type") == "agent_progress" and type(progress.get("agentId")) is str \
            and type(data.get("parentToolUseID")) is str:
        return AgentRun(data["parentToolUseID"], progress["agentId"])
    return None


@dataclass(frozen=True, slots=True)
class CompactionRequest:
    """One recorded compaction call (an ``agent-acompact-*`` file beside the main transcript)."""

    agent_id: str
    anchor: str | None
    """The ``parentUuid`` of its prompt: the main-transcript line the compaction continues."""
    answered_at: datetime | None
    usage: Usage | None


def _subagents_folder(path: Path) -> Path:
    """``<session>/subagents`` beside the main transcript ``<session>.jsonl`` (or ``.jsonl.gz``)."""
    return path.parent / strip_gz(path.name).removesuffix(".jsonl") / "subagents"


def subagent_file(path: Path, agent_id: str) -> Path | None:
    """The transcript of sub-agent ``agent_id`` beside the main transcript ``path``, if present."""
    folder = _subagents_folder(path)
    for name in (f"agent-{agent_id}.jsonl", f"agent-{agent_id}.jsonl.gz"):
        if (folder / name).is_file():
            return folder / name
    return None


def compaction_requests(path: Path) -> list[CompactionRequest]:
    """The recorded compaction requests beside the main transcript ``path`` (none when the
    ``<session>/subagents`` folder is absent). Unreadable lines of those files are ignored: they
    only add detail to the main transcript's compactions."""
    folder = _subagents_folder(path)
    if not folder.is_dir():
        return []
    found = []
    for file in sorted(folder.glob(f"agent-{COMPACTION_PREFIX}*.jsonl*")):
        request = _read_request(file)
        if request is not None:
            found.append(request)
    return found


def _read_request(path: Path) -> CompactionRequest | None:
    errors = LineErrors(path, True, [], [])
    agent_id = strip_gz(path.name).removesuffix(".jsonl").removeprefix("agent-")
    anchor: str | None = None
    answered: datetime | None = None
    usage: Usage | None = None
    try:
        for _, data in iter_json_lines(path, errors):
            message = data.get("message")
            if data.get("type") == "user" and type(data.get("parentUuid")) is str:
                anchor = data["parentUuid"]
            elif data.get("type") == "assistant" and type(message) is dict \
                    and type(message.get("usage")) is dict:
                try:
                    model = message.get("model") if type(message.get("model")) is str else None
                    usage = cc.anthropic_usage(message["usage"], model)
                    answered = parse_time(data.get("timestamp"))
                except LINE_FAILURES:
                    continue
    except OSError:
        return None
    return CompactionRequest(agent_id, anchor, answered, usage) if usage is not None else None


def request_for(anchor: str | None, at: datetime | None, requests: list[CompactionRequest],
                used: set[str]) -> CompactionRequest | None:
    """The recorded request that produced the compact boundary continuing ``anchor`` at ``at``."""
    free = [r for r in requests if r.agent_id not in used]
    for request in free:
        if anchor is not None and request.anchor == anchor:
            return request
    if at is None:
        return None
    before = [r for r in free if r.answered_at is not None
              and timedelta(0) <= at - r.answered_at <= PAIRING_WINDOW]
    return max(before, key=lambda r: r.answered_at or at) if before else None
