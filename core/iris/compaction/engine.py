"""Durable compaction (R-CMP-5…9): plan a cut, summarise the head, check, archive, apply.

:func:`compact` is the pipeline's entry point. It is deterministic for a deterministic summariser
and never raises for summariser failures: an error, a timeout, an invalid or too large summary, or a
result that is not small enough (R-CMP-8) becomes a ``rejected`` outcome that keeps the old history
and state, and nothing is written. Only an applied compaction writes ``history-N.md``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SummariserError, TemplateError
from ..frozen import UNCHANGED
from ..session import Message, Usage
from ..tokens import TokenEstimator
from .archive import next_archive_number, render_archive, store_archive
from .carried import (
    bound_previous_checkpoint,
    merge_constraints,
    select_retained,
    session_constraints,
    with_current_request,
)
from .checkpoint import (
    ArchiveRef,
    Checkpoint,
    CheckpointSection,
    SummaryInvalid,
    checkpoint_body,
    validate_summary,
)
from .cut import CutPlan, choose_cut
from .records import (
    AppliedDecision,
    CandidateDecision,
    CompactionDecision,
    CompactionOutcome,
    CompactionState,
    NoCutDecision,
    PlanDecision,
    RejectedDecision,
    Trigger,
)
from .remote import MeteredSummariser
from .request import build_summary_request
from .summarisers import Summariser, SummaryRequest, SummaryResult, SummaryTimeout
from .thresholds import Thresholds

if TYPE_CHECKING:  # iris.config and iris.prompts import this package
    from ..config import ContextConfig
    from ..prompts import PromptTemplates
    from ..reduction import ReductionMemory
    from ..reduction.toolkinds import ToolKindMap

__all__ = ["CompactionEnvironment", "CompactionRequest", "compact", "projected_tokens",
           "state_from_history"]


@dataclass(frozen=True, kw_only=True)
class CompactionRequest:
    """The request being compacted: its durable history, the current user message and the
    whole-request estimate before compaction."""

    history: Sequence[Message]
    current_request: Message | None = None
    """The user message the next main request answers (kept out of the archive and deduplicated
    in the retained messages); None: none."""
    request_tokens: int
    """Whole-request estimate before compaction (history, current request, system prompt, injected
    context and tools): the figure R-CMP-8 compares the result with."""
    trigger: Trigger = "auto"
    previous: CompactionState | None = None
    """The state carried from the previous compaction (checkpoint, constraints, archives)."""
    step_index: int | None = None
    """The replay step being prepared (told to the summariser: a recorded summary is never used
    before the step it was written at); None outside a replay."""


@dataclass(frozen=True, kw_only=True)
class CompactionEnvironment:
    """What every compaction of a session runs with: configuration, lines, templates, summariser,
    the directory that receives ``history-N.md`` archives, the estimator and the tool schemas."""

    config: ContextConfig
    thresholds: Thresholds
    prompts: PromptTemplates
    summariser: Summariser
    work_dir: Path
    estimator: TokenEstimator
    tools: Sequence[Mapping[str, Any]] = ()
    reduction_memory: ReductionMemory | None = None
    """The run's reduction memory: the head reduced for the summary request reuses its content
    caches (what the run already described), never its tracker; None: described afresh."""
    tool_kinds: ToolKindMap | None = None
    """Which tools read files (``compaction.restore_recent_reads``); None: the native names."""
    token_ratio: float = 1.0
    """The provider's tokens per local token (the run's calibration), for a limit the agent
    counts with the provider's tokenizer (a restored file's ``tokens_per_file``)."""


def projected_tokens(history: Sequence[Message], current: Message | None, *,
                     estimator: TokenEstimator, tools: Sequence[Mapping[str, Any]],
                     fixed: int) -> int:
    """Whole-request estimate of ``history`` (+ the current request) plus the fixed part the
    caller's ``request_tokens`` holds beyond the messages (system prompt, injected context)."""
    messages = [*history, *([current] if current is not None else [])]
    return estimator.request_tokens(messages, tools) + fixed


