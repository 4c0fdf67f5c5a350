"""The ``## Files and Evidence`` section of an extractive checkpoint: every concrete fact of the
head the rest of the session may need (R-FID-3).

What an agent most often has to relearn after a compaction is concrete: the file it was editing,
the command that proved a fix, the identifier it was chasing. The section therefore lists the
head's facts as :mod:`iris.fidelity` finds them — files (edited, read, otherwise named), each
simple command with the outcome of its last run, identifiers, errors, URLs and numbers with units
— written as they were, so a later mention matches. When they do not fit in ``max_chars`` the most
recently used facts are kept and the count of the others is said (they stay in the archive).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..fidelity.facts import (
    PATH_KEYS,
    Fact,
    FactKind,
    command_parts,
    command_text,
    facts_with_last_use,
)
from ..session import Message

__all__ = ["DEFAULT_EVIDENCE_CHARS", "evidence_allowance", "evidence_section"]

DEFAULT_EVIDENCE_CHARS = 4000
"""The section's size when the caller gives no summary allowance."""
EVIDENCE_CHARS_PER_TOKEN = 2
"""Characters of evidence per token of the summary allowance: about half the allowance (text and
code run at three to four characters a token), the rest left to the other sections."""
_OUTCOME_CHARS = 100
_GROUPS: tuple[tuple[str, FactKind], ...] = (
    ("Commands run (outcome of the last run)", "commands"), ("Identifiers", "identifiers"),
    ("Errors", "errors"), ("URLs", "urls"), ("Numbers", "numbers"))


def _short(text: str, limit: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[:limit - 1] + "…"


def evidence_allowance(max_tokens: int) -> int:
    """The section's size in characters for a summary of at most ``max_tokens`` tokens."""
    return max(max_tokens * EVIDENCE_CHARS_PER_TOKEN, 0)


def _outcomes(head: Sequence[Message]) -> dict[str, str]:
    """Each simple command's outcome (``ok``/``failed`` and the first line) at its last run."""
    calls: dict[str, list[str]] = {}
    out: dict[str, str] = {}
    for message in head:
        for call in message.tool_calls:
            command = command_text(call.arguments)
            if command is not None:
                calls[call.id] = [" ".join(p.split()) for p in command_parts(command)]
        for result in message.tool_results:
            first = next((ln for ln in result.text.splitlines() if ln.strip()), "")
            verdict = "failed" if result.is_error else "ok"
            for part in calls.get(result.call_id, ()):
                out[part] = f"{verdict}: {_short(first, _OUTCOME_CHARS)}" if first else verdict
    return out


def _edited(head: Sequence[Message], edit_tool: re.Pattern[str]) -> set[str]:
    return {str(call.arguments[k]) for m in head for call in m.tool_calls
            if edit_tool.search(call.name) for k in PATH_KEYS if k in call.arguments}


def _render(chosen: Sequence[Fact], edited: set[str], outcomes: Mapping[str, str],
            omitted: int) -> str:
    lines: list[str] = []
    paths = [f for f in chosen if f.kind == "paths"]
    for label, group in (("Edited", [f for f in paths if f.text in edited]),
                         ("Read or named", [f for f in paths if f.text not in edited])):
        if group:
            lines.append(f"- {label}: " + ", ".join(f"`{f.text}`" for f in group))
    for label, kind in _GROUPS:
        group = [f for f in chosen if f.kind == kind]
        if not group:
            continue
        if kind == "commands":
            lines.append(f"- {label}:")
            lines += [f"  - `{f.text}`" + (f" → {outcomes[f.key]}" if f.key in outcomes else "")
                      for f in group]
        else:
            lines.append(f"- {label}: " + "; ".join(f"`{f.text}`" for f in group))
    if omitted:
        lines.append(f"- (+{omitted} less recent facts in the archive)")
    return "\n".join(lines)


def evidence_section(head: Sequence[Message], *, edit_tool: re.Pattern[str],
                     max_chars: int = DEFAULT_EVIDENCE_CHARS) -> str:
    """The section's body (see the module doc); ``edit_tool`` tells which tool names change
    files. Empty when the head states no fact."""
    last = {f: i for f, i in facts_with_last_use(enumerate(head)) if f.kind != "instructions"}
    facts = list(last)
    if not facts:
        return ""
    edited, outcomes = _edited(head, edit_tool), _outcomes(head)
    chosen: set[Fact] = set()
    used = 0
    for fact in sorted(facts, key=lambda f: -last[f]):  # most recent first
        cost = len(fact.text) + 6 + (len(outcomes.get(fact.key, "")) + 3
                                     if fact.kind == "commands" else 0)
        if used + cost > max_chars:
            continue
        chosen.add(fact)
        used += cost
    ordered = [f for f in facts if f in chosen]
    return _render(ordered, edited, outcomes, len(facts) - len(ordered))
