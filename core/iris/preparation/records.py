"""The record of one context preparation: stages, decisions, the final request (R-PREP-1…4).

Everything here is a frozen pydantic model that serialises with ``model_dump(mode="json")`` and
loads back without loss, so the workbench store, the CLI's JSON lines and the golden files all hold
the same shape. Decisions are a discriminated union on ``kind``: each one is produced by the branch
of a stage that took it, never recomputed for display. Ids are content hashes with an algorithm
prefix (``sha256:…``), so two replays of the same inputs produce byte-identical records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import Field, PrivateAttr

from ..frozen import UNCHANGED, FrozenModel
from ..hashing import ALGORITHM, canonical_json, content_hash, text_hash
from ..session import Message, Usage

__all__ = [
    "RECORD_SCHEMA_VERSION",
    "STAGE_NAMES",
    "CompactionApplied",
    "CompactionCandidate",
    "CompactionPlan",
    "CompactionRejected",
    "ContextPreparation",
    "Decision",
    "DroppedOptional",
    "DroppedTool",
    "FinalSelection",
    "FoldedRepeat",
    "KeptRecent",
    "KeptRequired",
    "MessageMark",
    "Microcompacted",
    "Phase",
    "PreparationFailure",
    "PreparedRequest",
    "PressureNotice",
    "Reduced",
    "StageName",
    "StageRecord",
    "StageStatus",
    "TriggerBasis",
    "Trimmed",
    "UsageKind",
    "canonical_json",
    "content_hash",
    "request_ref",
    "request_ref_fed",
    "request_ref_of",
]

#: Record format version. 1: first version.
RECORD_SCHEMA_VERSION = 1

StageName = Literal["assembly", "fold_repeats", "drop_optional", "trim_old_bodies", "compaction",
                    "final_selection"]
#: The stages in pipeline order (R-PREP-2).
STAGE_NAMES: tuple[StageName, ...] = ("assembly", "fold_repeats", "drop_optional",
                                      "trim_old_bodies", "compaction", "final_selection")
StageStatus = Literal["entered", "skipped", "candidate", "rejected", "applied"]
Phase = Literal["ready", "failed", "cancelled"]
FailureKind = Literal["error", "timeout", "cancelled"]
UsageKind = Literal["trusted", "estimated", "missing"]
TriggerBasis = Literal["provider", "agent_count", "provider_estimate", "calibrated_local",
                       "disabled", "none"]
MarkKind = Literal["reduced", "trimmed", "folded", "dropped", "summarised", "notice"]


_Frozen = FrozenModel


# --------------------------------------------------------------------------------------------
# Decisions (one discriminated union on ``kind``)


class _DecisionBase(_Frozen):
    reason: str
    """Plain words: why this happened, as the branch that decided it saw it."""
    message_index: int | None = None
    """Index of the message in the request as the stage saw it (None when not about a message)."""
    ref: str | None = None
    """A read-back reference (``message:N`` / ``result:N:B``) when the decision is about one."""


class KeptRequired(_DecisionBase):
    """A required item (context message, required contribution, task anchor) that always stays."""

    kind: Literal["kept-required"] = "kept-required"
    key: str
    """Contribution key, context position or anchor name."""
    tokens: int = 0


class KeptRecent(_DecisionBase):
    """A tool result kept whole because it belongs to a recent tool group or is still protected."""

    kind: Literal["kept-recent"] = "kept-recent"
    tool_name: str | None = None
    call_id: str | None = None


class FoldedRepeat(_DecisionBase):
    """An identical re-read body collapsed to a note pointing at where the body can be read back."""

    kind: Literal["folded-repeat"] = "folded-repeat"
    read_back: str
    """``result:N:B`` of the copy that stays whole (the latest one)."""
    tool_name: str | None = None
    tokens_before: int = 0
    tokens_after: int = 0


class DroppedOptional(_DecisionBase):
    """An optional dynamic contribution removed under budget pressure (R-DYN-4)."""

    kind: Literal["dropped-optional"] = "dropped-optional"
    key: str
    priority: int
    position: int
    """Its position in the snapshot (at equal priority the later one goes first)."""
    tokens: int = 0


class DroppedTool(_DecisionBase):
    """A tool schema left out of the request (deferred disclosure or budget pressure)."""

    kind: Literal["dropped-tool"] = "dropped-tool"
    tool_name: str
    tokens: int = 0


class Trimmed(_DecisionBase):
    """An old tool body shortened to a preview plus a read-back hint (R-POL-2)."""

    kind: Literal["trimmed"] = "trimmed"
    block_index: int
    tool_name: str | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    artifact_path: str | None = None


class Reduced(_DecisionBase):
    """A tool result reduced by a category rule of §8 (summary, stale, superseded, repeat…)."""

    kind: Literal["reduced"] = "reduced"
    block_index: int
    tool_name: str | None = None
    category: str
    rule: str
    action: str
    """The reduction engine's action: reduced, stale, superseded, repeat or externalized."""
    age: int | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    artifact_path: str | None = None


