"""What the head of a conversation got done and what it left open, for an extractive checkpoint:
the user's requests, commits, closed tasks and passing tests with their evidence, decisions that
changed the plan, the latest plan or todo list, subagents, and the problems still open at the cut.

Everything is read from the messages (tool calls, their results, the assistant's prose); nothing
is invented. Each finder returns short lines, newest first where order matters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from ..frozen import FrozenModel
from ..session import Message, TextBlock
from .evidence import shell_command, shell_output, simple_commands

__all__ = ["Finding", "PlanItem", "current_task", "decisions", "done", "latest_plan", "open_problems",
           "requests", "subagents"]

_TAGGED = re.compile(r"<(system-reminder|local-command-[\w-]+|command-[\w-]+|task-notification)>"
                     r".*?</\1>", re.DOTALL)
_QUEUED = re.compile(r"The user sent the following message:\s*(.+?)(?:\n\s*Please address|\Z)",
                     re.DOTALL)
_TEST = re.compile(r"\b(pytest|jest|vitest|mocha|rspec|phpunit|test|tests|check|spec)\b")
_TEST_EVIDENCE = re.compile(r"\b\d+ (?:passed|tests?|examples?|failures?|checks?)\b[^\n]*"
                            r"|\bok\b[^\n]*\d+[^\n]*|\bPASS(?:ED)?\b[^\n]*|\ball \w+ passed\b[^\n]*",
                            re.IGNORECASE)
_CLOSE = re.compile(r"^(?:bd|br|beads)\s+close\s+(\S+)|^gh\s+(?:issue|pr)\s+(?:close|merge)\s+(\S+)")
_DECISION = re.compile(
    r"\b(instead|rather than|switch(?:ed|ing)? to|decid\w+|the (?:root )?cause|turns out|"
    r"won't|will not|no longer|better to|trade-?off|chose|going with|the fix is|the problem is|"
    r"the issue is|approach|not needed|unnecessary|simpler|drop(?:ped)? the|keep the)\b",
    re.IGNORECASE)
_CHATTER = re.compile(r"^(let me|let's|now\b|i'll (?:now|start|enter|check|look|read|run|write)|"
                      r"i will (?:now|start|check|look|read|run)|first,|next,|ok\b|okay\b|great\b|"
                      r"perfect\b|good\b)", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?。])\s+|\n+")
_ERRORISH = re.compile(r"error|exception|failed|fatal|traceback|not found|denied|cannot|invalid",
                       re.IGNORECASE)


class PlanItem(FrozenModel):
    text: str
    status: str
    """``completed``, ``in_progress`` or ``pending`` (as the tool wrote it)."""


class Finding(FrozenModel):
    """One line of a section, with the head index it comes from."""

    at: int
    text: str


def short(text: str, limit: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit - 1] + "…"


def requests(head: Sequence[Message]) -> list[Finding]:
    """What a person asked, in order: each real user message's text without the harness's tagged
    insertions, and messages the user queued while the agent worked (marked ``(queued)``)."""
    out: list[Finding] = []
    for i, message in enumerate(head):
        if message.role != "user" or message.synthetic or message.is_compaction_summary \
                or message.tool_results:
            continue
        raw = "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
        for queued in _QUEUED.finditer(raw):
            out.append(Finding(at=i, text="(queued) " + queued.group(1).strip()))
        typed = _TAGGED.sub(" ", raw).strip()
        if typed and not _QUEUED.search(typed):
            out.append(Finding(at=i, text=typed))
    return out


def _calls(head: Sequence[Message]) -> Iterator[tuple[int, str, Mapping[str, Any], str | None,
                                                      bool]]:
    """``(index, tool name, arguments, result text or None, failed)`` of every tool call."""
    results: dict[str, tuple[str, bool]] = {}
    for message in head:
        for result in message.tool_results:
            results[result.call_id] = (result.text, result.is_error)
    for i, message in enumerate(head):
        for call in message.tool_calls:
            text, failed = results.get(call.id, (None, False))
            if text is not None and shell_command(call.name, call.arguments) is not None:
                text, failed = shell_output(text, failed)
            yield i, call.name, call.arguments, text, failed


def _commit_message(line: str) -> str:
    m = re.search(r"-m\s+(['\"])(.+?)\1", line, re.DOTALL)
    if m is not None:
        return m.group(2).strip().splitlines()[0]
    body = re.search(r"<<-?\s*['\"]?(\w+)['\"]?\n(.*?)\n\s*\1", line, re.DOTALL)
    if body is not None:
        return next((ln.strip() for ln in body.group(2).splitlines() if ln.strip()), "")
    return ""


def done(head: Sequence[Message]) -> list[Finding]:
    """Commits, closed tasks and passing test runs, each with its evidence (newest first); a test
    command whose last run failed is not done."""
    out: list[Finding] = []
    tests: dict[str, Finding | None] = {}
    for i, name, args, text, failed in _calls(head):
        line = shell_command(name, args)
        if line is None or text is None:
            continue
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        for part in simple_commands(line):
            if part.startswith("git commit") and not failed:
                said = _commit_message(line)
                evidence = first if first.startswith("[") else ""
                out.append(Finding(at=i, text=f"Committed: {short(evidence or said, 160)}"))
            elif (closed := _CLOSE.match(part)) and not failed:
                out.append(Finding(at=i, text=f"Closed {closed.group(1) or closed.group(2)}: "
                                              f"`{short(part, 160)}` → {short(first, 80)}"))
            elif _TEST.search(part.split(" -")[0]):
                proof = _TEST_EVIDENCE.search(text[-3000:]) if not failed else None
                tests[part] = (Finding(at=i, text=f"Tests pass: `{short(part, 120)}` → "
                                                  f"{short(proof.group(0), 80)}")
                               if proof is not None and not re.search(r"\b[1-9]\d* fail", proof.group(0))
                               else None)
    out += [f for f in tests.values() if f is not None]
    return sorted(out, key=lambda f: -f.at)


def decisions(head: Sequence[Message], limit: int) -> list[Finding]:
    """Sentences of the assistant's prose that change or explain the plan (a choice, a cause
    found, an approach dropped), not narration of the next tool call; the newest ``limit``."""
    out: list[Finding] = []
    for i, message in enumerate(head):
        if message.role != "assistant":
            continue
        prose = "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
        for sentence in _SENTENCE.split(prose):
            s = sentence.strip().lstrip("-*# ").strip()
            if len(s) >= 40 and _DECISION.search(s) and not _CHATTER.match(s) \
                    and not s.endswith(":"):
                out.append(Finding(at=i, text=short(s, 240)))
    unique = list({f.text: f for f in out}.values())
    return unique[-limit:][::-1]


def _items(name: str, args: Mapping[str, Any]) -> list[PlanItem] | None:
    raw: object = args.get("todos") if "todo" in name.lower() else None
    if raw is None and ("plan" in name.lower() or "todo" in name.lower()):
        raw = args.get("plan") or args.get("todos")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    if not isinstance(raw, list):
        return None
    items: list[PlanItem] = []
    for entry in cast("list[object]", raw):
        if isinstance(entry, Mapping):
            e = cast("Mapping[str, object]", entry)
            text = e.get("content") or e.get("step") or e.get("title") or ""
            items.append(PlanItem(text=short(str(text), 200), status=str(e.get("status", "pending"))))
    return items or None


def latest_plan(head: Sequence[Message]) -> list[PlanItem]:
    """The items of the newest todo list or plan tool call (TodoWrite, update_plan), or none."""
    plan: list[PlanItem] = []
    for _, name, args, _, _ in _calls(head):
        items = _items(name, args)
        if items is not None:
            plan = items
    return plan


_TAKEN = re.compile(r"^(?:bd|br|beads)\s+(?:update\s+(\S+)\s+.*--status[ =]in_progress|show\s+(\S+))")


def current_task(head: Sequence[Message]) -> str | None:
    """The tracker task the agent took or looked at last (``bd update X --status in_progress``,
    ``bd show X``), with the first line the tracker printed for it."""
    found: str | None = None
    for _, name, args, text, failed in _calls(head):
        line = shell_command(name, args)
        if line is None or failed or text is None:
            continue
        for part in simple_commands(line):
            if (m := _TAKEN.match(part)) is not None:
                first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
                found = f"{m.group(1) or m.group(2)} — {short(first, 160)}"
    return found


def subagents(head: Sequence[Message]) -> list[Finding]:
    """Each delegated task: its agent type, description, and state (running, finished with the
    first line of its answer, or failed)."""
    out: list[Finding] = []
    for i, name, args, text, failed in _calls(head):
        if not re.search(r"^(task|agent|spawn_agent|delegate)", name, re.IGNORECASE) \
                or not any(k in args for k in ("prompt", "description", "subagent_type")):
            continue
        kind = args.get("subagent_type") or args.get("agent") or name
        what = args.get("description") or short(str(args.get("prompt", "")), 100)
        if text is None:
            state = "running (no result before the cut)"
        elif failed:
            state = f"failed: {short(text, 120)}"
        else:
            answer = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
            state = f"finished: {short(answer, 160)}"
        out.append(Finding(at=i, text=f"{kind}: {short(str(what), 120)} — {state}"))
    return out


def _error_line(text: str) -> str:
    lines = [ln.strip() for ln in re.sub(r"</?tool_use_error>", "", text).splitlines()
             if ln.strip() and not re.match(r"^(exit code \d+|error)\W*$", ln.strip(), re.IGNORECASE)]
    return next((ln for ln in lines if _ERRORISH.search(ln)), lines[0] if lines else "")


def open_problems(head: Sequence[Message], limit: int) -> list[Finding]:
    """Failures not followed by a success of the same command (or the same tool on the same file):
    the problems still open at the cut, newest first."""
    latest: dict[tuple[str, ...], Finding | None] = {}
    for i, name, args, text, failed in _calls(head):
        if text is None:
            continue
        line = shell_command(name, args)
        keys = ([("cmd", p) for p in simple_commands(line)] if line is not None
                else [(name, str(args.get("file_path") or args.get("path") or ""))])
        # a failed compound command is blamed on its last part; a success clears every part
        for key in keys[-1:] if failed else keys:
            latest[key] = (Finding(at=i, text=f"`{short(key[1] or name, 100)}` failed: "
                                              f"{short(_error_line(text), 160)}")
                           if failed else None)
    found = sorted((f for f in latest.values() if f is not None), key=lambda f: -f.at)
    return list({f.text: f for f in found}.values())[:limit]
