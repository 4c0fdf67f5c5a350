"""Extractive checkpoint sections: a summary a person could continue from, written offline from
the head's messages (R-FID-3).

- Current User Request, Active Objective, Background Goals: the user's requests in order, the
  latest first (messages queued while the agent worked included), and the item in progress;
- Progress: what is done, with its evidence: commits, closed tasks, test runs whose last run
  passed (:mod:`.progress`);
- Key Decisions: the assistant's sentences that chose, dropped or explained something, not its
  narration of the next tool call;
- Files and Evidence: files and commands, the most recently used first, within the summary's
  allowance and at most :data:`EVIDENCE_SHARE` of the sections (:mod:`.evidence`);
- Todo State and Next Step: the latest todo list or plan tool call (TodoWrite, update_plan), else
  the last assistant intent;
- SubAgent State: each delegated task and its state; Open Problems: failures no later run fixed.

Nothing is invented; empty findings say so explicitly. Lists are capped so the summary stays small
and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..session import Message, TextBlock
from .checkpoint import previous_sections
from .evidence import DEFAULT_EVIDENCE_CHARS, evidence_section
from .progress import (
    Finding,
    PlanItem,
    current_task,
    decisions,
    done,
    latest_plan,
    open_problems,
    requests,
    subagents,
)

__all__ = ["EDIT_TOOL", "PATH_KEYS", "SHELL_TOOL", "extractive_sections"]

MAX_ITEMS = 8
MAX_DONE = 16
MAX_DECISIONS = 8
MAX_NOTES = 8
NOTE_CHARS = 700
REQUEST_CHARS = 2000
EARLIER_REQUEST_CHARS = 600
SUMMARY_CHARS_PER_EVIDENCE_CHAR = 1.5
"""The whole summary's size in characters per character of the evidence allowance (which is two
characters per token of the summary allowance: three characters a token in all)."""
_SCALES = (1.0, 0.6, 0.35, 0.2, 0.1)
_LABEL = "(Extractive summary: built offline from the archived messages; no model wrote it.)"
_GROUP_LINES = 40
"""Characters the section's group lines take besides its entries."""
MAX_CHARS = 220
EVIDENCE_SHARE = 0.38
"""The largest share of the sections the file and command list may take (R-FID-3: at most 40 %
of the checkpoint; the rendered checkpoint adds its runtime part, so the share there is lower)."""
PATH_KEYS = ("path", "file_path", "filePath", "filename", "notebook_path")
"""Tool-argument keys that name the file a call works on."""
EDIT_TOOL = re.compile(r"edit|write|patch|replace|create|delete|move", re.IGNORECASE)
"""Tool names that change files."""
SHELL_TOOL = re.compile(r"bash|shell|exec|command|terminal|run", re.IGNORECASE)
"""Tool names that run shell commands."""


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


def _prose(message: Message) -> str:
    """Only what the assistant wrote as text (not its tool calls or reasoning)."""
    return "\n".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()


def _assistant_texts(head: Sequence[Message]) -> list[str]:
    return [t for m in head if m.role == "assistant" and (t := _prose(m))]


def _next_step(plan: Sequence[PlanItem], assistant: list[str], request: str) -> str:
    """The latest plan's item in progress, else its first pending one, else the last thing the
    assistant said it would do, else the request."""
    doing = next((p for p in plan if p.status == "in_progress"), None)
    if doing is not None:
        return f"Continue (in progress in the latest plan): {doing.text}"
    pending = next((p for p in plan if p.status not in ("completed", "done", "cancelled")), None)
    if pending is not None:
        return f"Next in the latest plan: {pending.text}"
    if assistant:
        sentences = re.split(r"(?<=[.!?。])\s+", assistant[-1])
        intent = next((s for s in reversed(sentences) if len(s.strip()) >= 12), "")
        if intent:
            return f"Resume from the last assistant intent: {_short(intent)}"
    return f"Work on the current request: {_short(request or 'see the retained messages')}"


def _background(asked: Sequence[Finding], carried: dict[str, str], objective: str,
                scale: float = 1.0) -> str:
    """The earlier requests of the segment, the latest first, one a line; with none, the carried
    goals (or the carried objective when the objective changed), so the original task survives
    repeated compactions."""
    limit = max(int(EARLIER_REQUEST_CHARS * scale), 120)
    lines = [_short(f.text, limit) for f in reversed(asked[:-1])][:MAX_ITEMS]
    if len(asked) - 1 > MAX_ITEMS:
        lines.append(f"(+{len(asked) - 1 - MAX_ITEMS} earlier requests in the archive)")
    goals = carried.get("Background Goals", "")
    old = carried.get("Active Objective", "")
    if (not goals or goals.startswith("None beyond")) and old and old != objective:
        goals = old
    if goals and not goals.startswith("None beyond"):
        lines.append(goals)
    return "\n".join(lines) or "None beyond the active objective."


def _objective(objective: str, request: str, doing: str | None, task: str | None) -> str:
    """The task being worked on (the plan's item in progress, the tracker task the agent last
    took), after the objective when it is not the request again."""
    lines: list[str] = []
    if objective and _short(objective, 400) != _short(request, 400):
        lines.append(_short(objective, 400))
    if task:
        lines.append(f"Task taken last: {task}")
    if doing:
        lines.append(f"Working on: {doing}")
    return "\n".join(lines) or (f"The current request: {_short(request, 160)}" if request
                                else "No objective stated in the archived segment.")