def state_from_history(history: Sequence[Message], state: CompactionState | None,
                       ) -> CompactionState:
    """The state to compact from: ``state`` or, for a history that starts with a recorded
    checkpoint, that checkpoint's body as the previous checkpoint."""
    state = state or CompactionState()
    if state.previous_checkpoint is None and history and history[0].is_compaction_summary:
        state = state.evolve(**UNCHANGED, previous_checkpoint=checkpoint_body(history[0].text))
    return state


def _refusal(summariser: Summariser) -> str | None:
    """Why ``summariser`` refuses any request right now (a client's open circuit breaker), asked
    before the summary request is built; None for summarisers that call no model."""
    return summariser.refusal() if isinstance(summariser, MeteredSummariser) else None


def _run_summariser(summariser: Summariser, request: SummaryRequest, timeout: float,
                    ) -> tuple[SummaryResult | RejectedDecision, Usage | None]:
    """The summary (or why there is none) and the usage the summariser reported for the call,
    also when it failed (an error carrying ``usage``: billed is billed)."""
    started = time.monotonic()
    try:
        result = summariser.summarise(request, timeout_seconds=timeout)
    except SummaryTimeout as exc:
        return RejectedDecision(reason=f"timeout after {timeout:g} s"), _usage_of(exc)
    except SummariserError as exc:
        return RejectedDecision(reason=f"summariser error: {exc}"), _usage_of(exc)
    except Exception as exc:  # noqa: BLE001 -- a plug-in bug is a failed attempt, not a crash
        return (RejectedDecision(reason=f"summariser error: {type(exc).__name__}: {exc}"),
                _usage_of(exc))
    if time.monotonic() - started > timeout:
        return RejectedDecision(reason=f"timeout after {timeout:g} s"), result.usage
    return result, result.usage


def _usage_of(exc: Exception) -> Usage | None:
    usage = getattr(exc, "usage", None)
    return usage if isinstance(usage, Usage) else None


@dataclass(frozen=True)
class _Attempt:
    """What every exit of one attempt reports (kept together so failures keep the old state)."""

    history: tuple[Message, ...]
    state: CompactionState
    cut: int
    prompt: str = ""

    def reject(self, decisions: Sequence[CompactionDecision], rejected: RejectedDecision,
               usage: Usage | None = None) -> CompactionOutcome:
        return CompactionOutcome(status="rejected", decisions=(*decisions, rejected),
                                 history=self.history, cut_index=self.cut, summary_usage=usage,
                                 summary_request_text=self.prompt, state=self.state)


def _no_cut(plan: CutPlan, request_tokens: int, t: Thresholds, history: tuple[Message, ...],
            state: CompactionState) -> CompactionOutcome:
    within = request_tokens <= t.input_budget
    d = NoCutDecision(reason=plan.reason + ("; within the hard input limit, continuing"
                                            if within else "; over the hard input limit"),
                      request_tokens=request_tokens, hard_limit=t.input_budget,
                      within_hard_limit=within)
    return CompactionOutcome(status="no_cut", decisions=(d,), history=history, state=state)


def _plan_decision(plan: CutPlan, cut: int, history: tuple[Message, ...], trigger: Trigger,
                   t: Thresholds, estimator: TokenEstimator) -> PlanDecision:
    head, tail = history[:cut], history[cut:]
    return PlanDecision(
        trigger=trigger, cut_index=cut, profile=plan.profile, head_messages=len(head),
        head_tokens=sum(map(estimator.message_tokens, head)), tail_messages=len(tail),
        tail_tokens=sum(map(estimator.message_tokens, tail)), recent_target=t.recent_target,
        tail_budget=plan.tail_budget, reason=plan.reason)


def _check_summary(result: SummaryResult, t: Thresholds, estimator: TokenEstimator,
                   form: str = "structured") -> tuple[CheckpointSection, ...] | RejectedDecision:
    """R-CMP-7 validation, then the summary_max_tokens bound; a failure is a failed attempt.
    The recorded agent's own summary used as written (a ``summary`` checkpoint form) is not
    held to the required sections: the agent wrote it in its own layout."""
    tokens = estimator.count(result.text)
    try:
        if result.verbatim and form != "structured" and result.text.strip():
            sections: tuple[CheckpointSection, ...] = ()
        else:
            sections = validate_summary(result.text)
    except SummaryInvalid as exc:
        return RejectedDecision(reason=exc.reason, summary_tokens=tokens)
    if tokens > t.summary_max_tokens:
        return RejectedDecision(reason=f"summary too large: {tokens:,} > summary max "
                                f"{t.summary_max_tokens:,} tokens", summary_tokens=tokens)
    return sections


