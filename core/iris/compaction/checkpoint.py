"""The checkpoint (R-CMP-7/9): the structured message that replaces the archived head.

Layout follows the reference (chord-behaviour §2.4): ``[Context Summary]`` with the eleven required
``##`` sections in order, the protected ``## Previous Checkpoint`` (R-CMP-9), then
``[Context compressed]`` with the mode line, the archive index, ``## Session Constraints`` and
``## Retained Recent Messages``. :func:`validate_summary` is the gate a summary must pass; a failure
counts as a failed attempt (R-CMP-8).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import AliasChoices, Field

from ..frozen import FrozenModel
from ..session import Message, TextBlock

__all__ = [
    "REQUIRED_SECTIONS",
    "ArchiveRef",
    "Checkpoint",
    "CheckpointSection",
    "RetainedMessage",
    "SessionConstraint",
    "SummaryInvalid",
    "checkpoint_body",
    "parse_sections",
    "previous_sections",
    "validate_summary",
]

REQUIRED_SECTIONS: tuple[str, ...] = (
    "Current User Request", "Active Objective", "Background Goals", "User Constraints", "Progress",
    "Key Decisions", "Files and Evidence", "Todo State", "SubAgent State", "Open Problems",
    "Next Step")
MIN_SUMMARY_CHARS = 160
SUMMARY_HEADER = "[Context Summary]"
COMPRESSED_HEADER = "[Context compressed]"
TYPED_STATE = "Typed Checkpoint State"
# A heading line; the title is stripped in code (a lazy title before \s*$ backtracks quadratically
# on a long run of spaces).
_HEADING = re.compile(r"^## ([^\n]+)$", re.MULTILINE)
# Tags only: a "Reasoning:" line inside Key Decisions is legitimate prose, a <think> block is not.
_LEAK = re.compile(r"</?(think|thinking|reasoning)>", re.IGNORECASE)
_VAGUE = {"continue", "continue working", "keep going", "proceed", "n/a", "na", "none", "tbd",
          "todo", "next", "carry on", "continue the task", "keep working", "-", "..."}


_Frozen = FrozenModel


class SummaryInvalid(ValueError):
    """A summary text failed validation; ``reason`` is the rejection shown as a decision."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class CheckpointSection(_Frozen):
    title: str
    body: str


def parse_sections(text: str) -> tuple[str, tuple[CheckpointSection, ...]]:
    """Split a summary into (text before the first heading, sections)."""
    matches = list(_HEADING.finditer(text))
    if not matches:
        return text, ()
    sections: list[CheckpointSection] = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        sections.append(CheckpointSection(title=m.group(1).rstrip(), body=text[m.end():end].strip()))
    return text[:matches[0].start()], tuple(sections)


def validate_summary(text: str) -> tuple[CheckpointSection, ...]:
    """Check a summary (R-CMP-7); return its sections or raise :class:`SummaryInvalid`."""
    text = text.strip()
    if _LEAK.search(text):
        raise SummaryInvalid("summary invalid: reasoning leakage (<think> or a reasoning block)")
    if len(text) < MIN_SUMMARY_CHARS:
        raise SummaryInvalid(f"summary invalid: {len(text)} characters, fewer than "
                             f"{MIN_SUMMARY_CHARS}")
    before, sections = parse_sections(text)
    if before.strip():
        raise SummaryInvalid("summary invalid: text before the first section")
    titles = [s.title for s in sections]
    for name in REQUIRED_SECTIONS:
        if name not in titles:
            raise SummaryInvalid(f"summary invalid: missing section '## {name}'")
    order = [t for t in titles if t in REQUIRED_SECTIONS]
    if order != list(REQUIRED_SECTIONS):
        wrong = next(a for a, b in zip(order, REQUIRED_SECTIONS) if a != b)
        raise SummaryInvalid(f"summary invalid: section '## {wrong}' out of order")
    for s in sections:
        if s.title in REQUIRED_SECTIONS and not s.body.strip():
            raise SummaryInvalid(f"summary invalid: empty section '## {s.title}'")
    step = next(s.body for s in sections if s.title == "Next Step")
    if step.strip().strip(".").lower() in _VAGUE or len(step.strip()) < 12:
        raise SummaryInvalid(f"summary invalid: vague Next Step {step.strip()!r}")
    return sections


class RetainedMessage(_Frozen):
    """A recent real user message carried verbatim (or its de-duplication note)."""

    text: str
    truncated: bool = False
    duplicate_of_current: bool = False


class SessionConstraint(_Frozen):
    """A standing instruction carried across compactions."""

    text: str
    superseded: bool = False


