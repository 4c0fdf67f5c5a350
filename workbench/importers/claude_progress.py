"""The sub-agents of a Claude Code session, from their files or from the parent's ``agent_progress``
lines (R-TWIN-2, R-TWIN-8).

Claude Code writes each sub-agent to ``<session>/subagents/agent-<agentId>.jsonl``. Where that
folder is absent (a transcript copied on its own), the parent still holds the sub-agent's whole
conversation: every ``progress`` line with ``data.type: agent_progress`` carries one line of it in
``data.message`` (a user or assistant line with its ``uuid``, ``timestamp`` and, for a response,
``message.usage``), with ``data.agentId`` and the parent's ``parentToolUseID``. Those lines are
imported as that sub-agent's session by the Claude Code importer's own rules, with the id and links
a sub-agent file gets (``<sessionId>/agent-<agentId>``, child of ``sessionId``). The copies carry
the streaming placeholders of each response's output count (the final count is only in the
sub-agent's own file), so their output tokens, and their bill, can be a little low.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError
from iris.session import Session

from ._common import LineErrors, iter_json_lines
from ._source import strip_gz
from .claude_agents import COMPACTION_PREFIX

__all__ = ["progress_conversations", "subagent_sessions"]


def progress_conversations(path: str | Path) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """Each sub-agent's conversation in the ``agent_progress`` lines of the transcript ``path``:
    by agent id, its lines as a sub-agent file holds them (``sessionId`` the parent's,
    ``isSidechain``, ``agentId``, each line's parent the one before), with the parent file's line
    numbers."""
    path = Path(path)
    found: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    last: dict[str, str] = {}
    errors = LineErrors(path, True, [], [])
    for lineno, data in iter_json_lines(path, errors):
        progress = data.get("data")
        if data.get("type") != "progress" or type(progress) is not dict \
                or progress.get("type") != "agent_progress":
            continue
        agent, inner = progress.get("agentId"), progress.get("message")
        if type(agent) is not str or type(inner) is not dict \
                or inner.get("type") not in ("user", "assistant") or type(inner.get("uuid")) is not str:
            continue
        line = {**inner, "parentUuid": last.get(agent), "sessionId": data.get("sessionId"),
                "isSidechain": True, "agentId": agent, "cwd": data.get("cwd")}
        last[agent] = inner["uuid"]
        found.setdefault(agent, []).append((lineno, line))
    return found


def _folder(path: Path) -> Path:
    return path.parent / strip_gz(path.name).removesuffix(".jsonl") / "subagents"


def subagent_sessions(path: str | Path,
                      warnings: list[SessionFormatError] | None = None) -> tuple[Session, ...]:
    """The sub-agents of the main Claude Code transcript ``path``: the files of its
    ``<session>/subagents`` folder (not the agent's recorded compaction requests) when it has
    one, else the conversations its ``agent_progress`` lines carry. A file or conversation that
    cannot be imported is left out and named in ``warnings``."""
    from . import load_session
    from .claude_code import load_claude_lines

    path = Path(path)
    sessions: list[Session] = []
    folder = _folder(path)
    if folder.is_dir():
        for file in sorted(folder.glob("agent-*.jsonl*")):
            if file.name.startswith(f"agent-{COMPACTION_PREFIX}"):
                continue
            try:
                sessions.append(load_session(file, lenient=True).session)
            except SessionFormatError as exc:
                if warnings is not None:
                    warnings.append(exc)
        return tuple(sessions)
    for lines in progress_conversations(path).values():
        try:
            sessions.append(load_claude_lines(path, lines, warnings=warnings))
        except SessionFormatError as exc:
            if warnings is not None:
                warnings.append(exc)
    return tuple(sessions)
