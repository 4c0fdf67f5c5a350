"""Claude Code transcripts (``~/.claude/projects/*/*.jsonl``) → :class:`Session` (R-SES-4).

Claude Code logs a tree, not a list: every line points at its parent through ``parentUuid``, one
API response is split over several lines (one content block each, sharing ``message.id``), parallel
tool results fork off the assistant line holding their call, and a rewind leaves an abandoned
branch behind. The live conversation is rebuilt as FORMATS.md describes:

1. one streaming pass turns every line into a small :class:`Line` (the content already converted
   to blocks; ``toolUseResult`` (but a read's ``file.totalLines``) and progress payloads are
   dropped, so memory holds ~one copy);
2. ``claude_tree.place`` finds the live branch: the chain back from the last user/assistant line
   (following ``logicalParentUuid`` across a compact boundary; a parent missing from the file
   continues at the preceding line, so nothing is dropped), plus every assistant line of a
   response on that chain, plus every ``tool_result`` line answering a call on it; abandoned
   branches and unplaced lines are reported (an unplaced response is an error in strict mode);
3. the live lines are emitted in file order; assistant lines are grouped by ``message.id`` and
   the group keeps the usage of its last line (earlier lines carry placeholder output counts).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from iris.errors import SessionFormatError
from iris.frozen import UNCHANGED
from iris.session import (
    Message,
    ModelSwitch,
    RecordedCompaction,
    RecordedMicrocompaction,
    Session,
    SessionHeader,
    SubagentCall,
)

from . import _builder as cb
from . import claude_agents as ca
from . import claude_blocks as cc
from ._common import (
    LINE_FAILURES,
    LineErrors,
    as_bool,
    as_dict,
    as_int,
    as_str,
    iter_json_lines,
    opt_str,
    parse_time,
    short_id,
    shorten_title,
)
from .claude_queue import QueuedMessages
from .claude_repeats import Repeats
from .claude_tree import CONVERSATION, Line, Placement, place

__all__ = ["load_claude_code", "load_claude_lines"]

_CONVERSATION = CONVERSATION

#: Line kinds Claude Code writes that hold no message of the conversation (docs/formats.md):
#: file backups for a rewind, a pull request's link, tool, hook and MCP progress, a turn's
#: duration, the stop hooks that ran. Compact boundaries are read; ``summary`` and
#: ``queue-operation`` lines have their own rules. Any other kind is left out with a note.
_NOT_MESSAGES = frozenset({"file-history-snapshot", "pr-link", "progress"})
_SYSTEM_SUBTYPES = frozenset({"compact_boundary", "microcompact_boundary", "stop_hook_summary",
                              "turn_duration"})


@dataclass
class _Meta:
    session_id: str | None = None
    cwd: str | None = None
    started: datetime | None = None
    summary_title: str | None = None
    agent_id: str | None = None
    """The ``agentId`` of a sub-agent transcript's lines."""
    version: str | None = None
    """The Claude Code ``version`` of the first conversation line that records one."""
    runs: dict[str, ca.AgentRun] = field(default_factory=dict)
    """Sub-agent runs the parent records, by the id of the tool call that started them."""
    lines: list[Line] = field(default_factory=list)
    queue: QueuedMessages = field(default_factory=QueuedMessages)
    """Messages typed while the agent worked (``queue-operation`` lines)."""
    unknown: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Line kinds the importer does not know: ``type`` (``type/subtype`` for a system line) →
    (lines, first line number)."""
    micro: list[tuple[int, RecordedMicrocompaction]] = field(default_factory=list)
    """``(line number, record)`` of the main side's ``microcompact_boundary`` lines, in file
    order; the record's ``at_message`` is set when the session is built."""


