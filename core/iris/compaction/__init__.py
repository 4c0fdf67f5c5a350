"""Durable compaction (SPEC §6, R-TOK-3…6, R-PREP-7): budgets and lines, usage tracking, cut
points, summary requests, checkpoints, history archives, summarisers and model-driven checkpoints.

The preparation pipeline calls :func:`decide_trigger` while preparing each main request and
:func:`compact` when it says so; :func:`apply_model_checkpoint` handles ``compact_context``.
"""

from .archive import next_archive_number, read_archive, render_archive, write_archive
from .checkpoint import (
    REQUIRED_SECTIONS,
    ArchiveRef,
    Checkpoint,
    CheckpointSection,
    RetainedMessage,
    SessionConstraint,
    SummaryInvalid,
    validate_summary,
)
from .config import CompactionConfig, ModelCompactionOverride, ModelConfig
from .cut import CutPlan, choose_cut, resolve_profile, safe_cuts
from .engine import CompactionEnvironment, CompactionRequest, compact
from .model_checkpoint import apply_model_checkpoint, checkpoint_worklog
from .model_driven import (
    COMPACT_CONTEXT_TOOL,
    CheckpointArgsError,
    CompactContextArgs,
    check_gates,
    normalize_state_files,
    parse_compact_args,
)
from .records import (
    AppliedDecision,
    CandidateDecision,
    CompactionDecision,
    CompactionOutcome,
    CompactionState,
    NoCutDecision,
    PlanDecision,
    RejectedDecision,
    SkippedDecision,
)
from .remote import (
    ClientStats,
    MeteredSummariser,
    OpenAICompatibleSummariser,
    RetryPolicy,
    SummaryCallFailed,
)
from .summarisers import (
    ExtractiveSummariser,
    RecordedSummariser,
    Summariser,
    SummariserKind,
    SummaryRequest,
    SummaryResult,
    SummaryTimeout,
)
from .thresholds import Thresholds, budget_from_limits, pressure_colour, thresholds
from .triggers import Notice, PressureWindow, TriggerStep, decide_trigger, select_notice
from .typed_state import Claim, TypedCheckpointState, merge_typed_state
from .usage import (
    RunUsage,
    TriggerDecision,
    UsageReading,
    UsageTotals,
    UsageTracker,
    context_bytes,
    should_trigger,
)

__all__ = [
    "COMPACT_CONTEXT_TOOL",
    "REQUIRED_SECTIONS",
    "AppliedDecision",
    "ArchiveRef",
    "CandidateDecision",
    "Checkpoint",
    "CheckpointArgsError",
    "CheckpointSection",
    "Claim",
    "ClientStats",
    "CompactContextArgs",
    "CompactionConfig",
    "CompactionDecision",
    "CompactionEnvironment",
    "CompactionOutcome",
    "CompactionRequest",
    "CompactionState",
    "CutPlan",
    "ExtractiveSummariser",
    "MeteredSummariser",
    "ModelCompactionOverride",
    "ModelConfig",
    "NoCutDecision",
    "Notice",
    "OpenAICompatibleSummariser",
    "PlanDecision",
    "PressureWindow",
    "RecordedSummariser",
    "RejectedDecision",
    "RetainedMessage",
    "RetryPolicy",
    "RunUsage",
    "SessionConstraint",
    "SkippedDecision",
    "Summariser",
    "SummariserKind",
    "SummaryCallFailed",
    "SummaryInvalid",
    "SummaryRequest",
    "SummaryResult",
    "SummaryTimeout",
    "Thresholds",
    "TriggerDecision",
    "TriggerStep",
    "TypedCheckpointState",
    "UsageReading",
    "UsageTotals",
    "UsageTracker",
    "apply_model_checkpoint",
    "budget_from_limits",
    "check_gates",
    "checkpoint_worklog",
    "choose_cut",
    "compact",
    "context_bytes",
    "decide_trigger",
    "merge_typed_state",
    "next_archive_number",
    "normalize_state_files",
    "parse_compact_args",
    "pressure_colour",
    "read_archive",
    "render_archive",
    "resolve_profile",
    "safe_cuts",
    "select_notice",
    "should_trigger",
    "thresholds",
    "validate_summary",
    "write_archive",
]
