"""The cut point (R-CMP-5): where the archived head ends and the raw tail begins.

A cut at ``i`` archives ``history[:i]`` and keeps ``history[i:]``. A cut is *safe* when no tool group
straddles it (a call never leaves its results behind), the tail does not start with tool results,
and every assistant message with unanswered calls stays in the tail, in every profile: an
unanswered call pulls the cut to just before its assistant message, also under the archival
profile, which otherwise keeps no raw tail (reference §2.3). Only an agent profile
(``compaction.agent_rules``: the agent compacted in the middle of a call, so its result is not
in the file) archives a call the conversation went past without its result. A leading checkpoint (an
earlier compaction) alone is not worth a new cut, nor is a head holding only the task anchors
(the original and the current request: :func:`anchors_only`). The continuation tail holds up to the last 6
complete turns within the tail budget, which is the recent target ``ceil(budget ×
keep_recent_ratio)`` (a soft target: Chord's "about 5% of the window" is ``keep_recent_ratio:
0.05``); an oversized last turn keeps its largest safe suffix that
fits; the archival profile keeps no raw tail. ``auto`` picks continuation when work is mid-flight
(unanswered calls, the last message is a tool call or result) or the latest turn shows errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..frozen import FrozenModel
from ..session import Message, ToolGroup, index_session
from ..tokens import TokenEstimator
from .carried import is_real_user_message

__all__ = ["MAX_TAIL_TURNS", "CutPlan", "anchors_only", "choose_cut", "resolve_profile",
           "safe_cuts", "tail_budget"]

MAX_TAIL_TURNS = 6


class CutPlan(FrozenModel):
    """Where to cut, and what each side holds."""

    cut_index: int | None
    """None when no useful safe cut exists."""
    profile: Literal["continuation", "archival"]
    tail_budget: int
    tail_turns: int = 0
    reason: str = ""


def tail_budget(input_budget: int, recent_target: int) -> int:
    """Continuation tail budget: the recent target ``ceil(input_budget × keep_recent_ratio)``
    (computed by the thresholds), whatever the ratio; ``input_budget`` only bounds it."""
    return max(0, min(recent_target, input_budget))


def safe_cuts(history: Sequence[Message], *, summarise_orphans: bool = False) -> tuple[int, ...]:
    """Every safe cut index in ``1..len(history)`` (see the module docstring).

    ``summarise_orphans`` (an agent profile's archival cut, which keeps no raw tail): a call the
    conversation went past without its result (a later assistant message exists: the agent was
    interrupted, or compacted in the middle of the call) is archived like the rest instead of
    pinning the tail; only the last assistant message's unanswered calls stay in the tail."""
    n = len(history)
    index = index_session(tuple(history))
    last_assistant = index.batches[-1].assistant_message if index.batches else -1

    def pinned(group: ToolGroup) -> bool:
        return not group.closed and not (summarise_orphans
                                         and group.assistant_message < last_assistant)

    blocked = [False] * (n + 1)
    for group in index.groups:
        last = n if pinned(group) else group.last_message
        for i in range(group.assistant_message + 1, last + 1):
            blocked[i] = True
    limit = n
    for group in index.groups:
        if pinned(group):
            limit = min(limit, group.assistant_message)
    for loc in index.orphan_results:
        blocked[loc.message] = True  # a stray result never opens the tail
    floor = 1
    if history and history[0].is_compaction_summary:
        floor = 2  # archiving only the previous checkpoint gains nothing
    return tuple(i for i in range(floor, limit + 1) if not blocked[i] and
                 (i == n or not history[i].tool_results))


def anchors_only(history: Sequence[Message], cut: int, users: Sequence[int] | None = None) -> bool:
    """True when the head before ``cut`` holds nothing but task anchors (after a leading
    checkpoint): the first real user message (the original request) and the last one (the
    current request). Archiving only those gains nothing and loses the task's own words, so such a
    cut is no new cut point (R-CMP-5: the cut must respect task anchors; R-CMP-8: within the hard
    input limit the run continues without compacting). ``users``: the indices of the real user
    messages when the caller has them (checking every cut point of a long history must not look
    at every message again for each)."""
    start = 1 if history and history[0].is_compaction_summary else 0
    if users is None:
        users = [i for i, m in enumerate(history) if is_real_user_message(m)]
    anchors = {users[0], users[-1]} if users else set[int]()
    return all(i in anchors for i in range(start, cut))


def resolve_profile(profile: str, history: Sequence[Message]) -> Literal["continuation",
                                                                          "archival"]:
    if profile == "continuation":
        return "continuation"
    if profile == "archival":
        return "archival"
    if not history:
        return "archival"
    last = history[-1]
    if last.tool_results or last.tool_calls or index_session(tuple(history)).unanswered_calls:
        return "continuation"
    turn_start = max((i for i, m in enumerate(history) if is_real_user_message(m)), default=0)
    if any(r.is_error for m in history[turn_start:] for r in m.tool_results):
        return "continuation"
    return "archival"


def choose_cut(history: Sequence[Message], *, profile: str, input_budget: int, recent_target: int,
               estimator: TokenEstimator, archive_orphans: bool = False) -> CutPlan:
    """R-CMP-5 cut point for ``history`` (the messages before the current request).

    ``archive_orphans`` (an agent profile, ``compaction.agent_rules``): under the archival
    profile a call the conversation went past without its result is archived with the rest
    (:func:`safe_cuts` ``summarise_orphans``); otherwise every unanswered call keeps its assistant
    message, and what follows, in the tail."""
    resolved = resolve_profile(profile, history)
    budget = tail_budget(input_budget, recent_target)
    safe = safe_cuts(history, summarise_orphans=archive_orphans and resolved == "archival")
    users = [i for i, m in enumerate(history) if is_real_user_message(m)]
    cuts = tuple(c for c in safe if not anchors_only(history, c, users))
    if not cuts:
        return CutPlan(cut_index=None, profile=resolved, tail_budget=budget,
                       reason="no new cut point: the head would hold only the task anchor (the "
                              "original or current request), which the cut keeps" if safe else
                              "no safe cut: every boundary splits a tool group or the history "
                              "holds only the previous checkpoint")
    if resolved == "archival":
        return CutPlan(cut_index=cuts[-1], profile=resolved, tail_budget=budget,
                       reason="archival: no raw tail" if cuts[-1] == len(history)
                       else "archival: unanswered calls stay in the tail")
    sizes = [estimator.message_tokens(m) for m in history]
    suffix = [0] * (len(history) + 1)
    for i in range(len(history) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + sizes[i]
    allowed = set(cuts)
    starts = [i for i in users if i in allowed]
    for turns in range(min(MAX_TAIL_TURNS, len(starts)), 0, -1):
        start = starts[-turns]
        if suffix[start] <= budget:
            return CutPlan(cut_index=start, profile=resolved, tail_budget=budget,
                           tail_turns=turns, reason=f"tail of {turns} complete turn(s) within "
                           f"{budget:,} tokens")
    fitting = [c for c in cuts if suffix[c] <= budget and c < len(history)]
    if fitting:
        return CutPlan(cut_index=fitting[0], profile=resolved, tail_budget=budget,
                       reason="oversized turn: largest safe suffix within the tail budget")
    return CutPlan(cut_index=cuts[-1], profile=resolved, tail_budget=budget,
                   reason="oversized turn: no safe suffix fits the tail budget; "
                   + ("no raw tail kept" if cuts[-1] == len(history) else "smallest safe tail kept"))