class Microcompacted(_DecisionBase):
    """Old tool results cleared in place, as the recorded agent clears them (Claude Code's
    microcompaction): their content became ``[Old tool result content cleared]`` in the durable
    history, so every later request carries the placeholder."""

    kind: Literal["microcompacted"] = "microcompacted"
    source: Literal["recorded", "rule"]
    """``recorded``: the transcript's ``microcompact_boundary`` at this step, its ids as listed;
    ``rule``: the documented rule, for a version that cleared without recording it."""
    call_ids: tuple[str, ...] = ()
    """The calls whose results were cleared at this step."""
    missing_ids: tuple[str, ...] = ()
    """Listed ids whose result was not in this replay's history (a compaction archived it)."""
    estimate_saved: int = 0
    """The cleared results as the agent estimates them (characters / 4)."""
    estimate_left: int = 0
    """The clearable results left, estimated the same way."""
    tokens_before: int = 0
    """The local count of the messages that held the results, before."""
    tokens_after: int = 0
    """The same after."""
    agent_tokens_saved: int | None = None
    """What the agent recorded it saved (``tokensSaved``), when it recorded it."""
    agent_pre_tokens: int | None = None
    """The agent's estimate of the clearable results before (``preTokens``), when recorded."""
    message_deltas: tuple[tuple[int, int], ...] = ()
    """``(session message index, local tokens after − before)`` of each durable message changed
    (the replay takes them off its count of the agent's request too)."""


class CompactionPlan(_DecisionBase):
    """The compaction plan: why it was entered and where the cut was placed."""

    kind: Literal["compaction-plan"] = "compaction-plan"
    trigger: str
    request_tokens: int
    pressure_line: int
    cut_index: int | None = None
    archived_messages: int = 0
    kept_messages: int = 0


class CompactionCandidate(_DecisionBase):
    """One summary attempt and the request size it would give."""

    kind: Literal["compaction-candidate"] = "compaction-candidate"
    attempt: int
    cut_index: int | None = None
    summary_tokens: int = 0
    tokens_after: int = 0


class CompactionRejected(_DecisionBase):
    """A candidate that was not committed (too large, not smaller, error, timeout)."""

    kind: Literal["compaction-rejected"] = "compaction-rejected"
    attempt: int
    tokens_after: int | None = None
    summary_usage: Usage | None = None
    """Provider usage the summary call reported although its summary was not applied (counted
    in ``RunUsage.compaction``)."""


class CompactionApplied(_DecisionBase):
    """The committed compaction: the durable history now starts with a checkpoint."""

    kind: Literal["compaction-applied"] = "compaction-applied"
    cut_index: int
    archive_path: str | None = None
    checkpoint_tokens: int = 0
    tokens_before: int = 0
    """The untrimmed durable history as a whole request (what the engine compacted and tested
    against the pressure line), before the commit; the plan's ``request_tokens``."""
    tokens_after: int = 0
    """The same after the commit; the candidate's ``tokens_after``."""
    sent_tokens_before: int | None = None
    """This request as sent (after this step's fold and trim), whole-request basis, before the
    commit: the value a ``calibrated_local`` trigger compared (None in older records)."""
    sent_tokens_after: int | None = None
    """This request as sent after the commit: the step's ``whole_request_tokens``."""


