"""Applying a model-driven checkpoint (R-CMP-12) at the tool-batch barrier.

The checkpoint is built deterministically from the validated ``compact_context`` arguments merged
with the previous typed state; ``## Current User Request`` always comes from the user's real
message, never from the arguments. Runtime-written, bounded ``## Checkpoint Worklog`` (file edits
and terminal shell results observed in the archived head; failed or unanswered calls are not
recorded as done) and ``## Repository State`` sections follow the summary.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..frozen import UNCHANGED
from ..session import Message
from ..tokens import TokenEstimator
from .archive import next_archive_number, render_archive, store_archive
from .carried import is_real_user_message, merge_constraints, select_retained, session_constraints
from .checkpoint import ArchiveRef, Checkpoint, CheckpointSection, SummaryInvalid, validate_summary
from .cut import safe_cuts
from .engine import projected_tokens, state_from_history
from .extract import EDIT_TOOL, PATH_KEYS, SHELL_TOOL
from .model_driven import (
    COOLDOWN_BATCHES,
    PROJECTED_OVERHEAD,
    CheckpointArgsError,
    CompactContextArgs,
    GateResult,
    args_fingerprint,
    check_gates,
    normalize_state_files,
    parse_compact_args,
)
from .records import (
    AppliedDecision,
    CompactionOutcome,
    CompactionState,
    PlanDecision,
    RejectedDecision,
    SkippedDecision,
)
from .thresholds import Thresholds
from .typed_state import TypedCheckpointState, merge_typed_state

if TYPE_CHECKING:  # iris.config imports this package
    from ..config import ContextConfig

__all__ = ["MAX_WORKLOG_LINES", "apply_model_checkpoint", "checkpoint_worklog"]

MAX_WORKLOG_LINES = 20


def checkpoint_worklog(head: Sequence[Message]) -> tuple[str, ...]:
    """File modifications and shell results with a terminal status, oldest first, bounded."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    lines: list[str] = []
    for message in head:
        for call in message.tool_calls:
            calls[call.id] = (call.name, call.arguments)
        for result in message.tool_results:
            name, args = calls.get(result.call_id, ("?", {}))
            path = next((str(args[k]) for k in PATH_KEYS if k in args), None)
            status = "failed" if result.is_error else "ok"
            if path and EDIT_TOOL.search(name) and not result.is_error:
                lines.append(f"- modified `{path}` ({name})")
            elif (cmd := args.get("command") or args.get("cmd")) and SHELL_TOOL.search(name):
                # a JSON list of argv words (isinstance does not type its items)
                cmd = " ".join(map(str, cast("list[object]", cmd))) if isinstance(cmd, list) else str(cmd)
                kind = "commit" if "git commit" in cmd else "shell"
                lines.append(f"- {kind} `{cmd[:120]}` → {status}")
    if len(lines) > MAX_WORKLOG_LINES:
        lines = [f"- ({len(lines) - MAX_WORKLOG_LINES} earlier entries in the archive)",
                 *lines[-MAX_WORKLOG_LINES:]]
    return tuple(lines)


def _bul(items: Sequence[str], empty: str) -> str:
    return "\n".join(f"- {i}" for i in items) if items else empty


def _sections(args: CompactContextArgs, typed: TypedCheckpointState, users: list[str],
              request: str) -> dict[str, str]:
    issues = _bul(typed.open_issues, "None open.")
    if typed.historical_issues:
        issues += ("\n(Earlier issues, not current blockers; recoverable from the archives:)\n"
                   + _bul(typed.historical_issues, ""))
    files = [f"State file: `{p}`" for p in typed.state_files]
    files += [f"Planned state file: `{p}`" for p in typed.planned_state_files]
    files += [f"Evidence: {r}" for r in typed.evidence_refs]
    return {
        "Current User Request": request or "No user request in this window.",
        "Active Objective": args.active_objective,
        "Background Goals": users[0] if len(users) > 1 else "None beyond the active objective.",
        "User Constraints": "See ## Session Constraints.",
        "Progress": _bul(typed.completed, "No verified progress stated."),
        "Key Decisions": _bul(typed.decisions, "No decisions stated."),
        "Files and Evidence": _bul(files, "No state files or evidence references."),
        "Todo State": "### Active/relevant to latest request\n- Snapshot kept by the runtime\n"
                      "### Completed/background\n- See Progress\n### Stale/superseded\n- None",
        "SubAgent State": "Not tracked by model-driven checkpoints.",
        "Open Problems": issues,
        "Next Step": args.next_step,
    }


