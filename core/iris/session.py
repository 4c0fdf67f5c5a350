"""The session model: the recorded conversation every importer produces and every stage reads.

A session is an ordered tuple of messages (R-SES-1) with provider usage on assistant responses
(R-SES-2), model switches, recorded compaction events and optional per-step dynamic context
snapshots (R-SES-3). Everything is a frozen pydantic model; derived views (request batches, tool
groups, call/result pairing) are computed once by :func:`index_session` and cached per session.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import Field

from .frozen import FrozenModel

__all__ = [
    "SCHEMA_VERSION",
    "ContentBlock",
    "ImageBlock",
    "Message",
    "ModelLimits",
    "ModelSwitch",
    "RecordedCompaction",
    "RecordedContribution",
    "RecordedMicrocompaction",
    "RequestBatch",
    "ResultLocation",
    "Role",
    "Session",
    "SessionHeader",
    "SessionIndex",
    "StepSnapshot",
    "SubagentCall",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "ToolDialect",
    "ToolGroup",
    "ToolResultBlock",
    "Usage",
    "block_text",
    "index_session",
    "message_text",
]

#: Native format schema version. 1: first version (header, message, model_switch, compaction,
#: context_snapshot events).
SCHEMA_VERSION = 1

Role = Literal["system", "user", "assistant", "tool"]

#: Whose tool names a transcript's calls use: Claude Code's (``Read``, ``Bash``…), Codex CLI's
#: (``exec_command``, ``apply_patch``…) or the OpenAI chat agents' (``bash``, ``read_file``,
#: ``str_replace_editor``…). The importer that reads a transcript states it
#: (:attr:`SessionHeader.tool_dialect`).
ToolDialect = Literal["claude", "codex", "chat"]


_Frozen = FrozenModel


# --------------------------------------------------------------------------------------------
# Content blocks


class TextBlock(_Frozen):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(_Frozen):
    """Model reasoning that is sent back to the model (Anthropic thinking, Codex reasoning summary,
    DeepSeek reasoning_content)."""

    type: Literal["thinking"] = "thinking"
    text: str
    signature: str | None = None
    encrypted_chars: int | None = None
    """Characters of the provider's encrypted reasoning that go back with this block (Codex
    ``encrypted_content``; for a redacted rollout the length its placeholder states). Codex counts
    it when it decides to compact (docs/profiles.md); None: none recorded."""


class ToolCallBlock(_Frozen):
    """One tool call of an assistant response."""

    type: Literal["tool_call"] = "tool_call"
    id: str
    """The call id that links the call to its result."""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Parsed JSON arguments. Arguments that were not a JSON object are kept as ``{"_raw": text}``."""


class ToolResultBlock(_Frozen):
    """The result of one tool call."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str
    text: str
    is_error: bool = False
    artifact_path: str | None = None
    """Where the full native output lives when the text is a preview (tool-outputs/...)."""
    image_refs: tuple[str, ...] = ()
    reducible: bool = True
    """False marks a result that must never be trimmed or reduced (R-POL-2)."""
    file_lines: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """A file read's whole line count when it ran, as the agent recorded it (Claude Code
    ``toolUseResult.file.totalLines``); None when not recorded. Left out of the serialised form
    when None."""


class ImageBlock(_Frozen):
    """An image: its name plus the original and model-facing references."""

    type: Literal["image"] = "image"
    name: str
    original_ref: str | None = None
    model_ref: str | None = None


ContentBlock = Annotated[
    TextBlock | ThinkingBlock | ToolCallBlock | ToolResultBlock | ImageBlock,
    Field(discriminator="type"),
]


def block_text(block: ContentBlock) -> str:
    """The text a block contributes to a request (what the estimator and search see)."""
    if isinstance(block, (TextBlock, ThinkingBlock, ToolResultBlock)):
        return block.text
    if isinstance(block, ToolCallBlock):
        return f"{block.name} {json.dumps(block.arguments, ensure_ascii=False, sort_keys=True)}"
    return f"[image {block.name} original={block.original_ref or '-'} model={block.model_ref or '-'}]"


# --------------------------------------------------------------------------------------------
# Usage and limits


class Usage(_Frozen):
    """Provider-reported usage of one assistant response, raw fields kept (R-SES-2, R-TOK-3)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_in_input: bool = False
    """True for OpenAI-style counts, where ``input_tokens`` already includes cached reads."""
    cache_write_in_input: bool = False
    """True where ``input_tokens`` already includes cache writes."""
    model: str | None = None
    raw: dict[str, Any] | None = None
    """The provider's usage object exactly as recorded."""
    cost_usd: float | None = Field(default=None, exclude_if=lambda v: v is None)
    """What the agent recorded this response cost, in USD (mini-swe-agent's ``extra.cost``, an
    OpenTelemetry cost attribute); None when the transcript records no cost. Left out of the
    serialised form when None, so content hashes of other usage do not change."""

    @property
    def prompt_tokens(self) -> int:
        """The normalised prompt size of the request (R-TOK-3).

        Anthropic reports only the uncached part in ``input_tokens``: the prompt is input + cache
        reads + cache writes. OpenAI-style counts already include cached tokens. A record flagged
        "cache included" whose input is smaller than its cache read cannot include it (a relay
        that counted wrongly): its prompt is input + cache read (:attr:`relay_miscount`).
        """
        total = self.input_tokens
        if not self.cache_read_in_input or self.relay_miscount:
            total += self.cache_read_tokens
        if not self.cache_write_in_input:
            total += self.cache_write_tokens
        return total

    @property
    def relay_miscount(self) -> bool:
        """Flagged "cache included" but ``input_tokens`` < ``cache_read_tokens`` (R-TOK-3)."""
        return self.cache_read_in_input and self.input_tokens < self.cache_read_tokens

    @property
    def usage_note(self) -> str | None:
        """How the prompt size was corrected, when it was (None otherwise)."""
        if not self.relay_miscount:
            return None
        return (f"input {self.input_tokens:,} < cache read {self.cache_read_tokens:,} although "
                f"flagged cache-included: counted input + cache read = {self.prompt_tokens:,}")

    @property
    def is_trusted(self) -> bool:
        """Usage of 0 is treated as missing (R-TOK-4)."""
        return self.prompt_tokens > 0