class PressureNotice(_DecisionBase):
    """A pressure line reached for the first time in the window (R-CMP-11): the durable notice
    added to the history, or why none was injected (request-side notices need ``model_driven``)."""

    kind: Literal["pressure-notice"] = "pressure-notice"
    notice: Literal["manual", "threshold", "grace", "reminder"]
    line: int | None
    """The reminder line or the threshold (pressure) line that was reached."""
    reading_tokens: int
    """The reading that reached it (provider usage, or the replay's own estimate)."""
    basis: str
    delivered: bool
    """True when the notice message was added to the durable history and this request."""
    text: str = ""
    tokens: int = 0


class FinalSelection(_DecisionBase):
    """What the final request holds."""

    kind: Literal["final-selection"] = "final-selection"
    message_count: int
    tool_names: tuple[str, ...] = ()
    contribution_keys: tuple[str, ...] = ()
    input_tokens: int = 0


Decision = Annotated[
    KeptRequired | KeptRecent | FoldedRepeat | DroppedOptional | DroppedTool | Trimmed | Reduced | Microcompacted | CompactionPlan | CompactionCandidate | CompactionRejected | CompactionApplied | PressureNotice | FinalSelection,
    Field(discriminator="kind"),
]


# --------------------------------------------------------------------------------------------
# Stages, the final request, the preparation


class StageRecord(_Frozen):
    """One stage of one preparation (R-PREP-2, R-PREP-3)."""

    name: StageName
    status: StageStatus
    before_input_tokens: int
    """Whole-request estimate when the stage started (never a per-block cost, R-TOK-2): the local
    tokenizer's count of the replayed messages, tool schemas and framing, without calibration or
    the unrecorded overhead (``ContextPreparation.whole_request_tokens`` has both; compaction
    decisions use that whole-request basis)."""
    after_input_tokens: int
    """Whole-request estimate when the stage ended (same basis as ``before_input_tokens``)."""
    decisions: tuple[Decision, ...] = ()
    note: str = ""
    """Why a stage was skipped or what it did, in plain words."""


class MessageMark(_Frozen):
    """What happened to one message of the final request (for the marked rendering)."""

    origin: Literal["context", "contribution", "history", "checkpoint", "notice"]
    history_index: int | None = None
    """Index in the durable history this message comes from (None for context/contributions)."""
    key: str | None = None
    """Contribution key or context position."""
    marks: tuple[MarkKind, ...] = ()


class Pieces(Protocol):
    """Strings fed to a hash joined by their separator, the first ``count`` of them (computed
    when first fed)."""

    def feed(self, sha: Any, count: int, /) -> None: ...


class LeadingPieces(Protocol):
    """Strings a hash begins with (after a header), joined by their separator: a SHA-256 fed
    the header and the first ``count`` of them."""

    def hashed(self, header: bytes, count: int, /) -> Any: ...


