"""The as-recorded baseline and the recorded compactions (see docs/compaction.md).

The as-recorded baseline replays what the agent really sent: the recorded history with the
recorded compactions applied where they happened (the walk replaces the durable history with the
context the compaction provided, the agent's summary included) and no engine reduction or
compaction: only assembly and final selection run, the four stages between are recorded as
skipped. A replay with its own compaction policy leaves the recorded compaction's output (the
agent's summary message, Codex replacement history) out of its history instead: its own policy
decides what replaces old messages, and an agent summary next to the replay's own checkpoint would
describe the same history twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..frozen import FrozenModel
from ..session import Session
from . import assembly, final
from .pipeline import Stage
from .records import StageName, StageRecord
from .state import PipelineSettings, PreparationState

__all__ = ["BASELINE_NOTE", "BASELINE_STAGES", "RecordedCompactionMark", "recorded_marks"]

BASELINE_NOTE = "not entered: as-recorded baseline (no engine reduction or compaction)"


class RecordedCompactionMark(FrozenModel):
    """A compaction the recorded agent made, placed on the replay's steps."""

    step: int
    """First step whose request the agent sent from the compacted context."""
    at_message: int
    """Session index of the first message of the compacted context (usually its summary)."""
    tokens_before: int | None = None
    """The agent's own count before compacting (Claude ``preTokens``), else the provider's prompt
    tokens of the last response before it."""
    tokens_after: int | None = None
    """Provider prompt tokens of the first response after it (None when not recorded)."""
    trigger: str = "auto"
    source: str = ""
    summary_message: int | None = None
    """Session index of the agent's summary message (None when it wrote none)."""
    summary_in_replay: bool = True
    """Whether the agent's summary was replayed (the as-recorded baseline keeps it; a replay
    with its own compaction policy leaves it out, see docs/compaction.md)."""


def _skipped(name: StageName) -> Stage:
    def stage(state: PreparationState, settings: PipelineSettings
              ) -> tuple[PreparationState, StageRecord]:
        n = state.input_tokens
        return state, StageRecord(name=name, status="skipped", before_input_tokens=n,
                                  after_input_tokens=n, note=BASELINE_NOTE)
    return stage


#: Assembly and final selection; the stages between are recorded as skipped.
BASELINE_STAGES: tuple[tuple[StageName, Stage], ...] = (
    ("assembly", assembly.apply), ("fold_repeats", _skipped("fold_repeats")),
    ("drop_optional", _skipped("drop_optional")), ("trim_old_bodies", _skipped("trim_old_bodies")),
    ("compaction", _skipped("compaction")), ("final_selection", final.apply))


def recorded_marks(session: Session, left_out: Sequence[int], *, baseline: bool
                   ) -> tuple[RecordedCompactionMark, ...]:
    """The session's recorded compactions placed on the steps (one per compaction)."""
    batches = session.index.batches
    messages = session.messages
    out: list[RecordedCompactionMark] = []
    for c in session.compactions:
        step = next((k for k, b in enumerate(batches) if b.assistant_message > c.at_message), None)
        if step is None:
            continue
        before = c.pre_tokens
        if before is None and step > 0:
            usage = messages[batches[step - 1].assistant_message].usage
            before = usage.prompt_tokens if usage is not None and usage.is_trusted else None
        usage = messages[batches[step].assistant_message].usage
        after = usage.prompt_tokens if usage is not None and usage.is_trusted else None
        end = batches[step].assistant_message
        summary = next((i for i in range(c.at_message, end) if messages[i].is_compaction_summary),
                       None)
        out.append(RecordedCompactionMark(
            step=step, at_message=c.at_message, tokens_before=before, tokens_after=after,
            trigger=c.trigger, source=c.source, summary_message=summary,
            summary_in_replay=baseline or (summary is not None and summary not in left_out)))
    return tuple(out)