def load_claude_code(path: str | Path, *, lenient: bool = False,
                     skipped: list[SessionFormatError] | None = None,
                     warnings: list[SessionFormatError] | None = None,
                     content_hash: str | None = None) -> Session:
    """Import a Claude Code transcript (see the module docstring for the rules)."""
    path = Path(path)
    errors = LineErrors(path, lenient, skipped, warnings)
    meta = _read(path, errors)
    _report_unknown(meta, errors)
    if not any(line.kind in _CONVERSATION for line in meta.lines):
        raise errors.nothing_imported("user or assistant message")
    live = meta.queue.place(_live_branch(meta.lines, errors))
    sub = meta.agent_id is not None and all(ln.sidechain for ln in live if ln.kind in _CONVERSATION)
    requests = [] if sub else ca.compaction_requests(path)
    return _build(live, meta, errors, content_hash, requests)


def load_claude_lines(path: str | Path, lines: Iterable[tuple[int, dict[str, Any]]], *,
                      warnings: list[SessionFormatError] | None = None) -> Session:
    """A conversation given as ``(line number, line object)`` pairs instead of a file (a
    sub-agent's conversation copied into ``agent_progress`` lines of ``path``), imported by the
    same rules, leniently: a line that cannot be read is left out and listed in ``warnings``."""
    errors = LineErrors(Path(path), True, warnings, warnings)
    meta = _read(Path(path), errors, lines)
    _report_unknown(meta, errors)
    if not any(line.kind in _CONVERSATION for line in meta.lines):
        raise errors.nothing_imported("user or assistant message")
    return _build(_live_branch(meta.lines, errors), meta, errors, None, [])


# --------------------------------------------------------------------------------------------
# Pass 1: read


def _read(path: Path, errors: LineErrors,
          lines: Iterable[tuple[int, dict[str, Any]]] | None = None) -> _Meta:
    meta = _Meta()
    keep = meta.lines.append
    repeats = Repeats()
    for lineno, data in iter_json_lines(path, errors) if lines is None else lines:
        try:
            line = _convert(data, lineno, meta)
        except LINE_FAILURES as exc:  # what ``errors.line`` does, without a context per line
            errors.failed(exc, lineno)
            continue
        if line is None:
            continue
        repeat = repeats.check(line)
        if repeat is not None:
            if not errors.lenient and not repeat.same:
                errors.error(repeat.problem, line=lineno, field=repeat.field)
            errors.warn(repeat.problem + ("; the copy is left out" if repeat.copy else ""),
                        line=lineno, field=repeat.field)
            if repeat.copy:
                continue
        keep(line)
    return meta


def _convert(data: dict[str, Any], lineno: int, meta: _Meta) -> Line | None:
    kind = data.get("type")
    if not isinstance(kind, str):
        raise SessionFormatError("missing or non-string 'type'", field="type")
    if kind == "summary":  # an old-style session title, not a compaction
        title = opt_str(data.get("summary"), "summary")
        meta.summary_title = meta.summary_title or title
        return None
    if kind == "queue-operation":
        meta.queue.see(data, lineno)
        return None
    if kind not in _CONVERSATION and kind not in _NOT_MESSAGES:
        _note_kind(meta, kind, data.get("subtype"), lineno)
    uuid = data.get("uuid")
    if uuid is None and kind not in _CONVERSATION:
        return None  # file-history-snapshot, queue-operation, … : not part of the tree
    if type(uuid) is not str:
        uuid = as_str(uuid, "uuid")  # raises the field's error
    parent = data.get("parentUuid")
    if parent is not None and type(parent) is not str:
        as_str(parent, "parentUuid")
    line = Line(lineno=lineno, kind=kind, uuid=uuid, parent=parent,
                 timestamp=parse_time(data.get("timestamp")),
                 sidechain=as_bool(data.get("isSidechain"), "isSidechain"),
                 writer=tuple(data.get(key) for key in ("cwd", "version", "gitBranch", "slug")),
                 restart=parent is None and kind == "progress" and _is_clear_hook(data))
    if kind in _CONVERSATION:
        _fill_conversation(line, data)
        session_id, cwd = opt_str(data.get("sessionId"), "sessionId"), opt_str(data.get("cwd"), "cwd")
        meta.session_id = meta.session_id or session_id
        meta.cwd = meta.cwd or cwd
        meta.started = meta.started or line.timestamp
        if meta.version is None and isinstance(version := data.get("version"), str) and version:
            meta.version = version
        if line.sidechain:
            meta.agent_id = meta.agent_id or opt_str(data.get("agentId"), "agentId")
    if (line.result_ids or kind == "progress") and (run := ca.agent_run(data, line.result_ids)):
        meta.runs[run.call_id] = run if run.tokens is not None else meta.runs.get(run.call_id, run)
    elif kind == "system" and data.get("subtype") == "compact_boundary":
        logical = data.get("logicalParentUuid")
        line.logical_parent = None if logical is None else as_str(logical, "logicalParentUuid")
        line.compact_meta = _compact_meta(data.get("compactMetadata"))
    elif kind == "system" and data.get("subtype") == "microcompact_boundary" and not line.sidechain:
        meta.micro.append((lineno, _microcompaction(data.get("microcompactMetadata"))))
    return line