class ArchiveRef(_Frozen):
    """One history archive a checkpoint points to."""

    path: str
    number: int
    messages: int


class Checkpoint(_Frozen):
    """A validated summary plus the runtime-written parts around it."""

    mode: Literal["continuation", "archival", "model_driven"]
    # records saved before the British spelling carry the key ``summarizer``
    summariser: str = Field(validation_alias=AliasChoices("summariser", "summarizer"))
    """``extractive``, ``recorded``, ``remote`` or ``model_driven``: shown wherever it is shown."""
    sections: tuple[CheckpointSection, ...]
    previous_checkpoint: str | None = None
    constraints: tuple[SessionConstraint, ...] = ()
    constraints_omitted: int = 0
    retained: tuple[RetainedMessage, ...] = ()
    archives: tuple[ArchiveRef, ...] = ()
    extra_sections: tuple[CheckpointSection, ...] = ()
    """Runtime sections after the summary (worklog, repository state, typed state)."""
    form: Literal["structured", "summary", "summary_with_user_messages"] = Field(
        default="structured", exclude_if=lambda v: v == "structured")
    """``compaction.checkpoint_form``: ``structured`` renders everything below; the ``summary``
    forms render the summary alone (after the retained user messages with
    ``summary_with_user_messages``), as the agent profiles do (docs/profiles.md)."""
    summary_text: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The summary as written when it was used verbatim (the recorded agent's own)."""

    def _summary_only(self) -> str:
        text = self.summary_text or "\n\n".join(f"## {s.title}\n{s.body}" for s in self.sections)
        if self.form == "summary_with_user_messages" and self.retained:
            users = "\n\n".join(r.text + ("\n[truncated]" if r.truncated else "")
                                 for r in self.retained)
            text = f"{users}\n\n{text}"
        return text.strip() + "\n"

    def render(self) -> str:
        if self.form != "structured":
            return self._summary_only()
        parts = [SUMMARY_HEADER]
        parts += [f"## {s.title}\n{s.body}" for s in self.sections]
        if self.previous_checkpoint:
            # Demoted headings: the carried body never reads as this checkpoint's own sections.
            demoted = re.sub(r"^## ", "### ", self.previous_checkpoint, flags=re.MULTILINE)
            parts.append(f"## Previous Checkpoint\n{demoted}")
        parts += [f"## {s.title}\n{s.body}" for s in self.extra_sections]
        parts.append(f"{COMPRESSED_HEADER}\nMode: {self.mode} checkpoint (summary: "
                     f"{self.summariser})")
        if self.archives:
            lines = ["Archived history files (read the matching file for exact wording):"]
            lines += [f"- {a.path} ({a.messages} messages)" for a in self.archives]
            lines.append("Each archive begins with a short message-segment index.")
            parts.append("\n".join(lines))
        if self.constraints:
            lines = ["## Session Constraints"]
            lines += [f"- {c.text}" + (" [superseded]" if c.superseded else "")
                      for c in self.constraints]
            if self.constraints_omitted:
                lines.append(f"- ({self.constraints_omitted} middle constraints omitted; see the "
                             "archives)")
            parts.append("\n".join(lines))
        if self.retained:
            lines = ["## Retained Recent Messages"]
            for r in self.retained:
                quoted = "\n".join(f"> {line}" for line in r.text.splitlines() or [""])
                lines.append("User:\n" + quoted + ("\n> [truncated]" if r.truncated else ""))
            parts.append("\n".join(lines))
        return "\n\n".join(parts) + "\n"

    def to_message(self) -> Message:
        return Message(role="user", content=(TextBlock(text=self.render()),),
                       is_compaction_summary=True, synthetic=True)


def checkpoint_body(text: str) -> str:
    """The summary body of a rendered checkpoint: its required sections and its typed state block
    (kept whole), without its own ``## Previous Checkpoint`` (so carrying never nests) and without
    the runtime part."""
    body = text.split(COMPRESSED_HEADER, 1)[0].replace(SUMMARY_HEADER, "", 1).strip()
    _, sections = parse_sections(body)
    keep = (*REQUIRED_SECTIONS, TYPED_STATE)
    kept = [f"## {s.title}\n{s.body}" for s in sections if s.title in keep]
    return "\n\n".join(kept) if kept else body


def previous_sections(body: str | None) -> dict[str, str]:
    """Required sections of a carried checkpoint body, by title."""
    if not body:
        return {}
    return {s.title: s.body for s in parse_sections(body)[1] if s.title in REQUIRED_SECTIONS}
