"""iris.preparation: the staged pipeline that prepares each model request, and its records.

Six stages in order (R-PREP-2): assembly, fold repeated observations, drop optional contributions
and tools, trim old bodies, compaction, final selection. Each is a pure function
``(state, settings) -> (state, StageRecord)``; :func:`prepare` runs them and always returns a
:class:`ContextPreparation` (``ready``, ``failed`` or ``cancelled``). :class:`Publisher` hands each
record to an :class:`EvidenceSink` and a ``context.preparation`` event to the :class:`Broker`.
What the stages reuse from step to step is in the :class:`StepMemory` of ``settings.memory``,
owned by the replay walker.

The records are imported with the package; the pipeline, its stages, the publisher and the step
memory when first named (``from iris.preparation import prepare``): a reader of stored records
(the store, a listing) does not load the reduction and compaction engines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes
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

if TYPE_CHECKING:
    from .memory import StepMemory
    from .pipeline import STAGES, PreparationOutcome, StepMeta, prepare
    from .publisher import Broker, EvidenceSink, ListSink, PreparationEvent, Publisher
    from .state import Part, PipelineSettings, PreparationState, StageFailed, TokenCache, ToolSpec

_LAZY = {"StepMemory": "memory", "STAGES": "pipeline", "PreparationOutcome": "pipeline",
         "StepMeta": "pipeline", "prepare": "pipeline", "Broker": "publisher",
         "EvidenceSink": "publisher", "ListSink": "publisher", "PreparationEvent": "publisher",
         "Publisher": "publisher", "Part": "state", "PipelineSettings": "state",
         "PreparationState": "state", "StageFailed": "state", "TokenCache": "state",
         "ToolSpec": "state"}


__getattr__ = lazy_attributes(__name__, {name: f"{__name__}.{module}" for name, module in _LAZY.items()},
                              globals())

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