class ModelLimits(_Frozen):
    """A model's token limits (any may be unknown)."""

    context: int | None = None
    input: int | None = None
    output: int | None = None


# --------------------------------------------------------------------------------------------
# Messages and events


class Message(_Frozen):
    """One message of the conversation."""

    role: Role
    content: tuple[ContentBlock, ...] = ()
    id: str | None = None
    """The source's own id (Claude Code message.id / uuid, Codex call id...), if any."""
    usage: Usage | None = None
    """Provider usage of this assistant response, when recorded."""
    model: str | None = None
    timestamp: datetime | None = None
    is_compaction_summary: bool = False
    """A summary written by an earlier compaction (Claude Code isCompactSummary, Codex compacted)."""
    synthetic: bool = False
    """Injected context rather than something a person typed (system reminders, developer text)."""
    compaction_provided: bool = Field(default=False, exclude_if=lambda v: not v)
    """Context that a recorded compaction put in place (Codex ``compacted.replacement_history``
    and the history a local Codex compaction rebuilds), not something the model or a person
    produced at that point. An assistant message marked so is a copy kept in the new context,
    not a model response: :func:`index_session` makes no request batch (replay step) of it.
    The as-recorded baseline keeps these messages as the context after the compaction; a replay
    with its own compaction policy knows them by this flag. Left out of the serialised form
    when False, so content hashes of ordinary messages do not change."""

    @property
    def tool_calls(self) -> tuple[ToolCallBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolCallBlock))

    @property
    def tool_results(self) -> tuple[ToolResultBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolResultBlock))

    @property
    def text(self) -> str:
        return message_text(self)


def message_text(message: Message) -> str:
    """All text of a message, blocks joined by newlines."""
    return "\n".join(block_text(b) for b in message.content)