def _is_clear_hook(data: dict[str, Any]) -> bool:
    """A ``progress`` line of the ``SessionStart`` hook run by ``/clear``."""
    hook = data.get("data")
    return isinstance(hook, dict) and hook.get("hookName") == "SessionStart:clear"


def _note_kind(meta: _Meta, kind: str, subtype: Any, lineno: int) -> None:
    """Counts a line of a kind this importer does not know (it stays in the tree for chaining)."""
    if kind == "system" and subtype in _SYSTEM_SUBTYPES:
        return
    name = f"{kind}/{subtype}" if kind == "system" else kind
    count, first = meta.unknown.get(name, (0, lineno))
    meta.unknown[name] = (count + 1, first)


def _report_unknown(meta: _Meta, errors: LineErrors) -> None:
    """One note per unknown line kind: what was left out is said, never dropped silently."""
    for name, (count, first) in meta.unknown.items():
        errors.warn(f"{count} line(s) of type {name!r} left out: not a kind of line this importer "
                    f"knows (first at line {first})", line=first)


def _compact_meta(value: Any) -> dict[str, Any]:
    """``compactMetadata`` with its fields checked: ``trigger`` a string, ``preTokens`` a count."""
    if value is None:
        return {}
    info = as_dict(value, "compactMetadata")
    opt_str(info.get("trigger"), "compactMetadata.trigger")
    if info.get("preTokens") is not None:
        as_int(info["preTokens"], "compactMetadata.preTokens")
    return info


def _microcompaction(value: Any) -> RecordedMicrocompaction:
    """``microcompactMetadata`` with its fields checked: ``trigger`` a string, ``preTokens`` and
    ``tokensSaved`` counts, ``compactedToolIds`` and ``clearedAttachmentUUIDs`` lists of strings."""
    info = {} if value is None else as_dict(value, "microcompactMetadata")
    trigger = opt_str(info.get("trigger"), "microcompactMetadata.trigger")
    counts = {key: None if info.get(key) is None else as_int(info[key], f"microcompactMetadata.{key}")
              for key in ("preTokens", "tokensSaved")}
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("compactedToolIds", "clearedAttachmentUUIDs"):
        items = info.get(key)
        if items is None:
            lists[key] = ()
            continue
        if not isinstance(items, list):
            raise SessionFormatError(f"expected a list, got {type(items).__name__}",
                                     field=f"microcompactMetadata.{key}")
        lists[key] = tuple(as_str(x, f"microcompactMetadata.{key}") for x in items)
    return RecordedMicrocompaction(
        at_message=0, call_ids=lists["compactedToolIds"], trigger=trigger or "auto",
        pre_tokens=counts["preTokens"], tokens_saved=counts["tokensSaved"],
        cleared_attachments=lists["clearedAttachmentUUIDs"], source="claude_code:microcompact_boundary")