def _typed_block(typed: TypedCheckpointState) -> str:
    body = json.dumps(typed.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, indent=1)
    note = (f"\n({typed.overflow} older items did not fit and are recoverable from the archives.)"
            if typed.overflow else "")
    return f"```json\n{body}\n```{note}"


def _reject(history: tuple[Message, ...], state: CompactionState, reason: str,
            ) -> CompactionOutcome:
    return CompactionOutcome(status="rejected", decisions=(RejectedDecision(reason=reason),),
                             history=history, state=state)


def _typed_from(args: CompactContextArgs, state_files: tuple[str, ...],
                planned: tuple[str, ...], previous: TypedCheckpointState | None,
                ) -> TypedCheckpointState:
    refs = (*args.evidence_refs, *(r for v in args.claim_evidence.values() for r in v))
    new = TypedCheckpointState(
        active_objective=args.active_objective, next_step=args.next_step, completed=args.completed,
        decisions=args.decisions, open_issues=args.open_issues, claims=args.claims(),
        evidence_refs=tuple(dict.fromkeys(refs)), state_files=state_files,
        planned_state_files=planned)
    return merge_typed_state(previous, new, retired_items=args.retired_items,
                             open_issues_complete=args.open_issues_complete)


def _build(history: tuple[Message, ...], head: tuple[Message, ...], args: CompactContextArgs,
           typed: TypedCheckpointState, state: CompactionState, *, number: int,
           retain_tokens: int, estimator: TokenEstimator, repository_state: str | None,
           ) -> Checkpoint:
    """The checkpoint, deterministically from the arguments (raises SummaryInvalid)."""
    fresh = head[1:] if head and head[0].is_compaction_summary else head
    users = [m.text.strip() for m in history if is_real_user_message(m)]
    sections = _sections(args, typed, users, users[-1] if users else "")
    parsed = validate_summary("\n\n".join(f"## {k}\n{v}" for k, v in sections.items()))
    worklog = [line[2:] for line in checkpoint_worklog(fresh)]
    extra = (CheckpointSection(title="Typed Checkpoint State", body=_typed_block(typed)),
             CheckpointSection(title="Checkpoint Worklog", body=_bul(
                 worklog, "No file changes or shell results in this segment.")),
             CheckpointSection(title="Repository State", body=repository_state or
                               "Not observed when this checkpoint was built."))
    constraints, omitted = merge_constraints(state.constraints, session_constraints(fresh))
    return Checkpoint(
        mode="model_driven", summariser="model_driven", sections=parsed, extra_sections=extra,
        constraints=constraints, constraints_omitted=omitted,
        retained=select_retained(fresh, budget=retain_tokens, estimator=estimator,
                                 current_request=None, carried=state.retained),
        archives=(*state.archives, ArchiveRef(path=f"history-{number}.md", number=number,
                                              messages=len(head))))