def _todo_state(plan: Sequence[PlanItem]) -> str:
    if not plan:
        return ("### Active/relevant to latest request\n- No todo list or plan recorded\n"
                "### Completed/background\n- See Progress\n### Stale/superseded\n- None")
    active = [f"- [{'>' if p.status == 'in_progress' else ' '}] {p.text}"
              + (" (in progress)" if p.status == "in_progress" else "")
              for p in plan if p.status not in ("completed", "done", "cancelled")]
    finished = [f"- [x] {p.text}" for p in plan if p.status in ("completed", "done")]
    dropped = [f"- {p.text}" for p in plan if p.status == "cancelled"]
    return ("### Active/relevant to latest request\n" + ("\n".join(active) or "- None open")
            + "\n### Completed/background\n" + ("\n".join(finished) or "- None")
            + "\n### Stale/superseded\n" + ("\n".join(dropped) or "- None"))


def extractive_sections(head: Sequence[Message], *, current_request: str | None,
                        constraints: Sequence[str] = (),
                        previous_checkpoint: str | None = None,
                        evidence_chars: int = DEFAULT_EVIDENCE_CHARS) -> dict[str, str]:
    """The eleven required sections, filled from ``head`` (see the module doc); with no user
    message in the head the anchors (request, objective, goals) are carried verbatim from the
    previous checkpoint. ``## Files and Evidence`` takes at most ``evidence_chars`` characters and
    at most :data:`EVIDENCE_SHARE` of the sections."""
    asked, assistant = requests(head), _assistant_texts(head)
    carried = previous_sections(previous_checkpoint)
    latest = asked[-1].text if asked else ""
    request = (current_request or latest).strip() or carried.get("Current User Request", "")
    plan = latest_plan(head)
    objective = latest or carried.get("Active Objective", request)
    doing = next((p.text for p in plan if p.status == "in_progress"), None)
    task = current_task(head)
    finished, chose = done(head), decisions(head, MAX_DECISIONS)
    problems, agents = open_problems(head, MAX_ITEMS), subagents(head)
    budget = int(evidence_chars * SUMMARY_CHARS_PER_EVIDENCE_CHAR)
    sections: dict[str, str] = {}
    for scale in _SCALES:  # the prose shrinks until the summary fits its allowance
        notes = max(1, round(MAX_NOTES * scale))
        progress = [_LABEL]
        if previous_checkpoint:
            progress.append("- Continues the previous checkpoint (see ## Previous Checkpoint).")
        progress += [f"- {_short(f.text, max(int(240 * scale), 60))}"
                     for f in finished[:max(1, round(MAX_DONE * scale))]]
        if len(finished) > max(1, round(MAX_DONE * scale)):
            progress.append(f"- (+{len(finished) - max(1, round(MAX_DONE * scale))} earlier "
                            "results in the archive)")
        if not finished:
            progress.append("- No commit, closed task or passing test run in the archived segment.")
        calls = sum(len(m.tool_calls) for m in head)
        progress.append(f"- {calls} tool call(s) in {len(head)} archived messages. Where the work "
                        "stood, in the assistant's last words before the cut:")
        progress += [f"  - {_short(t, max(int(NOTE_CHARS * scale), 80))}"
                     for t in assistant[-notes:]]
        sections = {
            "Current User Request": (_short(request, max(int(REQUEST_CHARS * scale), 200))
                                     or "No user request in the archived segment."),
            "Active Objective": _objective(objective, request, doing, task),
            "Background Goals": _background(asked, carried, objective, scale),
            "User Constraints": _bullets([_short(c) for c in constraints], "None stated."),
            "Progress": "\n".join(progress),
            "Key Decisions": ("\n".join(f"- {_short(f.text, max(int(240 * scale), 80))}"
                                        for f in chose[:max(1, round(MAX_DECISIONS * scale))])
                              or "No decision that changed the plan in the archived segment."),
            "Files and Evidence": "",
            "Todo State": _todo_state(plan),
            "SubAgent State": _bullets([f.text for f in agents], "No subagents recorded."),
            "Open Problems": ("\n".join(f"- {f.text}" for f in problems)
                              or "No failure left unresolved at the cut."),
            "Next Step": _next_step(plan, assistant, request),
        }
        if sum(len(t) + len(b) + 5 for t, b in sections.items()) <= budget * (1 - EVIDENCE_SHARE):
            break
    rest = sum(len(title) + len(body) + 5 for title, body in sections.items())
    room = min(evidence_chars, int(rest * EVIDENCE_SHARE / (1 - EVIDENCE_SHARE)) - _GROUP_LINES)
    files = evidence_section(head, edit_tool=EDIT_TOOL, max_chars=room)
    while files and len(files) > EVIDENCE_SHARE * (rest + len(files)) and room > 0:
        room -= max(len(files) - int(EVIDENCE_SHARE / (1 - EVIDENCE_SHARE) * rest), 40)
        files = evidence_section(head, edit_tool=EDIT_TOOL, max_chars=room)
    sections["Files and Evidence"] = files or "- No files or commands in the archived segment."
    return sections
