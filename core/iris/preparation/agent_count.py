"""What the agent profiles add to the count the compaction trigger compares (docs/profiles.md).

Claude Code and Codex both decide on the last response's count plus a rough estimate of what was
recorded since; Codex also adds its estimate of the earlier turns' encrypted reasoning
(:mod:`iris.compaction.codex_count`).
"""

from __future__ import annotations

from ..compaction.codex_count import earlier_reasoning_tokens
from .state import PipelineSettings, PreparationState
from .walk import is_user_input

__all__ = ["agent_additions", "local_tokens_since_response"]


def agent_additions(state: PreparationState, settings: PipelineSettings) -> tuple[int, int]:
    """What the agent profiles add to the value the trigger compares, as the agents count:
    ``compaction.count_earlier_reasoning``: Codex's estimate of the earlier turns' encrypted
    reasoning in the durable history (:mod:`iris.compaction.codex_count`);
    ``compaction.count_new_messages``: the messages after the last response (tool results, a new
    user message), estimated as the agents estimate them on top of the last response's count:
    the bytes of each content block serialised as JSON / 4, rounded up (Claude Code's rough
    estimate of the messages since its last usage, Codex's estimate of the items since the last
    model output). (0, 0) when both are off.

    Codex checks before a turn's input is recorded (its pre-turn compaction runs before the
    context updates and the new user message), so with ``count_earlier_reasoning`` a step that
    starts a new user turn is counted on the history before that turn's messages."""
    comp = settings.config.compaction
    if not (comp.count_earlier_reasoning or comp.count_new_messages):
        return 0, 0
    messages = [p.message for p in state.durable]
    last = next((i for i in range(len(messages) - 1, -1, -1)
                 if messages[i].role == "assistant"), -1)
    new = messages[last + 1:]
    if comp.count_earlier_reasoning and any(is_user_input(m) for m in new):
        new = new[:next(i for i, m in enumerate(new) if m.role == "user")]
    counted = [*messages[:last + 1], *new]
    reasoning = earlier_reasoning_tokens(counted) if comp.count_earlier_reasoning else 0
    if not comp.count_new_messages:
        return reasoning, 0
    new_bytes = sum(len(block.model_dump_json().encode()) for m in new for block in m.content)
    return reasoning, -(-new_bytes // 4)


def local_tokens_since_response(state: PreparationState, settings: PipelineSettings) -> int | None:
    """Codex's count (``count_earlier_reasoning`` with ``count_new_messages``) where the provider
    did not count the replayed request: the local tokens of the messages after the last response,
    which the trigger replaces with Codex's byte estimate of them (what :func:`agent_additions`
    adds as ``after``): codex-rs adds its estimate of the items after the last model output to
    the count of the request before them. None for every other profile (the calibrated estimate
    then counts those messages itself)."""
    comp = settings.config.compaction
    if not (comp.count_earlier_reasoning and comp.count_new_messages):
        return None
    parts = state.durable
    last = next((i for i in range(len(parts) - 1, -1, -1)
                 if parts[i].message.role == "assistant"), -1)
    return sum(p.tokens for p in parts[last + 1:])