class SessionHeader(_Frozen):
    """The first event of a native session file."""

    session_id: str
    title: str = ""
    source_format: str = "native"
    model: str | None = None
    limits: ModelLimits | None = None
    workspace_root: str | None = None
    created_at: datetime | None = None
    schema_version: int = SCHEMA_VERSION
    parent_id: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The session this one belongs to: a sub-agent's (or a recorded compaction request's) parent;
    None for a main transcript. Left out of the serialised form when None."""
    agent_version: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The version of the agent that wrote the transcript (Claude Code ``version``, Codex
    ``cli_version``): the agent profiles pick their rule by it (docs/profiles.md). None when the
    transcript does not record it; left out of the serialised form then."""
    agent_id: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The agent id of a sub-agent transcript (Claude Code ``agentId``: ``a2898e3``, and
    ``acompact-e1f845`` for the agent's recorded compaction request); None otherwise."""
    continues: bool | None = Field(default=None, exclude_if=lambda v: v is None)
    """True: the file continues a conversation whose start it does not hold (Claude Code: its
    first line follows a ``parentUuid`` that is not in the file, as after ``claude --resume``);
    False: the file holds its conversation from the start (the first line has no parent); None:
    the format does not say. Left out of the serialised form when None."""
    tool_dialect: ToolDialect | None = Field(default=None, exclude_if=lambda v: v is None)
    """Whose tool names the transcript's calls use (``claude``: Read/Bash…, ``codex``:
    exec_command/apply_patch…, ``chat``: the OpenAI chat agents' bash/read_file/str_replace_editor…),
    as the importer that read it states; reduction reads the tool kinds by it. None: not stated
    (the Claude Code names apply); left out of the serialised form then."""

    @property
    def is_compaction_request(self) -> bool:
        """True for the transcript of an agent's own compaction call (Claude Code
        ``agent-acompact-*``): its prompt is the parent's whole conversation, so the part of
        the prompt the transcript does not hold is the compaction's input, not overhead."""
        return bool(self.parent_id and self.agent_id and self.agent_id.startswith("acompact-"))


class ModelSwitch(_Frozen):
    """The model changed before the message at ``at_message``."""

    at_message: int
    model: str
    limits: ModelLimits | None = None


class RecordedCompaction(_Frozen):
    """A compaction the recorded agent performed (not one the engine replays)."""

    at_message: int
    """Index of the first message of the new context (usually the summary message)."""
    trigger: str = "auto"
    pre_tokens: int | None = None
    summary: str | None = None
    source: str = ""
    """Where it came from, e.g. ``claude_code:compact_boundary`` or ``codex:compacted``."""
    request_usage: Usage | None = Field(default=None, exclude_if=lambda v: v is None)
    """The usage of the agent's own summary call when the transcript records it (Claude Code's
    ``agent-acompact-*`` file): its prompt tokens are the compaction's real input, its output the
    summary's cost. None when the request is not recorded."""
    request_session_id: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The id of the recorded compaction request's own transcript (a child session), if any."""


class RecordedMicrocompaction(_Frozen):
    """Old tool results the recorded agent cleared in place, without a summary (Claude Code's
    ``microcompact_boundary``: their content became ``[Old tool result content cleared]``)."""

    at_message: int
    """Index of the first message after the clearing (the next request is the first without
    those results' content)."""
    call_ids: tuple[str, ...] = ()
    """The tool calls whose results were cleared (``compactedToolIds``)."""
    trigger: str = "auto"
    pre_tokens: int | None = None
    """The agent's count before, as it recorded it (``preTokens``: Claude Code's estimate of the
    clearable tool results, not of the whole request)."""
    tokens_saved: int | None = None
    """The agent's estimate of what the clearing saved (``tokensSaved``)."""
    cleared_attachments: tuple[str, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Attachment lines cleared with them (``clearedAttachmentUUIDs``)."""
    source: str = ""
    """Where it came from, e.g. ``claude_code:microcompact_boundary``."""


class RecordedContribution(_Frozen):
    """One dynamic context contribution as recorded in a session file."""

    key: str
    text: str
    required: bool = True
    priority: int = 100


class SubagentCall(_Frozen):
    """A tool call of this session that ran a sub-agent (Claude Code ``Task``/``Agent``)."""

    call_id: str
    agent_id: str
    session_id: str
    """The sub-agent's own session id (``<parent id>/agent-<agent id>`` for Claude Code)."""
    recorded_tokens: int | None = None
    """What the parent recorded for the sub-agent's last call (prompt + output), if it did."""
    recorded_tool_calls: int | None = None
    """How many tools the parent recorded the sub-agent used, if it did."""


class StepSnapshot(_Frozen):
    """The dynamic context snapshot recorded for one step (assistant response index)."""

    step_index: int
    contributions: tuple[RecordedContribution, ...] = ()


class Session(_Frozen):
    """A whole recorded session."""

    header: SessionHeader
    messages: tuple[Message, ...] = ()
    model_switches: tuple[ModelSwitch, ...] = ()
    compactions: tuple[RecordedCompaction, ...] = ()
    context_snapshots: tuple[StepSnapshot, ...] = ()
    subagents: tuple[SubagentCall, ...] = Field(default=(), exclude_if=lambda v: not v)
    """The tool calls that ran a sub-agent, each with the sub-agent's session id."""
    microcompactions: tuple[RecordedMicrocompaction, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Old tool results the recorded agent cleared in place (left out of the serialised form
    when there are none)."""

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Session:
        """A copy whose cached ``index`` is dropped, so a copy with new messages is re-indexed."""
        copy = super().model_copy(update=update, deep=deep)
        vars(copy).pop("index", None)
        return copy

    @cached_property
    def index(self) -> SessionIndex:
        """Derived views, computed once per session object."""
        return index_session(self.messages)

    def _facts(self) -> dict[str, str]:
        """What a session is, in a few short strings (its repr and notebook display)."""
        h, roles = self.header, dict[str, int]()
        for m in self.messages:
            roles[m.role] = roles.get(m.role, 0) + 1
        return {"id": h.session_id, "title": h.title, "format": h.source_format,
                "model": h.model or "not recorded",
                "messages": f"{len(self.messages):,} ("
                            + ", ".join(f"{n:,} {role}" for role, n in roles.items()) + ")",
                "recorded compactions": str(len(self.compactions)),
                "model switches": str(len(self.model_switches)),
                "created": h.created_at.isoformat() if h.created_at else "not recorded"}

    def __repr__(self) -> str:
        h = self.header
        title = f" {h.title[:60]!r}" if h.title else ""
        return (f"<Session {h.session_id!r}{title} ({h.source_format}): {len(self.messages):,} "
                f"messages, {len(self.compactions)} recorded compactions>")

    __str__ = __repr__

    def _repr_html_(self) -> str:
        """A short table of the session's facts (Jupyter); its text is escaped."""
        from html import escape

        rows = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td style='text-align:left'>"
                       f"{escape(v)}</td></tr>" for k, v in self._facts().items())
        return f"<table><caption style='text-align:left'><b>Session</b></caption>{rows}</table>"


# --------------------------------------------------------------------------------------------
# Derived views


class ResultLocation(_Frozen):
    """Where a tool result lives: content block ``block`` of message ``message``."""

    message: int
    block: int


class RequestBatch(_Frozen):
    """One main-model request batch: an assistant response, its calls and their results."""

    index: int
    assistant_message: int
    call_ids: tuple[str, ...] = ()


class ToolGroup(_Frozen):
    """A tool-calling assistant message with the results of its calls."""

    batch: int
    assistant_message: int
    call_ids: tuple[str, ...]
    results: tuple[ResultLocation, ...]
    closed: bool
    """True when every call has its result."""

    @property
    def last_message(self) -> int:
        return max([self.assistant_message, *(r.message for r in self.results)])


class SessionIndex(_Frozen):
    """Derived views of a message sequence."""

    batches: tuple[RequestBatch, ...]
    batch_of_message: tuple[int | None, ...]
    """Batch of each message: assistant messages their own; tool results their call's batch;
    other messages the batch of the latest assistant message before them (None before the first)."""
    calls: dict[str, ResultLocation]
    """Call id → location of the ToolCallBlock (message, block)."""
    results: dict[str, ResultLocation]
    """Call id → location of its ToolResultBlock (the first one, if repeated)."""
    orphan_results: tuple[ResultLocation, ...]
    """Results whose call id matches no call."""
    groups: tuple[ToolGroup, ...]

    @property
    def unanswered_calls(self) -> tuple[str, ...]:
        return tuple(cid for cid in self.calls if cid not in self.results)


def index_session(messages: tuple[Message, ...] | list[Message]) -> SessionIndex:
    """Compute request batches, call/result pairing and tool groups in one pass.

    Every assistant message is one model call, i.e. one batch, except copies a recorded
    compaction provided (``compaction_provided``): they belong to the batch before them."""
    batches: list[RequestBatch] = []
    batch_of: list[int | None] = []
    calls: dict[str, ResultLocation] = {}
    call_batch: dict[str, int] = {}
    results: dict[str, ResultLocation] = {}
    orphans: list[ResultLocation] = []
    current: int | None = None
    for mi, msg in enumerate(messages):
        if msg.role == "assistant" and msg.compaction_provided:
            for bi, block in enumerate(msg.content):  # kept calls still pair with their results
                if isinstance(block, ToolCallBlock):
                    calls.setdefault(block.id, ResultLocation(message=mi, block=bi))
                    if current is not None:
                        call_batch.setdefault(block.id, current)
            batch_of.append(current)
            continue
        if msg.role == "assistant":
            current = len(batches)
            ids: list[str] = []
            for bi, block in enumerate(msg.content):
                if isinstance(block, ToolCallBlock):
                    calls.setdefault(block.id, ResultLocation(message=mi, block=bi))
                    call_batch.setdefault(block.id, current)
                    ids.append(block.id)
            batches.append(RequestBatch(index=current, assistant_message=mi, call_ids=tuple(ids)))
            batch_of.append(current)
            continue
        own_batch: int | None = None
        for bi, block in enumerate(msg.content):
            if isinstance(block, ToolResultBlock):
                loc = ResultLocation(message=mi, block=bi)
                if block.call_id in calls:
                    results.setdefault(block.call_id, loc)
                    own_batch = call_batch.get(block.call_id) if own_batch is None else own_batch
                else:
                    orphans.append(loc)
        batch_of.append(own_batch if own_batch is not None else current)
    groups: list[ToolGroup] = []
    for batch in batches:
        if not batch.call_ids:
            continue
        locs = tuple(results[c] for c in batch.call_ids if c in results)
        groups.append(ToolGroup(batch=batch.index, assistant_message=batch.assistant_message,
                                call_ids=batch.call_ids, results=locs,
                                closed=len(locs) == len(batch.call_ids)))
    return SessionIndex(batches=tuple(batches), batch_of_message=tuple(batch_of), calls=calls,
                        results=results, orphan_results=tuple(orphans), groups=tuple(groups))
