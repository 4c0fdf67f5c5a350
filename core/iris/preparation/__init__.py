"""iris.preparation: the staged pipeline that prepares each model request, and its records.

Six stages in order (R-PREP-2): assembly, fold repeated observations, drop optional contributions
and tools, trim old bodies, compaction, final selection. Each is a pure function
``(state, settings) -> (state, StageRecord)``; :func:`prepare` runs them and always returns a
:class:`ContextPreparation` (``ready``, ``failed`` or ``cancelled``). :class:`Publisher` hands each
record to an :class:`EvidenceSink` and a ``context.preparation`` event to the :class:`Broker`.
What the stages reuse from step to step is in the :class:`StepMemory` of ``settings.memory``,
owned by the replay runner.
"""

from .memory import StepMemory
from .pipeline import STAGES, PreparationOutcome, StepMeta, prepare
from .publisher import Broker, EvidenceSink, ListSink, PreparationEvent, Publisher
from .records import (
    RECORD_SCHEMA_VERSION,
    STAGE_NAMES,
    CompactionApplied,
    CompactionCandidate,
    CompactionPlan,
    CompactionRejected,
    ContextPreparation,
    Decision,
    DroppedOptional,
    DroppedTool,
    FinalSelection,
    FoldedRepeat,
    KeptRecent,
    KeptRequired,
    MessageMark,
    Phase,
    PreparationFailure,
    PreparedRequest,
    PressureNotice,
    Reduced,
    StageName,
    StageRecord,
    StageStatus,
    Trimmed,
    UsageKind,
    canonical_json,
    content_hash,
    request_ref,
)
from .state import Part, PipelineSettings, PreparationState, StageFailed, TokenCache, ToolSpec

__all__ = [
    "RECORD_SCHEMA_VERSION",
    "STAGES",
    "STAGE_NAMES",
    "Broker",
    "CompactionApplied",
    "CompactionCandidate",
    "CompactionPlan",
    "CompactionRejected",
    "ContextPreparation",
    "Decision",
    "DroppedOptional",
    "DroppedTool",
    "EvidenceSink",
    "FinalSelection",
    "FoldedRepeat",
    "KeptRecent",
    "KeptRequired",
    "ListSink",
    "MessageMark",
    "Part",
    "Phase",
    "PipelineSettings",
    "PreparationEvent",
    "PreparationFailure",
    "PreparationOutcome",
    "PreparationState",
    "PreparedRequest",
    "PressureNotice",
    "Publisher",
    "Reduced",
    "StageFailed",
    "StageName",
    "StageRecord",
    "StageStatus",
    "StepMemory",
    "StepMeta",
    "TokenCache",
    "ToolSpec",
    "Trimmed",
    "UsageKind",
    "canonical_json",
    "content_hash",
    "prepare",
    "request_ref",
]
