"""Extractive checkpoint sections: what an offline summariser can honestly say about a head.

Every required section is filled from the messages themselves: the request, the objective, the
files, commands (with outcomes), identifiers, errors, URLs and numbers the head states (every one
that fits the summary's allowance, the most recent first: :mod:`.evidence`), todo items and the
last assistant intent. Nothing is invented; empty findings say so explicitly. Lists are capped so
the summary stays small and deterministic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..session import Message, TextBlock
from .carried import is_real_user_message
from .checkpoint import previous_sections
from .evidence import DEFAULT_EVIDENCE_CHARS, evidence_section

__all__ = ["EDIT_TOOL", "PATH_KEYS", "SHELL_TOOL", "extractive_sections"]

MAX_ITEMS = 8
MAX_CHARS = 220
PATH_KEYS = ("path", "file_path", "filePath", "filename", "notebook_path")
"""Tool-argument keys that name the file a call works on."""
EDIT_TOOL = re.compile(r"edit|write|patch|replace|create|delete|move", re.IGNORECASE)
"""Tool names that change files."""
SHELL_TOOL = re.compile(r"bash|shell|exec|command|terminal|run", re.IGNORECASE)
"""Tool names that run shell commands."""
_TODO = re.compile(r"todo", re.IGNORECASE)
_AGENT = re.compile(r"agent|task|delegate", re.IGNORECASE)
_DECISION = re.compile(r"\b(decid\w*|I will|I'll|we will|plan\w*|instead|approach|chose|use)\b",
                       re.IGNORECASE)


def _short(text: str, limit: int = MAX_CHARS) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit - 1] + "…"


def _bullets(items: Sequence[str], empty: str) -> str:
    uniq = list(dict.fromkeys(i for i in items if i))
    if not uniq:
        return empty
    shown = uniq[-MAX_ITEMS:]
    more = f"\n- (+{len(uniq) - len(shown)} earlier items in the archive)" if len(uniq) > len(shown) else ""
    return "\n".join(f"- {i}" for i in shown) + more


def _tool_facts(head: Sequence[Message]) -> dict[str, list[str]]:
    facts: dict[str, list[str]] = {"read": [], "edited": [], "commands": [], "errors": [],
                                   "todos": [], "agents": []}
    calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for message in head:
        for call in message.tool_calls:
            calls[call.id] = (call.name, call.arguments)
            path = next((str(call.arguments[k]) for k in PATH_KEYS if k in call.arguments), None)
            if path:
                facts["edited" if EDIT_TOOL.search(call.name) else "read"].append(f"`{path}`")
            if _TODO.search(call.name):
                facts["todos"].append(_short(json.dumps(call.arguments, ensure_ascii=False,
                                                        sort_keys=True), 300))
            elif _AGENT.search(call.name) and not path:
                facts["agents"].append(f"{call.name}: {_short(str(call.arguments), 160)}")
        for result in message.tool_results:
            name, args = calls.get(result.call_id, ("?", {}))
            first = _short(result.text.strip().splitlines()[0] if result.text.strip() else "")
            if result.is_error:
                facts["errors"].append(f"{name}: {first}")
            command: object = args.get("command") or args.get("cmd")
            if command is not None and SHELL_TOOL.search(name):
                if isinstance(command, list):
                    command = " ".join(map(str, cast("list[object]", command)))
                outcome = "failed" if result.is_error else "ok"
                facts["commands"].append(f"`{_short(str(command), 120)}` → {outcome}: {first}")
    return facts


def _user_texts(head: Sequence[Message]) -> list[str]:
    return [m.text.strip() for m in head if is_real_user_message(m)]


def _prose(message: Message) -> str:
    """Only what the assistant wrote as text (not its tool calls or reasoning)."""
    return "\n".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()


def _assistant_texts(head: Sequence[Message]) -> list[str]:
    return [t for m in head if m.role == "assistant" and (t := _prose(m))]


def _next_step(assistant: list[str], request: str) -> str:
    if assistant:
        sentences = re.split(r"(?<=[.!?。])\s+", assistant[-1])
        intent = next((s for s in reversed(sentences) if len(s.strip()) >= 12), "")
        if intent:
            return f"Resume from the last assistant intent: {_short(intent)}"
    return f"Work on the current request: {_short(request or 'see the retained messages')}"


def _background(users: list[str], carried: dict[str, str], objective: str) -> str:
    """The first request of the segment, else the carried goals (or the carried objective when
    the objective changed), so the original task survives repeated compactions."""
    if len(users) > 1:
        return _short(users[0], 400)
    goals = carried.get("Background Goals", "")
    old = carried.get("Active Objective", "")
    if (not goals or goals.startswith("None beyond")) and old and old != objective:
        return old
    return goals or "None beyond the active objective."


def extractive_sections(head: Sequence[Message], *, current_request: str | None,
                        constraints: Sequence[str] = (),
                        previous_checkpoint: str | None = None,
                        evidence_chars: int = DEFAULT_EVIDENCE_CHARS) -> dict[str, str]:
    """The eleven required sections, filled from ``head``; with no user message in the head the
    anchors (request, objective, goals) are carried verbatim from the previous checkpoint.
    ``## Files and Evidence`` lists the head's facts within ``evidence_chars`` characters
    (:mod:`.evidence`)."""
    users, assistant, facts = _user_texts(head), _assistant_texts(head), _tool_facts(head)
    carried = previous_sections(previous_checkpoint)
    request = (current_request or (users[-1] if users else "")).strip()
    request = request or carried.get("Current User Request", "")
    objective = users[-1] if users else carried.get("Active Objective", request)
    background = _background(users, carried, objective)
    decisions = [_short(s) for t in assistant for s in re.split(r"(?<=[.!?。])\s+", t)
                 if _DECISION.search(s)]
    progress = [(f"{len(facts['commands'])} command(s), {len(facts['read'])} read(s), "
                 f"{len(facts['edited'])} edit(s), {len(facts['errors'])} error(s) in "
                 f"{len(head)} archived messages.")]
    progress += [_short(t) for t in assistant[-3:]]
    if previous_checkpoint:
        progress.insert(0, "Continues the previous checkpoint (see ## Previous Checkpoint).")
    files = evidence_section(head, edit_tool=EDIT_TOOL, max_chars=evidence_chars)
    todos = (_bullets(facts["todos"][-1:], "- None recorded") if facts["todos"]
             else "- None recorded")
    return {
        "Current User Request": _short(request, 600) or "No user request in the archived segment.",
        "Active Objective": _short(objective, 400) or "No objective stated in the archived segment.",
        "Background Goals": background,
        "User Constraints": _bullets([_short(c) for c in constraints], "None stated."),
        "Progress": "(Extractive summary: built offline from the archived messages; no model "
                    "wrote it.)\n" + _bullets(progress, "No progress recorded."),
        "Key Decisions": _bullets(decisions, "No explicit decisions in the archived segment."),
        "Files and Evidence": files or "- No files or commands in the archived segment.",
        "Todo State": (f"### Active/relevant to latest request\n{todos}\n"
                       "### Completed/background\n- See Progress\n### Stale/superseded\n- None"),
        "SubAgent State": _bullets(facts["agents"], "No subagents recorded."),
        "Open Problems": _bullets(facts["errors"], "No unresolved errors recorded."),
        "Next Step": _next_step(assistant, request),
    }