def _fill_conversation(line: Line, data: dict[str, Any]) -> None:
    message = data.get("message")
    if type(message) is not dict:
        message = as_dict(message, "message")  # raises the field's error
    role = message.get("role")
    if role != line.kind:
        if role not in _CONVERSATION:
            raise SessionFormatError(f"unknown role {role!r} (expected 'user' or 'assistant')",
                                     field="message.role")
        raise SessionFormatError(f"role {role!r} on a {line.kind!r} line", field="message.role")
    role = line.kind  # the message's role, equal to the line's (checked above)
    blocks = cc.convert_content(message.get("content"), role)
    line.blocks = blocks
    for block in blocks:
        if block.type == "tool_call":
            line.call_ids += (block.id,)
        elif block.type == "tool_result":
            line.result_ids += (block.call_id,)
    if role == "assistant":
        line.msg_id = opt_str(message.get("id"), "message.id")
        line.model = model = opt_str(message.get("model"), "message.model")
        usage = message.get("usage")
        if usage is not None:
            if type(usage) is not dict:
                usage = as_dict(usage, "message.usage")  # raises the field's error
            line.usage = cc.anthropic_usage(usage, model)
        line.synthetic = model == "<synthetic>"
    else:
        line.compact_summary = as_bool(data.get("isCompactSummary"), "isCompactSummary")
        line.synthetic = as_bool(data.get("isMeta"), "isMeta") or cc.is_injected(blocks)
        total = _file_lines(data.get("toolUseResult"))
        if total is not None and len(line.result_ids) == 1:
            line.blocks = tuple(b.evolve(**UNCHANGED, file_lines=total)
                                if b.type == "tool_result" else b for b in blocks)


def _file_lines(record: Any) -> int | None:
    """The line count a Read's structured result records (``toolUseResult.file.totalLines``):
    the file's whole length, which the restore after a compaction needs (a partial read shows
    only some of it)."""
    file = record.get("file") if isinstance(record, dict) else None
    total = file.get("totalLines") if isinstance(file, dict) else None
    return total if type(total) is int and total >= 0 else None


# --------------------------------------------------------------------------------------------
# Pass 2: the live branch


def _live_branch(lines: list[Line], errors: LineErrors) -> list[Line]:
    """The conversation (``claude_tree.place``), with everything left out of it reported."""
    placement = place(lines)
    _report_rechained(placement, errors)
    for line in placement.cut_off:
        errors.warn(f"response {line.msg_id!r} answers a request of the conversation, which went on "
                    "from that request without it (cut off); it is kept at its request",
                    line=line.lineno)
    for branch in placement.branches:
        responses = {ln.msg_id for ln in branch.lines if ln.kind == "assistant"}
        errors.warn(f"{len(branch.lines)} line(s) ({len(responses)} response(s)) on a branch abandoned "
                    f"by a rewind at line {branch.fork} are not part of the conversation",
                    line=branch.lines[0].lineno)
    if placement.other_side:
        errors.warn(f"{placement.other_side} sidechain (sub-agent) line(s) inside this transcript are "
                    "not part of its conversation")
    _report_unplaced(placement, errors)
    return placement.live


def _report_rechained(placement: Placement, errors: LineErrors) -> None:
    """One warning for the lines that continue at the preceding line (their parent is missing),
    and one for each ``/clear`` that starts the conversation again."""
    for line, _ref, before in placement.rechained:
        if line.restart:
            errors.warn(f"line {line.lineno} starts the conversation again (/clear: its "
                        "SessionStart:clear hook line has no parent): the conversation before it "
                        f"(up to line {before.lineno}) is kept, and the context restarts there",
                        line=line.lineno)
    moved = [m for m in placement.rechained if not m[0].restart]
    if not moved:
        return
    line, ref, before = moved[0]
    named = f"names parent {ref!r}, which is not in the file" if ref is not None else "names no parent"
    more = f" ({len(moved)} lines in all)" if len(moved) > 1 else ""
    errors.warn(f"line {line.lineno} {named}: continued at the preceding line {before.lineno}{more}; "
                "nothing is dropped", line=line.lineno)


