"""The Reduction view: what did the replay decide about each tool output at a step, and why?

Everything comes from the selected replay's own records, nothing is reduced again for display:

- :func:`step_decisions` lists the decisions the replay recorded at the step in its reduction
  stages (fold repeats, drop optional, trim old bodies): the same records the Step-through page
  shows for those stages, with the rule and numbers of each.
- The replay reduces incrementally: a tool result decided at an earlier step keeps that decision
  and is not recorded again. :func:`decisions_in_effect` names, for each message of the step's
  final request that carries a reduction mark, the latest earlier decision that made it so.
  Results a compaction archived are no longer in the request, so they are not listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import pandas as pd
from iris.preparation.records import ContextPreparation, Decision, PreparedRequest
from iris.reduction import ToolKindMap
from iris.session import Session

from ..analysis.replay_reader import ReplayReader
from .step_through import describe

__all__ = ["COLUMNS", "REDUCTION_STAGES", "TOOL_DECISION_KINDS", "decisions_in_effect",
           "earlier_records", "reduction_totals", "stage_notes", "step_decisions",
           "tool_kind_table"]

REDUCTION_STAGES = ("fold_repeats", "drop_optional", "trim_old_bodies")
"""The pipeline stages whose decisions are about tool outputs and optional context."""
TOOL_DECISION_KINDS = ("kept-recent", "trimmed", "reduced", "folded-repeat")
"""Decision kinds that settle what a tool result looks like in the request."""
SHRINKING_MARKS = frozenset({"reduced", "trimmed", "folded"})

COLUMNS = ["step", "stage", "kind", "ref", "tool", "rule", "action", "age", "tokens before",
           "tokens after", "saved tokens", "what", "reason", "message", "artifact"]


@runtime_checkable
class _Resized(Protocol):
    """A decision that changed a body's size (fold, trim, reduce, compaction)."""

    @property
    def tokens_before(self) -> int: ...

    @property
    def tokens_after(self) -> int: ...


@runtime_checkable
class _Sized(Protocol):
    """A decision about an item of a known size (kept whole or dropped)."""

    @property
    def tokens(self) -> int: ...


def _numbers(d: Decision) -> tuple[int | None, int | None]:
    if isinstance(d, _Resized):
        return d.tokens_before, d.tokens_after
    if isinstance(d, _Sized):  # dropped items: everything they held is saved
        return d.tokens, 0
    return None, None


def _rule(d: Decision) -> str:
    """The rule that decided: the reduction rule, else what the kind stands for."""
    rule: str = getattr(d, "rule", "")
    if rule:
        return rule
    return {"kept-recent": "recent or protected", "trimmed": "old body trimmed",
            "folded-repeat": "identical repeat", "dropped-optional": "optional under pressure",
            "dropped-tool": "tool schema left out"}.get(d.kind, d.kind)


def _row(step: int, stage: str, d: Decision) -> dict[str, Any]:
    before, after = _numbers(d)
    return {"step": step, "stage": stage, "kind": d.kind, "ref": d.ref or "",
            "tool": getattr(d, "tool_name", None) or getattr(d, "key", None) or "",
            "rule": _rule(d), "action": getattr(d, "action", d.kind), "age": getattr(d, "age", None),
            "tokens before": before, "tokens after": after,
            "saved tokens": before - after if before is not None and after is not None else None,
            "what": describe(d), "reason": d.reason, "message": d.message_index,
            "artifact": getattr(d, "artifact_path", None) or ""}


def _frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows), columns=COLUMNS)
    return frame.astype({c: "Int64" for c in ("age", "tokens before", "tokens after",
                                             "saved tokens", "message")})


def step_decisions(prep: ContextPreparation) -> pd.DataFrame:
    """The replay's decisions at this step in its reduction stages, in record order."""
    return _frame(_row(prep.step_index, s.name, d) for s in prep.stages
                  if s.name in REDUCTION_STAGES for d in s.decisions)


def stage_notes(prep: ContextPreparation) -> list[str]:
    """``stage — status: note`` of the reduction stages that left a note (e.g. the as-recorded
    baseline, which does not reduce)."""
    return [f"{s.name} — {s.status}: {s.note}" for s in prep.stages
            if s.name in REDUCTION_STAGES and s.note]


def _marked(request: PreparedRequest | None) -> set[int]:
    """Session indices of the request's history messages that a reduction shortened."""
    if request is None:
        return set()
    return {m.history_index for m in request.marks
            if m.history_index is not None and SHRINKING_MARKS & set(m.marks)}


def decisions_in_effect(prep: ContextPreparation, request: PreparedRequest | None,
                        earlier: Sequence[tuple[int, str, Decision]]) -> pd.DataFrame:
    """Earlier decisions still shaping this step's request: for every shortened message of the
    request, the latest decision about each of its results made before this step.

    ``earlier`` is ``(step, stage, decision)`` in step order, e.g. from
    ``StoredReplay.decisions_of_kind(*TOOL_DECISION_KINDS)``."""
    marked, now = _marked(request), {d.ref for s in prep.stages for d in s.decisions if d.ref}
    latest: dict[str, tuple[int, str, Decision]] = {}
    for step, stage, d in earlier:
        if step < prep.step_index and d.message_index in marked and d.ref and d.ref not in now:
            latest[d.ref] = (step, stage, d)
    rows = sorted(latest.values(), key=lambda x: (x[2].message_index, x[2].ref))
    return _frame(_row(step, stage, d) for step, stage, d in rows)


def earlier_records(stored: ReplayReader, prep: ContextPreparation,
                    request: PreparedRequest | None) -> tuple[tuple[int, str, Decision], ...]:
    """``(step, stage, decision)`` of a saved replay's tool-result decisions made before this
    step about the messages its request shows shortened (one indexed query; the input
    :func:`decisions_in_effect` needs, without reading every step's records)."""
    marked = sorted(_marked(request))
    if not marked:
        return ()
    return stored.decisions_of_kind(*TOOL_DECISION_KINDS, before_step=prep.step_index,
                                    message_indexes=marked)


def reduction_totals(table: pd.DataFrame) -> pd.DataFrame:
    """Counts and saved tokens per decision kind (the page's summary metrics)."""
    if table.empty:
        return pd.DataFrame(columns=["decision", "results", "saved tokens"])
    grouped = table.groupby("kind", sort=True).agg(results=("kind", "count"),
                                                   saved=("saved tokens", "sum"))
    grouped["saved"] = grouped["saved"].fillna(0).astype(int)
    return grouped.reset_index().rename(columns={"kind": "decision", "saved": "saved tokens"})


def tool_kind_table(session: Session) -> pd.DataFrame:
    """The tool names of a session with the kind the mapping gives them (the defaults of the
    session's tool dialect, as the replay reads them)."""
    kinds = ToolKindMap.for_dialect(session.header.tool_dialect)
    names = sorted({c.name for m in session.messages for c in m.tool_calls})
    return pd.DataFrame([{"tool": n, "kind": kinds.kind(n)} for n in names], columns=["tool", "kind"])