class PreparedRequest(_Frozen):
    """The request as it would be sent, with per-message marks; ``ref`` is its content hash."""

    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...] = ()
    marks: tuple[MessageMark, ...] = ()
    """One mark per message, aligned with ``messages``."""
    dropped: tuple[str, ...] = ()
    """Keys of contributions and names of tools that were dropped (not in ``messages``/``tools``)."""

    _ref: str | None = PrivateAttr(default=None)
    _pieces: tuple[Pieces, LeadingPieces, int] | None = PrivateAttr(default=None)
    _previous: tuple[tuple[Message, ...], tuple[MessageMark, ...], int] | None = PrivateAttr(
        default=None)

    @property
    def ref(self) -> str:
        """Content hash of this request (the reference the workbench's evidence store files it
        under; computed once when first read, from the pieces the pipeline handed over when it
        has them). A replay that stores no request never hashes one: the hash covers the whole
        request, so computing it at every step would cost steps × messages."""
        if self._ref is None:
            pieces = self._pieces
            self._ref = (request_ref(self) if pieces is None else request_ref_fed(
                pieces[0], pieces[1], pieces[2], self.tools, self.dropped))
            self._pieces = None
        return self._ref

    def with_pieces(self, message_hashes: Pieces, mark_texts: LeadingPieces) -> PreparedRequest:
        """This request, with each message's content hash and each mark's canonical JSON (what
        :func:`request_ref_of` hashes) kept until :attr:`ref` is first read. The pieces may
        grow afterwards (a replay appends the next step's pieces): only the first as many as
        the request has messages are read (a replay's are computed only then)."""
        if self._ref is None:
            self._pieces = (message_hashes, mark_texts, len(self.messages))
        return self

    def with_previous(self, messages: tuple[Message, ...], marks: tuple[MessageMark, ...],
                      shared: int) -> PreparedRequest:
        """This request, knowing that its first ``shared`` messages and marks are the very
        objects leading ``messages`` and ``marks`` (the request made before it)."""
        self._previous = (messages, marks, shared)
        return self

    def shared_with(self, messages: tuple[Message, ...], marks: tuple[MessageMark, ...]
                    ) -> int | None:
        """How many leading messages and marks this request shares (as the same objects) with
        a request of those ``messages`` and ``marks``, when the request was made knowing it
        (:meth:`with_previous`); None when it does not know."""
        previous = self._previous
        if previous is not None and previous[0] is messages and previous[1] is marks:
            return previous[2]
        return None

    def __eq__(self, other: object) -> bool:  # the cached hash is not part of the value
        if not isinstance(other, PreparedRequest):
            return NotImplemented
        return (self.messages, self.tools, self.marks, self.dropped) == (
            other.messages, other.tools, other.marks, other.dropped)

    def __hash__(self) -> int:
        return hash(self.ref)

    def with_ref(self, ref: str) -> PreparedRequest:
        """This request, remembering its already computed content hash ``ref``."""
        self._ref = ref
        return self


def _mark_json(mark: MessageMark) -> dict[str, Any]:
    return mark.model_dump(mode="json")


def request_ref(request: PreparedRequest,
                message_hash: Callable[[Message], str] | None = None,
                mark_json: Callable[[MessageMark], object] | None = None) -> str:
    """Content hash of a prepared request: a hash over the per-message hashes, marks and tools.

    Hashing message by message lets a replay hash each durable message once (``message_hash`` may
    be a cache) instead of re-serialising the whole history at every step.
    """
    digest = message_hash or content_hash
    dump = mark_json or _mark_json
    return content_hash({"messages": [digest(m) for m in request.messages],
                         "marks": [dump(m) for m in request.marks],
                         "tools": list(request.tools), "dropped": list(request.dropped)})


def request_ref_fed(message_hashes: Pieces, mark_texts: LeadingPieces, count: int,
                    tools: Sequence[dict[str, Any]], dropped: Sequence[str]) -> str:
    """:func:`request_ref_of` of the first ``count`` pieces, fed to the hash where they are kept
    (the very text :func:`request_ref_of` hashes, never joined into one string; the marks come
    first, so a hash state after them carries over to the next request)."""
    sha = mark_texts.hashed(f'{{"dropped":{canonical_json(list(dropped))},"marks":['.encode(),
                            count)
    if count:
        sha.update(b'],"messages":["')
        message_hashes.feed(sha, count)
        sha.update(b'"]')
    else:
        sha.update(b'],"messages":[]')
    sha.update(f',"tools":{canonical_json(list(tools))}}}'.encode())
    return f"{ALGORITHM}:{sha.hexdigest()}"


def request_ref_of(message_hashes: Sequence[str], mark_texts: Sequence[str],
                   tools: Sequence[dict[str, Any]], dropped: Sequence[str]) -> str:
    """:func:`request_ref` from parts already serialised: each message's hash and each mark's
    canonical JSON (cached per message/mark by a replay), joined into the very text
    :func:`canonical_json` would produce for the whole request (sorted keys, no spaces)."""
    hashes = '["' + '","'.join(message_hashes) + '"]' if message_hashes else "[]"  # hex: no escaping
    text = "".join(('{"dropped":', canonical_json(list(dropped)), ',"marks":[', ",".join(mark_texts),
                    '],"messages":', hashes, ',"tools":', canonical_json(list(tools)), "}"))
    return text_hash(text)


