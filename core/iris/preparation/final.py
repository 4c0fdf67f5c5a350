"""Stage 6, final selection: compose the request in send order and record what it holds.

Order: the ``system`` and ``memory`` context messages, the history up to the current input, then
the ``before_current_input`` context message and the selected dynamic contributions, then the
current input (the latest real user message) and everything after it. Each message keeps a mark
of what happened to it, so the step-through view renders the request with its trimmed, folded and
summarised parts marked; dropped contributions and tools are listed by key/name.
"""

from __future__ import annotations

from ..frozen import constructed
from .records import FinalSelection, PreparedRequest, StageRecord
from .state import Part, PipelineSettings, PreparationState

__all__ = ["apply", "compose", "current_input_index"]


def current_input_index(history: tuple[Part, ...]) -> int:
    """Index of the latest real user message (not a tool result, not injected)."""
    for i in range(len(history) - 1, -1, -1):
        m = history[i].message
        if (m.role == "user" and not m.synthetic and not m.is_compaction_summary
                and any(b.type != "tool_result" for b in m.content)):
            return i
    return len(history)


def compose(state: PreparationState) -> tuple[Part, ...]:
    """The parts of the request in the order they are sent."""
    front = tuple(p for p in state.context if p.key != "before_current_input")
    before_input = tuple(p for p in state.context if p.key == "before_current_input")
    if not (front or before_input or state.contributions):
        return state.history  # the same parts in the same order, and no copy of them
    u = current_input_index(state.history)
    return front + state.history[:u] + before_input + state.contributions + state.history[u:]


def apply(state: PreparationState, settings: PipelineSettings
          ) -> tuple[PreparationState, StageRecord]:
    before = state.input_tokens
    parts = compose(state)
    views = settings.memory.request_views(parts)
    # built from values the stages made (messages, marks, schemas): no validation pass over them
    request = constructed(PreparedRequest, {
        "messages": tuple(views.shown), "tools": tuple(t.schema for t in state.tools),
        "marks": tuple(views.marks), "dropped": state.dropped})
    # hashed when first read, from per-message pieces cached across steps (identical to
    # request_ref's full form)
    request.with_pieces(*settings.memory.request_pieces(views))
    # what a store that keeps consecutive requests reads to skip the messages they share
    request.with_previous(*views.sent, views.shared)
    views.sent = (request.messages, request.marks)
    keys = tuple(p.key or "" for p in state.contributions)
    tools = tuple(t.name for t in state.tools)
    whole = state.whole(before)
    over = whole > settings.input_budget
    size = f"{before:,} tokens" + (f" (whole request {whole:,} with calibration and unrecorded "
                                   f"overhead)" if whole != before else "")
    decision = FinalSelection(
        message_count=len(parts), tool_names=tools, contribution_keys=keys, input_tokens=before,
        reason=(f"{len(parts)} message(s), {len(tools)} tool(s), {len(keys)} contribution(s); "
                f"{size}" + (f", over the input budget {settings.input_budget:,}"
                                        if over else f" within the input budget "
                                                     f"{settings.input_budget:,}")))
    new = state.evolve(request=request)
    return new, StageRecord(name="final_selection", status="entered", before_input_tokens=before,
                            after_input_tokens=before, decisions=(decision,))
