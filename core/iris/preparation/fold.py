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
from operator import is_

from ..session import Message, ToolResultBlock
from .records import FoldedRepeat, StageRecord
from .state import Marks, Part, PipelineSettings, PreparationState

__all__ = ["FOLD_MIN_CHARS", "apply", "fold_note"]

#: Bodies shorter than this stay as they are: the note itself costs about 30 tokens.
FOLD_MIN_CHARS = 400


def fold_note(read_back: str, chars: int) -> str:
    return (f"[Identical output ({chars} characters) appears again later at {read_back}; "
            f"this earlier copy was folded. Read it back with context_read(ref=\"{read_back}\").]")


class _Index:
    """Latest foldable copy of each body, kept across the steps of a replay (the history only
    grows between compactions): a new copy of a body re-examines only the messages holding it."""

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.latest: dict[str, str] = {}
        """Body text → ``result:N:B`` of its latest foldable copy."""
        self.names: dict[str, str] = {}
        """Call id → tool name."""
        self.holders: dict[str, list[int]] = {}
        """Body text → positions of the history parts holding it as a tool result."""
        self.folded: dict[int, tuple[Message, list[tuple[int, str]]]] = {}

    def extends(self, history: tuple[Part, ...]) -> bool:
        return len(self.parts) <= len(history) and all(map(is_, self.parts, history))

    def extend(self, history: tuple[Part, ...], settings: PipelineSettings) -> None:
        start = len(self.parts)
        again: set[int] = set(range(start, len(history)))
        for i in range(start, len(history)):
            part = history[i]
            self.parts.append(part)
            if part.history_index is None:
                continue
            for bi, block in enumerate(part.message.content):
                if block.type == "tool_call":
                    self.names[block.id] = block.name
                elif block.type == "tool_result":
                    holders = self.holders.setdefault(block.text, [])
                    if not holders or holders[-1] != i:
                        holders.append(i)
                    if not block.is_error and block.reducible and len(block.text) >= FOLD_MIN_CHARS:
                        self.latest[block.text] = f"result:{part.history_index}:{bi}"
                        again.update(holders)
        for i in again:
            part = history[i]
            folded = _folded_message(part, self.latest, settings) if part.history_index is not None else None
            if folded is None:
                self.folded.pop(i, None)
            else:
                self.folded[i] = folded


def _index(history: tuple[Part, ...], settings: PipelineSettings) -> _Index:
    index = settings.cache.memo.get("fold-index")
    if index is None or not index.extends(history):
        index = settings.cache.memo["fold-index"] = _Index()
    index.extend(history, settings)
    return index


def _folded_message(part: Part, latest: dict[str, str], settings: PipelineSettings
                    ) -> tuple[Message, list[tuple[int, str]]] | None:
    """The message with its earlier copies folded, and (block, read_back) per fold; None if none."""
    folds: list[tuple[int, str]] = []
    for bi, block in enumerate(part.message.content):
        if block.type != "tool_result":
            continue
        target = latest.get(block.text)
        if target is not None and target != f"result:{part.history_index}:{bi}":
            folds.append((bi, target))
    if not folds:
        return None
    key = ("fold", id(part.message), tuple(folds))
    cached = settings.cache.memo.get(key)
    if cached is not None and cached[0] is part.message:
        return cached[1], folds
    blocks = list(part.message.content)
    for bi, target in folds:
        old = blocks[bi]
        assert isinstance(old, ToolResultBlock)
        blocks[bi] = old.model_copy(update={"text": fold_note(target, len(old.text)),
                                            "artifact_path": None})
    message = part.message.model_copy(update={"content": tuple(blocks)})
    settings.cache.memo[key] = (part.message, message)
    return message, folds


def _fold_part(part: Part, message: Message, settings: PipelineSettings) -> Part:
    """The part with its folded message: the same object at every step while nothing changes."""
    key = ("fold-part", id(part), id(message))
    hit = settings.cache.memo.get(key)
    if hit is None or hit[0] is not part or hit[1] is not message:
        hit = (part, message, part.replaced(message, settings.cache.message(message), "folded"))
        settings.cache.memo[key] = hit
    return hit[2]


def apply(state: PreparationState, settings: PipelineSettings
          ) -> tuple[PreparationState, StageRecord]:
    before = state.input_tokens
    if not settings.config.context_policy.enabled:
        return state, StageRecord(name="fold_repeats", status="skipped", before_input_tokens=before,
                                  after_input_tokens=before,
                                  note="context policy disabled: no context_read to point at")
    index = _index(state.history, settings)
    history = list(state.history)
    decisions, seen, added, delta, carried = [], Marks.of(state.seen), set(), 0, 0
    for i in sorted(index.folded):
        part = state.history[i]
        message, folds = index.folded[i]
        history[i] = _fold_part(part, message, settings)
        delta += history[i].tokens - part.tokens
        tokens = history[i].tokens
        for bi, target in folds:
            ref = f"result:{part.history_index}:{bi}"
            mark = f"fold {ref}->{target}"
            if mark in added or mark in seen:
                carried += 1
                continue
            added.add(mark)
            decisions.append(FoldedRepeat(
                ref=ref, message_index=part.history_index, read_back=target,
                tool_name=index.names.get(part.message.content[bi].call_id),  # type: ignore[union-attr]
                tokens_before=part.tokens, tokens_after=tokens,
                reason=f"identical body appears again at {target}; the earlier copy is folded"))
    new = replace(state, history=tuple(history), history_tokens=state.history_tokens + delta,
                  seen=seen.with_added(added))
    note = f"{len(decisions)} new fold(s), {carried} carried over from earlier steps"
    return new, StageRecord(name="fold_repeats", status="entered", before_input_tokens=before,
                            after_input_tokens=new.input_tokens, decisions=tuple(decisions),
                            note=note)
