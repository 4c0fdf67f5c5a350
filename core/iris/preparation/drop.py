"""Stage 3, drop optional contributions and tools under the budget (R-DYN-4, R-POL-1).

Optional dynamic contributions compete for what is left under the pressure line once everything
else is counted; the selection function of ``iris.context`` removes the lowest priority first and,
at equal priority, the later entry first. Required contributions never take part. With
``deferred_tools`` on, tool schemas the conversation has not used yet are left out of the request
(disclosed on demand). The selection is fixed for the step: nothing is refilled after a summary.
"""

from __future__ import annotations

from dataclasses import replace

from ..context import ContextContribution, ContextSnapshot, select_contributions
from .engine_tools import ENGINE_TOOL_NAMES
from .records import DroppedOptional, DroppedTool, StageRecord
from .state import PipelineSettings, PreparationState, ToolSpec

__all__ = ["apply"]


def _removed(contributions: tuple[ContextContribution, ...], allowance: int, settings: PipelineSettings) -> dict[str, str]:
    """``{removed key: reason}`` from the R-DYN-4 selection function."""
    result = select_contributions(ContextSnapshot(contributions=contributions), allowance,
                                  estimator=settings.cache.estimator)
    return {item.key: item.reason for item in result.removed}


def _drop_tools(state: PreparationState, settings: PipelineSettings
                ) -> tuple[tuple[ToolSpec, ...], list[DroppedOptional | DroppedTool]]:
    """The tools this request offers, and a decision for each deferred one."""
    if not settings.config.context_policy.deferred_tools:
        return state.tools, []
    kept: list[ToolSpec] = []
    decisions: list[DroppedOptional | DroppedTool] = []
    for tool in state.tools:
        # The runner's own tools are how deferred material is reached: never deferred themselves.
        if tool.name in state.called_tools or tool.name in ENGINE_TOOL_NAMES:
            kept.append(tool)
            continue
        decisions.append(DroppedTool(tool_name=tool.name, tokens=tool.tokens,
                                     reason="deferred_tools: not used yet in this session, "
                                            "disclosed on demand"))
    return tuple(kept), decisions


def apply(state: PreparationState, settings: PipelineSettings
          ) -> tuple[PreparationState, StageRecord]:
    before = state.input_tokens
    optional = [p for p in state.contributions if not p.required]
    if not optional and not settings.config.context_policy.deferred_tools:
        return state, StageRecord(name="drop_optional", status="skipped",
                                  before_input_tokens=before, after_input_tokens=before,
                                  note="no optional contribution and no deferred tools")
    tools, decisions = _drop_tools(state, settings)
    contributions = state.contributions
    if optional:
        others = before - sum(p.tokens for p in optional) - sum(t.tokens for t in state.tools)
        others += sum(t.tokens for t in tools)
        # the pressure line is a whole request: in local units it leaves out the overhead
        allowance = max(state.local_line(settings.pressure_line) - others, 0)
        removed = _removed(tuple(p.payload for p in state.contributions if p.payload is not None),
                           allowance, settings)
        for part in optional:
            if part.key in removed:
                decisions.append(DroppedOptional(
                    key=part.key or "", priority=part.priority, position=part.position,
                    tokens=part.tokens, reason=removed[part.key or ""]))
        contributions = tuple(p for p in state.contributions
                              if p.required or p.key not in removed)
    dropped = tuple(d.key if isinstance(d, DroppedOptional) else d.tool_name for d in decisions)
    new = replace(state, contributions=contributions, tools=tools,
                  dropped=state.dropped + dropped)
    note = (f"{len(optional)} optional contribution(s) considered against "
            f"the pressure line {settings.pressure_line:,}; {len(dropped)} item(s) dropped")
    return new, StageRecord(name="drop_optional", status="entered", before_input_tokens=before,
                            after_input_tokens=new.input_tokens, decisions=tuple(decisions),
                            note=note)