class PreparationFailure(_Frozen):
    """Why a preparation did not become ready."""

    stage: StageName | None
    message: str
    kind: FailureKind = "error"
    error_type: str = ""
    """The exception class that was raised, e.g. ``SummariserError``."""


class ContextPreparation(_Frozen):
    """Everything one before-model step decided (R-PREP-1). Never part of a checkpoint."""

    schema_version: int = RECORD_SCHEMA_VERSION
    preparation_id: str = ""
    """Content hash of the record itself (computed by :meth:`with_id`)."""
    configuration_snapshot_id: str
    run_id: str
    session_id: str
    activation: str
    """The agent activation that asked for the model step; replays use ``"replay"``."""
    step_index: int
    """Which assistant response (0-based) this request produced."""
    response_message_index: int
    """Index of that assistant response in the recorded session."""
    input_budget: int
    pressure_line: int
    reminder_line: int | None = None
    stages: tuple[StageRecord, ...] = ()
    final_tools: tuple[str, ...] = ()
    final_contribution_keys: tuple[str, ...] = ()
    protected_sources: tuple[str, ...] = ()
    """Required contributions, context positions and anchors no stage may remove."""
    final_input_tokens: int = 0
    final_request_ref: str | None = None
    message_count: int = 0
    compaction_applied: bool = False
    provider_prompt_tokens: int | None = None
    """Prompt tokens the provider reported for this response (or the frozen ``≈`` estimate)."""
    provider_usage_kind: UsageKind = "missing"
    """``trusted`` provider usage, ``estimated`` (a frozen ``≈`` estimate, R-TOK-4) or missing."""
    provider_usage_note: str | None = None
    """How the provider's figures were corrected (a relay that counted cache reads wrongly,
    R-TOK-3); None when they were used as reported."""
    phase: Phase = "ready"
    error: PreparationFailure | None = None
    trigger_tokens: int | None = None
    """The whole-request value the compaction trigger compared with the threshold line (None:
    automatic compaction disabled, or no reading yet); see :attr:`trigger_basis`."""
    trigger_basis: TriggerBasis = "none"
    """``provider`` (the provider's prompt + output of the previous response, while the replayed
    request is the recorded one), ``provider_estimate`` (its frozen ``≈`` byte estimate),
    ``calibrated_local`` (calibrated local estimate + unrecorded overhead), ``disabled`` or
    ``none``."""
    unrecorded_overhead_tokens: int = 0
    """The unrecorded overhead (system prompt, tool schemas, framing) carried in this step's
    whole-request figures; measured at :attr:`overhead_measured_at` or set by the configuration."""
    overhead_measured_at: int | None = None
    """Step whose response measured the overhead (None: not measured yet, or configured)."""
    calibration_ratio: float = 1.0
    """Provider tokens per local token known before this step (1.0 until a sample)."""
    whole_request_tokens: int | None = None
    """The final request on the whole-request basis: ``round(calibration_ratio ×
    final_input_tokens) + unrecorded_overhead_tokens``; for a failed step, the request as it
    stood when the stage failed (None when cancelled). Compare this, not
    ``final_input_tokens`` (the raw local estimate of the replayed messages), with the lines."""
    recorded_request_tokens: int | None = None
    """Raw local estimate of the request the recorded agent sent at this step (its recorded
    history, recorded compactions applied, no engine reduction): like-for-like with the
    provider's count once calibrated (``recorded_request_whole``)."""
    recorded_request_whole: int | None = None
    """:attr:`recorded_request_tokens` calibrated plus the overhead of the recorded window."""

    def with_id(self) -> ContextPreparation:
        """A copy whose ``preparation_id`` is the hash of everything else but the host's evidence
        reference ``final_request_ref`` (set after the record exists, it never changes the id)."""
        body = self.model_dump(mode="json", exclude={"preparation_id", "final_request_ref"})
        return self.evolve(**UNCHANGED, preparation_id=content_hash(body))

    def stage(self, name: StageName) -> StageRecord | None:
        return next((s for s in self.stages if s.name == name), None)
