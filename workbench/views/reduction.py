"""The Reduction view: why was each tool output of a step kept, summarised, trimmed or marked stale?

For a session and a step ``k`` (the request that produced assistant response ``k``) it calls
:func:`iris.reduction.reduce_request` on the messages recorded before that step and lists the
decisions exactly as the engine produced them (nothing is recomputed for display). With
``carry_state`` the engine is walked over steps ``0…k`` with its state, so frozen renderings and the
``min_incremental_saved_tokens`` reuse rule act as in a replay; without it the step is reduced from a
fresh state. Recorded compactions are not applied here (the Step-through page shows the replay).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from iris.context.policy import ContextPolicy
from iris.reduction import ReductionConfig, ReductionResult, ReductionState, ToolKindMap, reduce_request
from iris.reduction.toolkinds import FORMATS
from iris.session import Session
from iris.tokens import TokenEstimator, default_estimator

__all__ = ["COLUMNS", "reduction_result", "reduction_table", "reduction_totals", "step_count",
           "tool_kind_table"]

COLUMNS = ["ref", "tool", "kind", "category", "age", "bytes", "decision", "rule", "tokens before",
           "tokens after", "saved tokens", "reason", "artifact"]


def step_count(session: Session) -> int:
    """Steps of a session: one per assistant response."""
    return sum(1 for m in session.messages if m.role == "assistant")


def _cut(session: Session, step: int) -> int:
    """Index of the k-th assistant message (the messages before it form step k's request)."""
    n = step_count(session)
    if not 0 <= step < max(n, 1):
        raise ValueError(f"step {step} is out of range: the session has {n} steps")
    seen = -1
    for i, m in enumerate(session.messages):
        if m.role == "assistant":
            seen += 1
            if seen == step:
                return i
    return len(session.messages)


def _kinds(session: Session) -> ToolKindMap:
    fmt = session.header.source_format
    return ToolKindMap(format=fmt if fmt in FORMATS else "native")


def reduction_result(session: Session, step: int, config: ReductionConfig | None = None, *,
                     policy: ContextPolicy | None = None, carry_state: bool = False,
                     session_dir: Path | None = None, context_read_available: bool = True,
                     estimator: TokenEstimator | None = None) -> ReductionResult:
    """The engine's result for step ``step`` (see the module docstring for ``carry_state``)."""
    config = config or ReductionConfig()
    policy = policy or ContextPolicy()
    kinds, est = _kinds(session), estimator or default_estimator()
    cuts = [_cut(session, k) for k in (range(step + 1) if carry_state else [step])]
    state: ReductionState | None = None
    result = None
    for cut in cuts:
        result = reduce_request(session.messages[:cut], config=config, policy=policy, state=state,
                                session_dir=session_dir, context_read_available=context_read_available,
                                tool_kinds=kinds, estimator=est)
        state = result.state
    assert result is not None
    return result


def reduction_table(session: Session, step: int, config: ReductionConfig | None = None, *,
                    policy: ContextPolicy | None = None, carry_state: bool = False,
                    session_dir: Path | None = None, context_read_available: bool = True) -> pd.DataFrame:
    """One row per tool result of step ``step``: kind, category, age, bytes, decision, rule, tokens."""
    result = reduction_result(session, step, config, policy=policy, carry_state=carry_state,
                              session_dir=session_dir, context_read_available=context_read_available)
    rows = [{
        "ref": d.ref, "tool": d.tool_name, "kind": d.kind, "category": d.category, "age": d.age,
        "bytes": d.bytes, "decision": d.action, "rule": d.rule, "tokens before": d.tokens_before,
        "tokens after": d.tokens_after, "saved tokens": d.tokens_before - d.tokens_after,
        "reason": d.reason, "artifact": d.artifact_path or "",
    } for d in result.decisions]
    return pd.DataFrame(rows, columns=COLUMNS)


def reduction_totals(table: pd.DataFrame) -> pd.DataFrame:
    """Counts and saved tokens per decision (for the page's summary line and chart-free overview)."""
    if table.empty:
        return pd.DataFrame(columns=["decision", "results", "saved tokens"])
    grouped = table.groupby("decision", sort=True).agg(results=("ref", "count"),
                                                       saved=("saved tokens", "sum"))
    return grouped.reset_index().rename(columns={"saved": "saved tokens"})


def tool_kind_table(session: Session) -> pd.DataFrame:
    """The tool names of a session with the kind the mapping gives them (format defaults)."""
    kinds = _kinds(session)
    names = sorted({c.name for m in session.messages for c in m.tool_calls})
    return pd.DataFrame([{"tool": n, "kind": kinds.kind(n)} for n in names], columns=["tool", "kind"])