def _success_problem(after: int, before: int, t: Thresholds) -> str | None:
    """R-CMP-8: the whole request after the summary must be ≤ the pressure line and smaller."""
    if after > t.pressure_line:
        return f"after {after:,} > pressure line {t.pressure_line:,}"
    if after >= before:
        return f"after {after:,} ≥ before {before:,}"
    return None


def compact(request: CompactionRequest, env: CompactionEnvironment) -> CompactionOutcome:
    """Compact ``request.history`` once (see the module docstring)."""
    history, t = tuple(request.history), env.thresholds
    state = state_from_history(history, request.previous)
    plan = choose_cut(history, profile=env.config.compaction.profile, input_budget=t.input_budget,
                      recent_target=t.recent_target, estimator=env.estimator,
                      archive_orphans=env.config.compaction.agent_rules is not None)
    if plan.cut_index is None:
        return _no_cut(plan, request.request_tokens, t, history, state)
    decisions: list[CompactionDecision] = [_plan_decision(plan, plan.cut_index, history,
                                                          request.trigger, t, env.estimator)]
    attempt = _Attempt(history, state, plan.cut_index)
    if (refused := _refusal(env.summariser)) is not None:  # e.g. an open breaker: no request is built
        return attempt.reject(decisions, RejectedDecision(reason=f"summariser error: {refused}"))
    return _summarise(request, env, plan, attempt, decisions)


def _summarise(request: CompactionRequest, env: CompactionEnvironment, plan: CutPlan,
               attempt: _Attempt, decisions: list[CompactionDecision]) -> CompactionOutcome:
    """Summarise the head before ``attempt.cut``, check the summary, build the checkpoint."""
    t, estimator, config, state = env.thresholds, env.estimator, env.config, attempt.state
    head, tail = attempt.history[:attempt.cut], attempt.history[attempt.cut:]
    fresh = head[1:] if head and head[0].is_compaction_summary else head
    constraints, omitted = merge_constraints(state.constraints, session_constraints(fresh))
    number = next_archive_number(env.work_dir)
    current = request.current_request
    current_text = current.text if current is not None else None
    previous_body = (bound_previous_checkpoint(state.previous_checkpoint, estimator)
                     if state.previous_checkpoint else None)
    try:
        summary_request = build_summary_request(
            fresh, config=config, prompts=env.prompts, profile=plan.profile, budget=t.input_budget,
            summary_max_tokens=t.summary_max_tokens, estimator=estimator,
            current_request=current_text, previous_checkpoint=previous_body,
            constraints=[c.text for c in constraints if not c.superseded],
            archive_name=f"history-{number}.md", reduction_memory=env.reduction_memory)
        summary_request = summary_request.evolve(
            **UNCHANGED, checkpoint_form=config.compaction.checkpoint_form,
            step_index=request.step_index)
    except TemplateError as exc:  # an edited template that fails to render is a failed attempt
        return attempt.reject(decisions, RejectedDecision(reason=f"template error: {exc}"))
    attempt = replace(attempt, prompt=summary_request.system_prompt + "\n\n"
                      + summary_request.input_text)
    result, usage = _run_summariser(env.summariser, summary_request, config.compaction.timeout_seconds)
    if isinstance(result, RejectedDecision):
        return attempt.reject(decisions, result, usage)
    form = config.compaction.checkpoint_form
    sections = _check_summary(result, t, estimator, form)
    if isinstance(sections, RejectedDecision):
        return attempt.reject(decisions, sections, result.usage)
    # the summary cannot override the user's latest message: that section is the real message
    sections = with_current_request(sections, attempt.history, current_text,
                                    budget=config.compaction.retain_recent_tokens,
                                    estimator=estimator)
    checkpoint = Checkpoint(
        mode=plan.profile, summariser=result.kind, sections=sections,
        previous_checkpoint=previous_body, constraints=constraints, constraints_omitted=omitted,
        retained=select_retained(fresh, budget=config.compaction.retain_recent_tokens,
                                 estimator=estimator, current_request=current_text,
                                 carried=state.retained),
        archives=(*state.archives, ArchiveRef(path=f"history-{number}.md", number=number,
                                              messages=len(head))),
        form=form, summary_text=result.text.strip() if not sections else None)
    restored, restore_note = _restored(head, tail, env)
    initial = initial_context(fresh) if config.compaction.keep_initial_context else ()
    return _finish(attempt, decisions, checkpoint, (*initial, *restored, *tail), result, number=number,
                   t=t, before=request.request_tokens, current=current, estimator=estimator,
                   tools=env.tools, work_dir=env.work_dir, restore_note=restore_note)


