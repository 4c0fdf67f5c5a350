"""The recorded agent's microcompaction, replayed at its step (part of stage 4, trim old bodies).

Claude Code clears the content of old tool results in place before a request
(:mod:`iris.compaction.microcompact`). An agent profile with ``compaction.microcompact`` does the
same in the **durable** history, so every later request carries the placeholder as the agent's
did and the provider's counts of later responses still measure the replayed history:

* a recorded clearing (``state.microcompactions``) clears exactly the results it lists;
* for a version that cleared without recording it (``state.microcompact_rule``), the rule decides
  at every step: the agent's count of the request (the value the compaction trigger compares)
  above its warning line and at least 20,000 estimated tokens to save.

Each clearing is one :class:`~iris.preparation.records.Microcompacted` decision: which results,
what the agent's estimate says they saved against what the agent recorded, and the local counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .. import lineage
from ..compaction import microcompact as mc
from ..session import Message, RecordedMicrocompaction, ToolResultBlock
from .part import Part
from .records import Decision, Microcompacted
from .state import PipelineSettings, PreparationState

__all__ = ["apply"]


def apply(state: PreparationState, settings: PipelineSettings
          ) -> tuple[PreparationState, tuple[Decision, ...]]:
    """``state`` with this step's clearings applied, and their decisions (none: the same state)."""
    if settings.config.compaction.microcompact == "off":
        return state, ()
    decisions: list[Decision] = []
    for recorded in state.microcompactions:
        state, decision = _recorded(state, settings, recorded)
        decisions.append(decision)
    if state.microcompact_rule and not state.microcompactions:
        state, decision = _by_rule(state, settings)
        if decision is not None:
            decisions.append(decision)
    return state, tuple(decisions)


def _recorded(state: PreparationState, settings: PipelineSettings,
              recorded: RecordedMicrocompaction) -> tuple[PreparationState, Microcompacted]:
    wanted = frozenset(recorded.call_ids)
    left_before = mc.plan(_recorded_messages(state)).total
    state, c = _clear(state, settings, wanted)
    done, before, after, saved = c.ids, c.before, c.after, c.estimate
    missing = tuple(x for x in recorded.call_ids if x not in set(done))
    left = left_before - saved
    agent = ""
    if recorded.tokens_saved is not None:
        agent = (f" against the agent's tokensSaved {recorded.tokens_saved:,}"
                 f" ({_pct(saved, recorded.tokens_saved)})")
    if recorded.pre_tokens is not None and recorded.tokens_saved is not None:
        agent += (f"; {left:,} left of {left_before:,} clearable (the agent's "
                  f"{recorded.pre_tokens - recorded.tokens_saved:,} of {recorded.pre_tokens:,})")
    gone = f"; {len(missing)} listed result(s) not in this replay's history" if missing else ""
    reason = (f"the agent's recorded microcompaction ({recorded.trigger}, message "
              f"{recorded.at_message}): {len(done)} old tool result(s) cleared to "
              f"'{mc.CLEARED_TEXT}', {saved:,} tokens by the agent's estimate (characters / 4)"
              f"{agent}{gone}; local count {before:,} → {after:,}")
    return state, Microcompacted(
        reason=reason, source="recorded", call_ids=done, missing_ids=missing, estimate_saved=saved,
        estimate_left=left, tokens_before=before, tokens_after=after,
        agent_tokens_saved=recorded.tokens_saved, agent_pre_tokens=recorded.pre_tokens,
        message_deltas=c.deltas)