def _report_unplaced(placement: Placement, errors: LineErrors) -> None:
    """Unplaced lines are counted and listed; in strict mode one that holds a model response is
    an error (the import would leave that response out)."""
    if not placement.unplaced:
        return
    live_responses = {ln.msg_id for ln in placement.live if ln.msg_id}
    lost = [(ln, why) for ln, why in placement.unplaced
            if ln.kind == "assistant" and ln.msg_id not in live_responses]
    if lost and not errors.lenient:
        ln, why = lost[0]
        n = len({x.msg_id or x.uuid for x, _ in lost})
        errors.error(f"{n} model response(s) cannot be placed in the conversation and would be left out "
                     f"(first: {ln.kind} line {ln.uuid!r}: {why}); import leniently to list them",
                     line=ln.lineno, field="parentUuid")
    for ln, why in placement.unplaced:
        errors.unplaced(f"{ln.kind} line {ln.uuid!r} left out: {why}", line=ln.lineno)


# --------------------------------------------------------------------------------------------
# Pass 3: build the session


def _build(live: list[Line], meta: _Meta, errors: LineErrors, content_hash: str | None,
           requests: list[ca.CompactionRequest]) -> Session:
    out = cb.MessageList(checked=True)  # every value was checked while reading
    switches: list[ModelSwitch] = []
    marks: list[tuple[Line | None, int, Line | None]] = []  # (boundary, summary index, summary)
    clears: list[int] = []  # index of the first message after each /clear
    talked = False
    pending: Line | None = None
    first_model: str | None = None
    current_model: str | None = None
    micro = _MicroPlacer(meta.micro)
    for line in live:
        micro.reach(line.lineno, len(out.messages))
        if line.restart and talked:
            clears.append(len(out.messages))
        talked = talked or line.kind in _CONVERSATION
        if line.compact_meta is not None:
            pending = line
        elif line.kind == "assistant":
            start = len(out.messages)
            out.add_assistant(line.msg_id or line.uuid, line.blocks, line.usage, line.model,
                              line.timestamp, line.synthetic, line.lineno)
            if line.model and line.model != "<synthetic>" and line.model != current_model:
                if current_model is not None and len(out.messages) > start:
                    switches.append(ModelSwitch(at_message=start, model=line.model))
                first_model = first_model or line.model
                current_model = line.model
        elif line.kind == "user":
            at = len(out.messages)
            out.add_user(line.uuid, line.blocks, line.timestamp, line.synthetic or line.compact_summary,
                         line.compact_summary, line.lineno)
            if line.compact_summary:
                marks.append((pending, at, line))
                pending = None
    if pending is not None:
        marks.append((pending, len(out.messages), None))
    continues = _continues(meta.lines)
    first_response = next((line.lineno for line in live if line.kind == "assistant"), None)
    out.check_orphans(errors, first_response if continues else None)
    messages = out.freeze()
    header = _header(meta, messages, first_model, content_hash, live, continues)
    used: set[str] = set()
    compactions = [_compaction(b, at, summary, header.session_id, requests, used) for b, at, summary in marks]
    compactions += [RecordedCompaction(at_message=at, trigger="clear", source="claude_code:clear")
                    for at in clears if at < len(messages)]
    compactions.sort(key=lambda c: c.at_message)
    return Session(header=header, messages=tuple(messages), model_switches=tuple(switches),
                   compactions=tuple(compactions), subagents=_subagents(meta, out.calls, header),
                   microcompactions=micro.placed(len(messages)))