def initial_context(head: Sequence[Message]) -> tuple[Message, ...]:
    """The session's initial context at the start of ``head`` (``compaction.keep_initial_context``):
    the system and developer messages and the synthetic user messages (Codex's permissions
    instructions, AGENTS.md, environment context) before the first message of the conversation
    itself (a real user message, an assistant message or a tool result)."""
    out: list[Message] = []
    for message in head:
        if message.is_compaction_summary:
            continue
        if message.role in ("system", "developer") or (
                message.role == "user" and message.synthetic and not message.tool_results):
            out.append(message)
            continue
        break
    return tuple(out)


def _restored(head: Sequence[Message], tail: Sequence[Message], env: CompactionEnvironment,
              ) -> tuple[tuple[Message, ...], str]:
    """The files re-attached after the checkpoint (``compaction.restore_recent_reads``), and
    the note saying how each was rebuilt."""
    rule = env.config.compaction.restore_recent_reads
    if rule is None:
        return (), ""
    from ..reduction.toolkinds import ToolKindMap
    from .restore import restore_files

    done = restore_files((*head, *tail), tail, rule, kinds=env.tool_kinds or ToolKindMap(),
                         estimator=env.estimator, ratio=env.token_ratio)
    return done.messages, done.note


def _finish(attempt: _Attempt, decisions: list[CompactionDecision], checkpoint: Checkpoint,
            tail: tuple[Message, ...], result: SummaryResult, *, number: int, t: Thresholds,
            before: int, current: Message | None, estimator: TokenEstimator,
            tools: Sequence[Mapping[str, Any]], work_dir: Path, restore_note: str = "",
            ) -> CompactionOutcome:
    """Project the new request, check R-CMP-8, and only then write the archive and apply."""
    fixed = max(before - projected_tokens(attempt.history, current, estimator=estimator,
                                          tools=tools, fixed=0), 0)
    new_history = (checkpoint.to_message(), *tail)
    after = projected_tokens(new_history, current, estimator=estimator, tools=tools, fixed=fixed)
    cp_tokens = estimator.message_tokens(new_history[0])
    summary_tokens = estimator.count(result.text)
    decisions = [*decisions, CandidateDecision(
        summariser=result.kind, model=result.model, summary_tokens=summary_tokens,
        summary_max_tokens=t.summary_max_tokens, checkpoint_tokens=cp_tokens,
        projected_request_tokens=after, pressure_line=t.pressure_line,
        note="; ".join(n for n in (result.note, restore_note) if n))]
    problem = _success_problem(after, before, t)
    if problem:
        return attempt.reject(decisions, RejectedDecision(
            reason=problem, summary_tokens=summary_tokens, projected_request_tokens=after),
            result.usage)
    archive = render_archive(attempt.history[:attempt.cut], number=number)
    path = store_archive(work_dir, archive, number=number)
    decisions.append(AppliedDecision(before_tokens=before, after_tokens=after,
                                     checkpoint_tokens=cp_tokens, archive_path=str(path),
                                     archive_number=number))
    state = attempt.state.evolve(
        **UNCHANGED, archives=checkpoint.archives, constraints=checkpoint.constraints,
        constraints_omitted=checkpoint.constraints_omitted, retained=checkpoint.retained,
        previous_checkpoint=checkpoint_body(checkpoint.render()),
        cooldown_until_batch=None)  # any durable apply clears the model-driven cooldown
    return CompactionOutcome(status="applied", decisions=tuple(decisions), history=new_history,
                             checkpoint=checkpoint, archive_path=str(path), archive_text=archive,
                             cut_index=attempt.cut, summary_usage=result.usage,
                             summary_request_text=attempt.prompt, state=state)