def _by_rule(state: PreparationState, settings: PipelineSettings
             ) -> tuple[PreparationState, Microcompacted | None]:
    from .compaction import trigger  # the compaction stage's reading (it imports this stage's module)

    line = settings.thresholds.threshold_line
    if line is None:
        return state, None
    # The warning-line reading first: below it (most steps) the history is not scanned.
    _start, basis, _reason, value = trigger(state, settings)
    warning = line - mc.WARNING_BELOW_LINE
    if value is None or value < warning:
        return state, None
    found = mc.plan(_recorded_messages(state))
    if found.saved < mc.MIN_SAVINGS:
        return state, None
    state, c = _clear(state, settings, frozenset(found.call_ids))
    done, before, after, saved = c.ids, c.before, c.after, c.estimate
    reason = (f"Claude Code's microcompaction rule (its version cleared old tool results without "
              f"recording it): the agent's count {value:,} ({basis}) ≥ warning line {warning:,} "
              f"(the automatic-compaction line {line:,} − {mc.WARNING_BELOW_LINE:,}) and "
              f"{saved:,} ≥ {mc.MIN_SAVINGS:,} tokens to save by its estimate (characters / 4): "
              f"{len(done)} result(s) cleared, the {mc.KEEP_RECENT} most recent kept, "
              f"{found.total - saved:,} of {found.total:,} left (≤ {mc.KEEP_TOKENS:,}); "
              f"local count {before:,} → {after:,}")
    return state, Microcompacted(
        reason=reason, source="rule", call_ids=done, estimate_saved=saved,
        estimate_left=found.total - saved, tokens_before=before, tokens_after=after,
        message_deltas=c.deltas)


class _Cleared(NamedTuple):
    ids: tuple[str, ...]
    """The ids cleared, in history order."""
    before: int
    """The local count of the durable messages holding them, before."""
    after: int
    estimate: int
    """The agent's estimate (characters / 4) of what was cleared."""
    deltas: tuple[tuple[int, int], ...]


def _recorded_messages(state: PreparationState) -> list[Message]:
    """The recorded messages of this request's history (not a checkpoint or a notice)."""
    return [p.message for p in state.history if p.origin == "history"]


def _clear(state: PreparationState, settings: PipelineSettings, wanted: frozenset[str]
           ) -> tuple[PreparationState, _Cleared]:
    """``state`` with the results of ``wanted`` cleared in the durable history and in this
    request's history, and what was cleared."""
    cache = settings.cache
    made: dict[int, tuple[Part, Part, tuple[str, ...]]] = {}
    """``id(old part)`` → (old part, new part, the ids it cleared)."""

    def cleared(part: Part) -> Part:
        if part.origin != "history":  # a checkpoint's restored files are not the agent's results
            return part
        hit = made.get(id(part))
        if hit is not None:
            return hit[1]
        message, ids = mc.clear(part.message, wanted)
        if not ids:
            return part
        new = part.replaced(message, cache.message(message), "trimmed")
        made[id(part)] = (part, new, ids)
        return new

    durable, d_delta = _replace(state.durable, cleared)
    in_durable = dict(made)
    history, h_delta = _replace(state.history, cleared)
    if not made:
        return state, _Cleared((), 0, 0, 0, ())
    done: list[str] = []
    deltas: list[tuple[int, int]] = []
    before = after = estimate = 0
    for old, new, ids in in_durable.values():
        before, after = before + old.tokens, after + new.tokens
        done += ids
        if old.history_index is not None:
            deltas.append((old.history_index, new.tokens - old.tokens))
        estimate += sum(mc.estimate(b) for b in old.message.content
                        if isinstance(b, ToolResultBlock) and b.call_id in ids)
    return (state.evolve(durable=durable, durable_tokens=state.durable_tokens + d_delta,
                         history=history, history_tokens=state.history_tokens + h_delta),
            _Cleared(tuple(done), before, after, estimate, tuple(sorted(deltas))))


def _replace(parts: tuple[Part, ...], cleared: Callable[[Part], Part]) -> tuple[tuple[Part, ...], int]:
    """``parts`` with each part passed through ``cleared``, and the change in tokens."""
    out = [cleared(p) for p in parts]
    first = next((i for i, (a, b) in enumerate(zip(parts, out, strict=True)) if a is not b), None)
    if first is None:
        return parts, 0
    new = tuple(out)
    lineage.note(new, parts, first)
    return new, sum(b.tokens - a.tokens for a, b in zip(parts, out, strict=True))


def _pct(value: int, reference: int) -> str:
    if not reference:
        return "no reference"
    return f"{(value - reference) * 100 / reference:+.1f} %"
