"""OpenAI Codex CLI rollouts (``rollout-*.jsonl``) → :class:`Session` (R-SES-4).

Every line is ``{timestamp, type, payload}``. ``response_item`` lines are the model context;
``event_msg`` lines are telemetry, of which only ``token_count`` (usage), ``task_started`` (context
window) and ``user_message`` (marks a user turn as typed) matter; ``turn_context`` carries the
model; ``compacted`` is a recorded compaction.

**One model call = one assistant message.** Codex writes the items a call produced (reasoning,
assistant text, one or more ``function_call``/``custom_tool_call``) and then a ``token_count``
event. The importer opens an assistant message at the first assistant-side item and closes it at
the next new ``token_count`` (whose ``last_token_usage`` becomes its usage) or at the next input
item (user/developer message, tool output). Parallel calls therefore share one message, i.e. one
request batch. ``token_count`` events are de-duplicated by changes in ``total_token_usage``;
all-zero ``last_token_usage`` (seen around compactions) is ignored.

**Compaction keeps history.** The session shows what the model saw over time: messages before a
``compacted`` line stay; the replacement history is appended after them (copies of kept user turns
are marked synthetic), and :class:`RecordedCompaction` ``at_message`` points at its first message,
so ``messages[at_message:]`` is the context the model had after the compaction. Every message the
compaction provided is marked ``compaction_provided``: its assistant messages are copies of earlier
answers, not model calls, so they make no replay step and carry no usage, and ``responses`` counts
model calls only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError
from iris.frozen import UNCHANGED
from iris.session import (
    Message,
    ModelLimits,
    ModelSwitch,
    RecordedCompaction,
    Session,
    SessionHeader,
    TextBlock,
)

from . import codex_items as ci
from ._builder import MessageList
from ._common import (
    LINE_FAILURES,
    LineErrors,
    as_dict,
    as_int,
    as_str,
    iter_json_lines,
    opt_str,
    parse_time,
    short_id,
    shorten_title,
)

__all__ = ["load_codex"]


class _Rollout:
    """The importer's state while it reads one rollout."""

    def __init__(self, errors: LineErrors) -> None:
        self.errors = errors
        self.out = MessageList()
        self.open: int | None = None        # assistant message still receiving items
        self.awaiting: int | None = None    # assistant message waiting for its token_count
        self.last_total: Any = None
        self.last_prompt: int | None = None
        self.model: str | None = None
        self.first_model: str | None = None
        self.limits: ModelLimits | None = None
        self.first_limits: ModelLimits | None = None
        self.switches: list[ModelSwitch] = []
        self.compactions: list[RecordedCompaction] = []
        self.meta: dict[str, Any] = {}
        self.saw_user_event = False
        self.unconfirmed_user: int | None = None
        self.typed: set[int] = set()
        self.cwd: str | None = None
        self.started = None
        self.meta_time = None               # the line time of the first session_meta
        self.last_time = None               # the latest line time read so far
        # compactions of the current task and whether it did anything else (a typed message, a
        # model call): a task that only compacted is the user's /compact
        self.task_compactions: list[int] | None = None
        self.task_worked = False

    # -- lines ------------------------------------------------------------------------------

    def line(self, lineno: int, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if not isinstance(kind, str):
            raise SessionFormatError("missing or non-string 'type'", field="type")
        payload = as_dict(data.get("payload"), "payload")
        when = parse_time(data.get("timestamp"))
        self.line_kind(kind, payload, lineno, when)
        if when is not None and (self.last_time is None or when > self.last_time):
            self.last_time = when

    def line_kind(self, kind: str, payload: dict[str, Any], lineno: int, when) -> None:
        if kind == "response_item":
            self.item(payload, lineno, when)
        elif kind == "event_msg":
            self.event(payload)
        elif kind == "turn_context":
            self.turn_context(payload)
        elif kind == "session_meta":
            self.session_meta(payload, lineno, when)
        elif kind == "compacted":
            self.compacted(payload, lineno, when)
        else:
            self.errors.warn(f"unknown line type {kind!r} ignored", line=lineno)

    def session_meta(self, payload: dict[str, Any], lineno: int, when) -> None:
        if self.meta and payload.get("id") is not None and payload.get("id") == self.meta.get("id"):
            # Codex Desktop writes the session's meta again on every resume, later in time; the
            # same meta at the time of the first (or earlier than the line before) is the file
            # appended to itself
            if when is None or when == self.meta_time or (self.last_time and when < self.last_time):
                raise SessionFormatError("the rollout's session_meta once more, not later than the "
                                         "lines before it (the file appended to itself?)",
                                         field="payload")
            return  # a resume: the session and its instructions are the ones already read
        if payload and payload == self.meta:  # the same session start twice: the file repeated
            raise SessionFormatError("the rollout's session_meta once more (the file appended to "
                                     "itself?)", field="payload")
        self.meta_time = when
        self.started = parse_time(payload.get("timestamp"), "payload.timestamp")
        opt_str(payload.get("id"), "payload.id")
        self.meta = payload
        cwd = opt_str(payload.get("cwd"), "payload.cwd")
        self.cwd = self.cwd or cwd
        instructions = payload.get("base_instructions")
        text = instructions.get("text") if isinstance(instructions, dict) else payload.get("instructions")
        if isinstance(text, str) and text:
            self.out.add("system", [TextBlock(text=text)], id="base_instructions",
                         line=lineno)

    def turn_context(self, payload: dict[str, Any]) -> None:
        model = opt_str(payload.get("model"), "payload.model")
        cwd = opt_str(payload.get("cwd"), "payload.cwd")
        self.cwd = self.cwd or cwd
        if model is None or model == self.model:
            return
        if self.model is not None:
            self.switches.append(ModelSwitch(at_message=len(self.out), model=model, limits=self.limits))
        self.first_model = self.first_model or model
        self.model = model

    def event(self, payload: dict[str, Any]) -> None:
        kind = as_str(payload.get("type"), "payload.type")
        if kind == "token_count":
            self.token_count(payload.get("info"))
        elif kind == "task_started":
            self.window(payload.get("model_context_window"), "payload.model_context_window")
            self.task_compactions, self.task_worked = [], False
        elif kind in ("task_complete", "turn_aborted"):
            self.end_task()
        elif kind == "user_message":
            self.saw_user_event = True
            self.task_worked = True
            if self.unconfirmed_user is not None:
                self.typed.add(self.unconfirmed_user)
                self.unconfirmed_user = None

    def window(self, size: Any, field: str) -> None:
        size = as_int(size, field)  # a wrong type or an out-of-range count is this line's error
        if size > 0 and (self.limits is None or self.limits.context != size):
            self.limits = ModelLimits(context=size)
            self.first_limits = self.first_limits or self.limits

    def token_count(self, info: Any) -> None:
        if info is None:
            return  # info is null before the first call
        info = as_dict(info, "payload.info")
        total = info.get("total_token_usage")
        if total == self.last_total:
            return  # every call is logged twice
        last = as_dict(info.get("last_token_usage"), "payload.info.last_token_usage")
        usage = ci.codex_usage(last, self.model)
        self.last_total = total
        self.window(info.get("model_context_window"), "payload.info.model_context_window")
        if usage.input_tokens == 0 and usage.output_tokens == 0:
            return  # all-zero usage around a compaction is noise
        self.last_prompt = usage.prompt_tokens
        self.task_worked = True
        if self.awaiting is not None and self.out.entries[self.awaiting].usage is None:
            self.out.entries[self.awaiting].usage = usage
        self.awaiting = None
        self.open = None

    # -- response items ---------------------------------------------------------------------

    def item(self, payload: dict[str, Any], lineno: int, when) -> None:
        self.apply(ci.convert_item(payload), payload, lineno, when)

    def apply(self, converted: ci.Converted, payload: dict[str, Any], lineno: int, when,
              replay: bool = False) -> None:
        if converted[0] is None:
            if converted[1] is None:
                self.errors.warn(f"response item {payload.get('type')!r} ignored", line=lineno)
            return
        role, blocks, synthetic = converted
        if role == "assistant" and replay:  # a kept copy, not a model call
            self.out.add("assistant", blocks, model=self.model, timestamp=when, provided=True,
                         line=lineno)
            return
        if role == "assistant":
            if self.open is None:
                self.open = self.out.add("assistant", blocks, model=self.model, timestamp=when,
                                         line=lineno)
                self.awaiting = self.open
            else:
                self.out.extend(self.open, blocks, lineno)
            return
        self.open = None
        if role == "tool":
            self.out.add("tool", blocks, timestamp=when, provided=replay, line=lineno)
            return
        summary = payload.get("type") == "compaction"  # the remote (encrypted) summary
        index = self.out.add(role, blocks, timestamp=when, synthetic=synthetic or replay,
                             summary=summary, provided=replay, line=lineno)
        if role == "user" and not synthetic and not replay:
            self.unconfirmed_user = index

    def compacted(self, payload: dict[str, Any], lineno: int, when) -> None:
        summary = payload.get("message")
        summary = summary if isinstance(summary, str) and summary else None
        history = payload.get("replacement_history")
        at = len(self.out)
        if history is not None:
            items = ci.as_items(history)
            converted = [ci.convert_item(item) for item in items]  # all or nothing for this line
            self.open = self.awaiting = None
            for item, conv in zip(items, converted):
                self.apply(conv, item, lineno, when, replay=True)
            self.open = self.awaiting = None
            source = "codex:compacted.replacement_history"
        else:
            self.open = self.awaiting = None
            self.legacy_history(summary or "", lineno, when)
            source = "codex:compacted"
        if self.task_compactions is not None:
            self.task_compactions.append(len(self.compactions))
        self.compactions.append(RecordedCompaction(at_message=at, trigger="auto",
                                                   pre_tokens=self.last_prompt, summary=summary,
                                                   source=source))

    def end_task(self) -> None:
        """A task that compacted and did nothing else (no typed message, no model call) was a
        manual ``/compact``: codex-rs runs it as a task of its own (``Op::Compact`` spawns a
        ``CompactTask``), while an automatic compaction runs inside a turn, before its user
        message is recorded (pre-turn) or between its model calls (mid-turn)."""
        if self.task_compactions and not self.task_worked:
            for i in self.task_compactions:
                self.compactions[i] = self.compactions[i].evolve(**UNCHANGED, trigger="manual")
        self.task_compactions, self.task_worked = None, False

    def legacy_history(self, summary: str, lineno: int, when) -> None:
        """Local compaction (no replacement history): initial context + user turns + summary.
        Follows codex-rs ``compact.rs`` as FORMATS.md describes it (no sample verifies it)."""
        entries = list(self.out.entries)
        first_typed = min(self.typed, default=len(entries))
        for i, entry in enumerate(entries):
            initial = i < first_typed and entry.synthetic
            if initial or i in self.typed:
                self.out.add(entry.role, list(entry.blocks), timestamp=when, synthetic=True,
                             provided=True, line=lineno)
        self.out.add("user", [TextBlock(text=summary)], timestamp=when, synthetic=True, summary=True,
                     provided=True, line=lineno)

    # -- result -----------------------------------------------------------------------------

    def session(self, content_hash: str | None) -> Session:
        if self.saw_user_event:
            # A user item Codex did not echo as an event_msg.user_message was injected context.
            for i, entry in enumerate(self.out.entries):
                if entry.role == "user" and i not in self.typed and not entry.summary:
                    entry.synthetic = True
        self.out.check_orphans(self.errors)
        self.out.check_repeated_calls(self.errors, "payload.call_id")
        messages = self.out.freeze()
        sid = self.meta.get("id") if isinstance(self.meta.get("id"), str) else None
        header = SessionHeader(
            session_id=sid or short_id("codex", content_hash or "sha256:unknown"),
            title=_title(messages) or "Codex session", source_format="codex",
            model=self.first_model, limits=self.first_limits, workspace_root=self.cwd,
            created_at=self.started, agent_version=_cli_version(self.meta))
        return Session(header=header, messages=tuple(messages), model_switches=tuple(self.switches),
                       compactions=tuple(self.compactions))


def _cli_version(meta: dict[str, Any]) -> str | None:
    """The rollout's ``session_meta.cli_version`` (the agent profiles are keyed by it)."""
    version = meta.get("cli_version")
    return version if isinstance(version, str) and version else None


def _title(messages: list[Message]) -> str:
    for msg in messages:
        if msg.role == "user" and not msg.synthetic and msg.text.strip():
            return shorten_title(msg.text)
    return ""


def load_codex(path: str | Path, *, lenient: bool = False,
               skipped: list[SessionFormatError] | None = None,
               warnings: list[SessionFormatError] | None = None,
               content_hash: str | None = None) -> Session:
    """Import a Codex CLI rollout (see the module docstring for the rules)."""
    path = Path(path)
    errors = LineErrors(path, lenient, skipped, warnings)
    rollout = _Rollout(errors)
    for lineno, data in iter_json_lines(path, errors):
        try:
            rollout.line(lineno, data)
        except LINE_FAILURES as exc:  # what ``errors.line`` does, without a context per line
            errors.failed(exc, lineno)
    if not rollout.out.entries:
        raise errors.nothing_imported("message")
    return rollout.session(content_hash)