class _MicroPlacer:
    """Places each ``microcompact_boundary`` before the first conversation line after it in file
    order (the boundary need not be on the conversation's chain: it takes effect where it stands)."""

    def __init__(self, found: list[tuple[int, RecordedMicrocompaction]]) -> None:
        self.waiting = found
        self.done: list[RecordedMicrocompaction] = []

    def reach(self, lineno: int, at: int) -> None:
        while self.waiting and self.waiting[0][0] < lineno:
            record = self.waiting.pop(0)[1]
            self.done.append(record.evolve(**UNCHANGED, at_message=at))

    def placed(self, end: int) -> tuple[RecordedMicrocompaction, ...]:
        self.reach(1 << 62, end)
        return tuple(self.done)


def _header(meta: _Meta, messages: list[Message], model: str | None, content_hash: str | None,
            live: list[Line], continues: bool | None) -> SessionHeader:
    """The main transcript keeps its ``sessionId``; a sub-agent transcript (every live line a
    sidechain line of one ``agentId``) is ``<sessionId>/agent-<agentId>``, child of ``sessionId``."""
    own = meta.session_id or _hash_id(content_hash)
    agent = meta.agent_id if all(ln.sidechain for ln in live if ln.kind in _CONVERSATION) else None
    title = _title(messages) or meta.summary_title or "Claude Code session"
    if agent is not None and ca.is_compaction_request(agent):
        title = f"Recorded compaction request of {own}"
    return SessionHeader(session_id=ca.subagent_session_id(own, agent) if agent else own, title=title,
                         source_format="claude_code", model=model, workspace_root=meta.cwd,
                         created_at=meta.started, parent_id=own if agent else None, agent_id=agent,
                         agent_version=meta.version, continues=continues)


def _continues(lines: list[Line]) -> bool | None:
    """Whether the file continues an earlier conversation: its first tree line names a parent the
    file does not hold (a resumed session's new file starts below the old one's last line);
    False when that line has no parent; None for a file without tree lines."""
    if not lines:
        return None
    first = lines[0].parent
    return first is not None and first not in {line.uuid for line in lines}


def _subagents(meta: _Meta, calls: set[str], header: SessionHeader) -> tuple[SubagentCall, ...]:
    """The sub-agent runs started by calls of this conversation, in call-id order of the file."""
    own = header.parent_id or header.session_id
    return tuple(SubagentCall(call_id=run.call_id, agent_id=run.agent_id,
                              session_id=ca.subagent_session_id(own, run.agent_id),
                              recorded_tokens=run.tokens, recorded_tool_calls=run.tool_calls)
                 for run in meta.runs.values() if run.call_id in calls)


def _compaction(boundary: Line | None, at: int, summary: Line | None, session_id: str,
                requests: list[ca.CompactionRequest], used: set[str]) -> RecordedCompaction:
    info = (boundary.compact_meta if boundary is not None else None) or {}
    pre = info.get("preTokens")
    text = "\n".join(b.text for b in summary.blocks if b.type == "text") if summary else None
    request = ca.request_for(boundary.logical_parent if boundary else None,
                             boundary.timestamp if boundary else None, requests, used)
    if request is not None:
        used.add(request.agent_id)
    return RecordedCompaction(
        at_message=at, trigger=str(info.get("trigger") or "auto"),
        pre_tokens=pre if isinstance(pre, int) else None, summary=text, source="claude_code:compact_boundary",
        request_usage=request.usage if request else None,
        request_session_id=ca.subagent_session_id(session_id, request.agent_id) if request else None)


def _title(messages: list[Message] | tuple[Message, ...]) -> str:
    for msg in messages:
        if msg.role == "user" and not msg.synthetic and not msg.is_compaction_summary:
            text = cc.command_text(msg.text)
            if text.strip():
                return shorten_title(text)
    return ""


def _hash_id(content_hash: str | None) -> str:
    return short_id("claude_code", content_hash or "sha256:unknown")
