"""Compaction records: the decision union, the carried state and the outcome (R-CMP-8, R-PREP-3).

Every plan, candidate, rejection, skip, no-cut and application is a small frozen model with its
numbers, discriminated by ``kind`` so views can branch on it exhaustively.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field

from ..frozen import FrozenModel
from ..session import Message, Usage
from .checkpoint import ArchiveRef, Checkpoint, RetainedMessage, SessionConstraint
from .model_driven import Gate
from .typed_state import TypedCheckpointState

__all__ = ["AppliedDecision", "CandidateDecision", "CompactionDecision", "CompactionOutcome",
           "CompactionState", "NoCutDecision", "PlanDecision", "RejectedDecision",
           "SkippedDecision"]

Trigger = Literal["auto", "manual", "oversize", "model_driven"]


_Frozen = FrozenModel


class PlanDecision(_Frozen):
    kind: Literal["plan"] = "plan"
    trigger: Trigger
    cut_index: int
    profile: Literal["continuation", "archival", "model_driven"]
    head_messages: int
    head_tokens: int
    tail_messages: int
    tail_tokens: int
    recent_target: int
    tail_budget: int
    reason: str


class CandidateDecision(_Frozen):
    kind: Literal["candidate"] = "candidate"
    # records saved before the British spelling carry the key ``summarizer``
    summariser: str = Field(validation_alias=AliasChoices("summariser", "summarizer"))
    model: str | None = None
    summary_tokens: int
    summary_max_tokens: int
    checkpoint_tokens: int
    projected_request_tokens: int
    pressure_line: int
    note: str = Field(default="", exclude_if=lambda v: not v)
    """The summariser's note on how it chose the summary (``SummaryResult.note``), then, when
    files come back after the summary (``restore_recent_reads``), how each was rebuilt."""


class RejectedDecision(_Frozen):
    kind: Literal["rejected"] = "rejected"
    reason: str
    """e.g. "summary invalid: missing section '## Progress'", "after 91,000 > pressure line 76,800"."""
    summary_tokens: int | None = None
    projected_request_tokens: int | None = None


class SkippedDecision(_Frozen):
    """A model-driven checkpoint not applied by a gate (R-CMP-12)."""

    kind: Literal["skipped"] = "skipped"
    gate: Gate
    reason: str
    saved_tokens: int | None = None
    current_tokens: int | None = None


class NoCutDecision(_Frozen):
    kind: Literal["no_cut"] = "no_cut"
    reason: str
    request_tokens: int
    hard_limit: int
    within_hard_limit: bool
    """True: continue without compacting (R-CMP-8); False: the turn cannot go on."""


class AppliedDecision(_Frozen):
    kind: Literal["applied"] = "applied"
    before_tokens: int
    after_tokens: int
    checkpoint_tokens: int
    archive_path: str
    archive_number: int


CompactionDecision = Annotated[
    PlanDecision | CandidateDecision | RejectedDecision | SkippedDecision | NoCutDecision | AppliedDecision, Field(discriminator="kind")]


class CompactionState(_Frozen):
    """What carries from one compaction to the next within a session."""

    archives: tuple[ArchiveRef, ...] = ()
    previous_checkpoint: str | None = None
    """Body of the latest checkpoint (its required sections), the next summary's protected input."""
    constraints: tuple[SessionConstraint, ...] = ()
    constraints_omitted: int = 0
    retained: tuple[RetainedMessage, ...] = ()
    """The latest checkpoint's retained user messages, carried into the next one."""
    typed: TypedCheckpointState | None = None
    last_model_apply_batch: int | None = None
    cooldown_until_batch: int | None = None
    """Model-driven retries are skipped before this batch (low-gain cooldown)."""
    last_model_fingerprint: str | None = None
    """Arguments hash and history length of the last model-driven attempt (duplicate gate)."""


class CompactionOutcome(_Frozen):
    status: Literal["applied", "rejected", "no_cut", "skipped"]
    decisions: tuple[CompactionDecision, ...]
    history: tuple[Message, ...]
    """The new durable history when applied (checkpoint + raw tail); else the input unchanged."""
    checkpoint: Checkpoint | None = None
    archive_path: str | None = None
    archive_text: str = ""
    """The text written to ``archive_path`` (what a replay keeps without reading the file back)."""
    cut_index: int | None = None
    summary_usage: Usage | None = None
    summary_request_text: str = ""
    """The rendered prompt sent (system + input), for the workbench's template diff."""
    state: CompactionState
