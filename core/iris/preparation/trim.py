"""Stage 4, trim old bodies: the reduction rules of §8 and the context policy's old-body trimming.

One call of the reduction engine over the working history (R-RED-1, R-POL-2). Its per-result
decisions become records as they are: ``kept`` results of recent groups → ``kept-recent``,
``trimmed`` → ``trimmed`` (preview plus read-back hint), every other action → ``reduced`` with the
category and rule that fired. Only this request changes; the durable history keeps the originals.
A decision already recorded at an earlier step for the same result and action is counted in the
stage note instead of being repeated (the frozen prefix is reused byte for byte, R-RED-9).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import PreparationError
from ..session import Message
from . import adapters
from .records import Decision, KeptRecent, Reduced, StageRecord, Trimmed
from .state import Part, PipelineSettings, PreparationState

__all__ = ["apply"]


def _decision(d: Any, part: Part, ref: str, settings: PipelineSettings):
    alias = settings.cache.aliased
    common = {"ref": ref, "message_index": part.history_index, "reason": alias(d.reason)}
    path = alias(d.artifact_path) or None
    if d.action == "kept":
        return KeptRecent(tool_name=d.tool_name, call_id=d.call_id, **common)
    if d.action == "trimmed":
        return Trimmed(block_index=d.block_index, tool_name=d.tool_name,
                       tokens_before=d.tokens_before, tokens_after=d.tokens_after,
                       artifact_path=path, **common)
    return Reduced(block_index=d.block_index, tool_name=d.tool_name, category=str(d.category),
                   rule=d.rule or "", action=d.action, age=d.age, tokens_before=d.tokens_before,
                   tokens_after=d.tokens_after, artifact_path=path, **common)


def _shortened(part: Part, new_message: Message, actions: set[str],
               settings: PipelineSettings) -> Part:
    """The part carrying the engine's rewritten message, marked trimmed and/or reduced."""
    # counted as shown (working directory as ``<session_dir>``): the count must not depend on
    # where the replay runs (R-PREP-6)
    tokens = settings.cache.message(settings.cache.display(new_message))
    actions = actions - {"kept"}
    marked = part.replaced(new_message, tokens, "trimmed" if "trimmed" in actions else "reduced")
    if "trimmed" in actions and actions - {"trimmed"}:
        marked = marked.replaced(new_message, tokens, "reduced")
    return marked


def _new_decisions(part: Part, found: list[Any], seen: set[str], settings: PipelineSettings
                   ) -> tuple[list[Decision], int]:
    """Decisions not recorded at an earlier step (``seen`` is updated) and the carried count."""
    out, carried = [], 0
    for d in found:
        ref = (f"result:{part.history_index}:{d.block_index}" if part.history_index is not None
               else d.ref)
        mark = f"{d.action} {ref} {d.rule}"
        if mark in seen:
            carried += 1
            continue
        seen.add(mark)
        out.append(_decision(d, part, ref, settings))
    return out, carried


def apply(state: PreparationState, settings: PipelineSettings
          ) -> tuple[PreparationState, StageRecord]:
    before = state.input_tokens
    config = settings.config
    if not config.reduction.enabled and not config.context_policy.enabled:
        return state, StageRecord(name="trim_old_bodies", status="skipped",
                                  before_input_tokens=before, after_input_tokens=before,
                                  note="reduction and context policy are both disabled")
    messages = tuple(p.message for p in state.history)
    result = adapters.reduce_history(
        messages, config=config, state=state.reduction_state, session_dir=settings.session_dir,
        context_read_available=config.context_policy.enabled, tool_kinds=settings.tool_kinds,
        estimator=settings.cache.estimator)
    if len(result.messages) != len(messages):
        raise PreparationError(f"reduction returned {len(result.messages)} messages for "
                               f"{len(messages)}", stage="trim_old_bodies", step=state.step_index)
    by_message: dict[int, list[Any]] = {}
    for d in result.decisions:
        by_message.setdefault(d.message_index, []).append(d)
    history, decisions, seen, carried, changed = list(state.history), [], set(state.seen), 0, 0
    for i, new_message in enumerate(result.messages):
        found = by_message.get(i, [])
        new, kept_over = _new_decisions(state.history[i], found, seen, settings)
        decisions += new
        carried += kept_over
        if new_message is not state.history[i].message:
            history[i] = _shortened(state.history[i], new_message, {d.action for d in found},
                                    settings)
            changed += 1
    delta = sum(a.tokens - b.tokens for a, b in zip(history, state.history) if a is not b)
    new_state = replace(state, history=tuple(history), history_tokens=state.history_tokens + delta,
                        reduction_state=result.state, seen=frozenset(seen))
    note = (f"{changed} message(s) shortened in this request; {len(decisions)} new decision(s), "
            f"{carried} carried over unchanged from earlier steps")
    return new_state, StageRecord(name="trim_old_bodies", status="entered",
                                  before_input_tokens=before,
                                  after_input_tokens=new_state.input_tokens,
                                  decisions=tuple(decisions), note=note)