def apply_model_checkpoint(history: Sequence[Message], raw_args: Mapping[str, Any], *,
                           config: ContextConfig,
                           thresholds: Thresholds, work_dir: Path, project_root: Path,
                           estimator: TokenEstimator, request_tokens: int, current_batch: int,
                           state: CompactionState | None = None,
                           tools: Sequence[Mapping[str, Any]] = (),
                           repository_state: str | None = None,
                           known_evidence: set[str] | None = None) -> CompactionOutcome:
    """Validate, gate and apply one ``compact_context`` request (see the module docstring)."""
    history = tuple(history)
    state = state_from_history(history, state)
    try:
        args = parse_compact_args(raw_args, known_evidence=known_evidence)
        files = normalize_state_files(args.state_files, project_root)
        planned = normalize_state_files(args.planned_state_files, project_root)
    except CheckpointArgsError as exc:
        return _reject(history, state, exc.reason)
    cuts = safe_cuts(history)
    if not cuts:
        return _reject(history, state, "no safe cut for a model-driven checkpoint")
    cut = cuts[-1]
    head, tail = history[:cut], history[cut:]
    typed = _typed_from(args, files, planned, state.typed)
    number = next_archive_number(Path(work_dir))
    try:
        checkpoint = _build(history, head, args, typed, state, number=number,
                            retain_tokens=config.compaction.retain_recent_tokens,
                            estimator=estimator, repository_state=repository_state)
    except SummaryInvalid as exc:
        return _reject(history, state, exc.reason)
    new_history = (checkpoint.to_message(), *tail)
    fixed = max(request_tokens - projected_tokens(history, None, estimator=estimator, tools=tools,
                                                  fixed=0), 0)
    after = projected_tokens(new_history, None, estimator=estimator, tools=tools, fixed=fixed)
    work = sum(1 for m in history if is_real_user_message(m) or m.tool_results)
    fingerprint = args_fingerprint(args, work)
    gate = check_gates(current_tokens=request_tokens, projected_tokens=after + PROJECTED_OVERHEAD,
                       current_batch=current_batch, last_apply_batch=state.last_model_apply_batch,
                       cooldown_until_batch=state.cooldown_until_batch, fingerprint=fingerprint,
                       last_fingerprint=state.last_model_fingerprint)
    if not gate.passed:
        return _skipped(history, state, gate, fingerprint, current_batch)
    archive = render_archive(head, number=number)
    path = store_archive(Path(work_dir), archive, number=number)
    new_state = state.evolve(
        **UNCHANGED, archives=checkpoint.archives, constraints=checkpoint.constraints,
        constraints_omitted=checkpoint.constraints_omitted, typed=typed,
        retained=checkpoint.retained, last_model_apply_batch=current_batch,
        cooldown_until_batch=None, last_model_fingerprint=fingerprint)
    return CompactionOutcome(
        status="applied", history=new_history, checkpoint=checkpoint, archive_path=str(path),
        archive_text=archive, cut_index=cut, state=new_state, decisions=_applied_decisions(
            head, tail, new_history[0], path=path, number=number, before=request_tokens,
            after=after, recent_target=thresholds.recent_target, estimator=estimator))


def _skipped(history: tuple[Message, ...], state: CompactionState, gate: GateResult,
             fingerprint: str, current_batch: int) -> CompactionOutcome:
    """A gate said no: remember the attempt (duplicate gate) and start a low-gain cooldown."""
    if gate.gate is None:
        raise ValueError("a gate that refused a checkpoint names itself")
    cooldown = (current_batch + COOLDOWN_BATCHES if gate.gate == "low_gain"
                else state.cooldown_until_batch)
    return CompactionOutcome(status="skipped", decisions=(SkippedDecision(
        gate=gate.gate, reason=gate.reason, saved_tokens=gate.saved_tokens,
        current_tokens=gate.current_tokens),), history=history,
        state=state.evolve(**UNCHANGED, last_model_fingerprint=fingerprint,
                           cooldown_until_batch=cooldown))


def _applied_decisions(head: tuple[Message, ...], tail: tuple[Message, ...], checkpoint: Message,
                       *, path: Path, number: int, before: int, after: int, recent_target: int,
                       estimator: TokenEstimator) -> tuple[PlanDecision, AppliedDecision]:
    return (
        PlanDecision(trigger="model_driven", cut_index=len(head), profile="model_driven",
                     head_messages=len(head), head_tokens=sum(map(estimator.message_tokens, head)),
                     tail_messages=len(tail), tail_tokens=sum(map(estimator.message_tokens, tail)),
                     recent_target=recent_target, tail_budget=0,
                     reason="model-driven checkpoint at the tool-batch barrier"),
        AppliedDecision(before_tokens=before, after_tokens=after,
                        checkpoint_tokens=estimator.message_tokens(checkpoint),
                        archive_path=str(path), archive_number=number))
