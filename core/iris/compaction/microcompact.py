"""Claude Code's microcompaction: old tool results cleared in place, without a summary.

Claude Code (at least 2.0.76 – 2.1.20) runs a "microcompact" pass before each request and before
its automatic compaction: the content of old results of its clearable tools (Read, Bash, Grep,
Glob, WebSearch, WebFetch, Edit, Write) is replaced by ``[Old tool result content cleared]``.
What public analyses of its ``microCompact`` code report, and what this module states:

* only results of those tools count, each estimated as characters / 4 (rounded up); a result
  already cleared is not counted again;
* the results of the 3 most recent such calls are kept;
* the oldest results are cleared, one after another, while the not-yet-cleared estimate is above
  40,000 tokens;
* automatic clearing happens only when the agent's count of the request is above its warning line
  (the automatic-compaction line minus 20,000) and the clearing saves at least 20,000 tokens.

A transcript of 2.1.20 records each clearing as a ``microcompact_boundary`` line
(``compactedToolIds``, ``preTokens``: the estimate of the clearable results before, ``tokensSaved``);
earlier versions cleared without recording it. :func:`plan` is the rule, :func:`clear` the
replacement; the preparation stage applies a recorded clearing as recorded and the rule only where
the transcript's version is in :data:`RULE_VERSIONS` and it records none (docs/profiles.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..frozen import UNCHANGED
from ..session import ContentBlock, Message, ToolCallBlock, ToolResultBlock
from .agent_rules import Version, parse_version

__all__ = ["CLEARABLE_TOOLS", "CLEARED_TEXT", "KEEP_RECENT", "KEEP_TOKENS", "MIN_SAVINGS", "RULE_VERSIONS",
           "WARNING_BELOW_LINE", "MicroPlan", "clear", "estimate", "plan", "rule_applies"]

CLEARED_TEXT = "[Old tool result content cleared]"
"""What a cleared result's content becomes."""
CLEARABLE_TOOLS = frozenset({"Read", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"})
KEEP_RECENT = 3
"""The results of this many most recent clearable calls are never cleared."""
KEEP_TOKENS = 40_000
"""Clearing stops once the clearable results left are estimated at this many tokens or fewer."""
MIN_SAVINGS = 20_000
"""An automatic clearing that would save fewer tokens (estimated) does not happen."""
WARNING_BELOW_LINE = 20_000
"""The warning line is the automatic-compaction line minus this."""
RULE_VERSIONS: tuple[Version, Version] = ((2, 0, 76), (2, 1, 20))
"""The Claude Code versions (inclusive) the rule is documented and measured for."""


def rule_applies(version: str | None) -> bool:
    """True when the rule is applied to a transcript of ``version`` that records no clearing."""
    parsed = parse_version(version)
    return parsed is not None and RULE_VERSIONS[0] <= parsed <= RULE_VERSIONS[1]


def estimate(block: ToolResultBlock) -> int:
    """Claude Code's estimate of a result: its characters / 4, rounded up."""
    return -(-len(block.text) // 4)


@dataclass(frozen=True)
class MicroPlan:
    """What the rule clears at one request."""

    call_ids: tuple[str, ...]
    """The results to clear, oldest first."""
    saved: int
    """Their estimate (characters / 4)."""
    total: int
    """The estimate of every clearable result not cleared before."""


def _clearable(messages: Iterable[Message]) -> tuple[list[str], dict[str, int]]:
    """The clearable calls not cleared yet, in order (ids), and the estimate of each one's result
    (a call whose result is not in the history yet has none)."""
    calls: list[str] = []
    sizes: dict[str, int] = {}
    cleared: set[str] = set()
    names: set[str] = set()
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolCallBlock):
                if block.name in CLEARABLE_TOOLS:
                    calls.append(block.id)
                    names.add(block.id)
            elif isinstance(block, ToolResultBlock) and block.call_id in names:
                if block.text == CLEARED_TEXT:
                    cleared.add(block.call_id)
                else:
                    sizes[block.call_id] = estimate(block)
    return [c for c in calls if c not in cleared], sizes


def plan(messages: Sequence[Message]) -> MicroPlan:
    """The results the rule would clear now (before the warning-line and savings conditions)."""
    calls, sizes = _clearable(messages)
    total = sum(sizes.get(c, 0) for c in calls)
    keep = set(calls[-KEEP_RECENT:])
    chosen: list[str] = []
    saved = 0
    for call_id in calls:
        if call_id in keep or call_id not in sizes or total - saved <= KEEP_TOKENS:
            continue
        chosen.append(call_id)
        saved += sizes[call_id]
    return MicroPlan(tuple(chosen), saved, total)


def clear(message: Message, call_ids: frozenset[str] | set[str]) -> tuple[Message, tuple[str, ...]]:
    """``message`` with the results of ``call_ids`` cleared, and the ids it cleared (the same
    message object when it holds none of them)."""
    done: list[str] = []
    blocks: list[ContentBlock] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock) and block.call_id in call_ids and block.text != CLEARED_TEXT:
            block = block.evolve(**UNCHANGED, text=CLEARED_TEXT, artifact_path=None, image_refs=())
            done.append(block.call_id)
        blocks.append(block)
    if not done:
        return message, ()
    return message.evolve(**UNCHANGED, content=tuple(blocks)), tuple(done)
