"""Stage 1, assembly: static context messages, dynamic contributions, durable history, tools.

The replay hands the raw materials in the initial state (context parts, this step's contribution
parts, the durable history, the tool schemas); assembly makes the working copy of the history and
records what is required and may never be removed. It runs the estimator only through the cached
part counts, so the whole-request estimate costs nothing new.
"""

from __future__ import annotations

from .records import KeptRequired, StageRecord
from .state import PipelineSettings, PreparationState

__all__ = ["apply"]


def apply(state: PreparationState, settings: PipelineSettings
          ) -> tuple[PreparationState, StageRecord]:
    """Assemble the request; every context message and required contribution is kept-required."""
    decisions: list[KeptRequired] = []
    for part in state.context:
        decisions.append(KeptRequired(
            key=part.key or "context", tokens=part.tokens,
            reason=f"static context message for the {part.key!r} position (context.yaml)"))
    for part in state.contributions:
        if part.required:
            decisions.append(KeptRequired(
                key=part.key or "", tokens=part.tokens,
                reason="required dynamic contribution: never takes part in selection (R-DYN-4)"))
    new = state.evolve(history=state.durable, history_tokens=state.durable_tokens)
    optional = sum(1 for p in state.contributions if not p.required)
    note = (f"{len(state.context)} context message(s), {len(state.contributions)} contribution(s) "
            f"({optional} optional), {len(state.durable)} history message(s), "
            f"{len(state.tools)} tool(s)")
    return new, StageRecord(name="assembly", status="entered", before_input_tokens=0,
                            after_input_tokens=new.input_tokens, decisions=tuple(decisions),
                            note=note)
