"""Stage 2, fold repeated observations: identical re-read bodies collapse to a read-back note.

When the same tool output appears more than once in the history (a file read twice without a
change, the same listing run again), every earlier copy becomes a one-line note naming where the
body still is: the ``result:N:B`` reference of the latest copy (R-PREP-2). Only this request is
changed; the durable history keeps every copy. Error results, results marked not reducible and
short bodies (where a note would save nothing) never fold. The note points at a read-back
location, so the stage needs ``context_read`` (the context policy) to be enabled.
"""

from __future__ import annotations

from dataclasses import replace

from ..frozen import UNCHANGED
from ..session import ToolResultBlock
from .memory import FoldIndex, FoldMemory, Rewrite, starts_with
from .records import Decision, FoldedRepeat, StageRecord
from .state import Marks, Part, PipelineSettings, PreparationState

__all__ = ["FOLD_MIN_CHARS", "apply", "fold_note"]

#: Bodies shorter than this stay as they are: the note itself costs about 30 tokens.
FOLD_MIN_CHARS = 400


def fold_note(read_back: str, chars: int) -> str:
    return (f"[Identical output ({chars} characters) appears again later at {read_back}; "
            f"this earlier copy was folded. Read it back with context_read(ref=\"{read_back}\").]")


def _extend(index: FoldIndex, history: tuple[Part, ...]) -> None:
    start = len(index.parts)
    again: set[int] = set(range(start, len(history)))
    for i in range(start, len(history)):
        part = history[i]
        index.parts.append(part)
        if part.history_index is None:
            continue
        for bi, block in enumerate(part.message.content):
            if block.type == "tool_call":
                index.names[block.id] = block.name
            elif block.type == "tool_result":
                holders = index.holders.setdefault(block.text, [])
                if not holders or holders[-1] != i:
                    holders.append(i)
                if not block.is_error and block.reducible and len(block.text) >= FOLD_MIN_CHARS:
                    index.latest[block.text] = f"result:{part.history_index}:{bi}"
                    again.update(holders)
    for i in again:
        folds = _folds(history[i], index.latest)
        if folds:
            index.folds[i] = folds
        else:
            index.folds.pop(i, None)


def _index(history: tuple[Part, ...], memory: FoldMemory) -> FoldIndex:
    index = memory.index
    # the parts of the index are those of the history it was last extended with (when noted)
    source = index.source if index.source is not None and len(index.source) == len(index.parts) else index.parts
    if not starts_with(history, source):
        memory.index = index = FoldIndex()
    _extend(index, history)
    index.source = history
    return index


def _folds(part: Part, latest: dict[str, str]) -> tuple[tuple[int, str], ...]:
    """(block, read_back) of each earlier copy this message holds (none: nothing to fold)."""
    if part.history_index is None:
        return ()
    folds: list[tuple[int, str]] = []
    for bi, block in enumerate(part.message.content):
        if block.type != "tool_result":
            continue
        target = latest.get(block.text)
        if target is not None and target != f"result:{part.history_index}:{bi}":
            folds.append((bi, target))
    return tuple(folds)


def _folded(part: Part, index: int, folds: tuple[tuple[int, str], ...],
            settings: PipelineSettings) -> Part:
    """The part with its earlier copies folded: the same object at every step while its message
    and folds stay the same (kept by session message index, checked against the source part)."""
    memory = settings.memory.fold.folded
    hit = memory.get(index)
    if hit is not None and hit.made_from(part, folds):
        return hit.result
    blocks = list(part.message.content)
    for bi, target in folds:
        old = blocks[bi]
        assert isinstance(old, ToolResultBlock)
        blocks[bi] = old.evolve(**UNCHANGED, text=fold_note(target, len(old.text)),
                                artifact_path=None)
    message = part.message.evolve(**UNCHANGED, content=tuple(blocks))
    result = part.replaced(message, settings.cache.message(message), "folded")
    memory[index] = Rewrite(part, folds, result)
    return result


def apply(state: PreparationState, settings: PipelineSettings
          ) -> tuple[PreparationState, StageRecord]:
    before = state.input_tokens
    if not settings.config.context_policy.enabled:
        return state, StageRecord(name="fold_repeats", status="skipped", before_input_tokens=before,
                                  after_input_tokens=before,
                                  note="context policy disabled: no context_read to point at")
    index = _index(state.history, settings.memory.fold)
    if not index.folds:  # nothing to fold: the history stays as it is (no copy of it)
        return state, StageRecord(name="fold_repeats", status="entered", before_input_tokens=before,
                                  after_input_tokens=before,
                                  note="0 new fold(s), 0 carried over from earlier steps")
    history = list(state.history)
    decisions: list[Decision] = []
    seen, added, delta, carried = Marks.of(state.seen), set[str](), 0, 0
    for i in sorted(index.folds):
        part = state.history[i]
        folds = index.folds[i]
        assert part.history_index is not None  # only session messages are folded
        history[i] = _folded(part, part.history_index, folds, settings)
        delta += history[i].tokens - part.tokens
        tokens = history[i].tokens
        for bi, target in folds:
            ref = f"result:{part.history_index}:{bi}"
            mark = f"fold {ref}->{target}"
            if mark in added or mark in seen:
                carried += 1
                continue
            added.add(mark)
            block = part.message.content[bi]
            assert isinstance(block, ToolResultBlock)
            decisions.append(FoldedRepeat(
                ref=ref, message_index=part.history_index, read_back=target,
                tool_name=index.names.get(block.call_id), tokens_before=part.tokens,
                tokens_after=tokens,
                reason=f"identical body appears again at {target}; the earlier copy is folded"))
    new = replace(state, history=tuple(history), history_tokens=state.history_tokens + delta,
                  seen=seen.with_added(added))
    note = f"{len(decisions)} new fold(s), {carried} carried over from earlier steps"
    return new, StageRecord(name="fold_repeats", status="entered", before_input_tokens=before,
                            after_input_tokens=new.input_tokens, decisions=tuple(decisions),
                            note=note)
