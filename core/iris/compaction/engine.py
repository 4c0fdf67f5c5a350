"""Durable compaction (R-CMP-5…9): plan a cut, summarise the head, check, archive, apply.

:func:`compact` is the pipeline's entry point. It is deterministic for a deterministic summariser
and never raises for summariser failures: an error, a timeout, an invalid or too large summary, or a
result that is not small enough (R-CMP-8) becomes a ``rejected`` outcome that keeps the old history
and state, and nothing is written. Only an applied compaction writes ``history-N.md``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ..errors import SummarizerError
from ..session import Message, Usage
from ..tokens import TokenEstimator
from .archive import next_archive_number, write_archive
from .carried import bound_previous_checkpoint, merge_constraints, select_retained, session_constraints
from .checkpoint import ArchiveRef, Checkpoint, SummaryInvalid, checkpoint_body, validate_summary
from .cut import choose_cut
from .records import (
    AppliedDecision,
    CandidateDecision,
    CompactionDecision,
    CompactionOutcome,
    CompactionState,
    NoCutDecision,
    PlanDecision,
    RejectedDecision,
)
from .request import build_summary_request
from .summarizers import Summarizer, SummaryResult, SummaryTimeout
from .thresholds import Thresholds

__all__ = ["compact", "projected_tokens", "state_from_history"]


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
        state = state.model_copy(update={"previous_checkpoint": checkpoint_body(history[0].text)})
    return state


def _run_summarizer(summarizer: Summarizer, request, timeout: float,
                    ) -> SummaryResult | RejectedDecision:
    started = time.monotonic()
    try:
        result = summarizer.summarize(request, timeout_seconds=timeout)
    except SummaryTimeout:
        return RejectedDecision(reason=f"timeout after {timeout:g} s")
    except SummarizerError as exc:
        return RejectedDecision(reason=f"summarizer error: {exc}")
    if time.monotonic() - started > timeout:
        return RejectedDecision(reason=f"timeout after {timeout:g} s")
    return result


def _rejected(history, decisions, state, reason_or_decision, *, usage=None, prompt="",
              cut=None) -> CompactionOutcome:
    d = (reason_or_decision if isinstance(reason_or_decision, RejectedDecision)
         else RejectedDecision(reason=reason_or_decision))
    return CompactionOutcome(status="rejected", decisions=(*decisions, d), history=tuple(history),
                             cut_index=cut, summary_usage=usage, summary_request_text=prompt,
                             state=state)


def compact(history: Sequence[Message], *, current_request: Message | None, config: Any,
            thresholds: Thresholds, prompts: Any, summarizer: Summarizer, session_dir: Path,
            estimator: TokenEstimator, request_tokens: int,
            tools: Sequence[Mapping[str, Any]] = (),
            trigger: Literal["auto", "manual", "oversize"] = "auto",
            previous: CompactionState | None = None) -> CompactionOutcome:
    """Compact ``history`` once (see the module docstring); ``request_tokens`` is the whole-request
    estimate before compaction."""
    history = tuple(history)
    state = state_from_history(history, previous)
    fixed = max(request_tokens - projected_tokens(history, current_request, estimator=estimator,
                                                  tools=tools, fixed=0), 0)
    plan = choose_cut(history, profile=config.compaction.profile,
                      input_budget=thresholds.input_budget, recent_target=thresholds.recent_target,
                      estimator=estimator)
    if plan.cut_index is None:
        within = request_tokens <= thresholds.input_budget
        d = NoCutDecision(reason=plan.reason + ("; within the hard input limit, continuing"
                                                if within else "; over the hard input limit"),
                          request_tokens=request_tokens, hard_limit=thresholds.input_budget,
                          within_hard_limit=within)
        return CompactionOutcome(status="no_cut", decisions=(d,), history=history, state=state)
    cut = plan.cut_index
    head, tail = history[:cut], history[cut:]
    decisions: list[CompactionDecision] = [PlanDecision(
        trigger=trigger, cut_index=cut, profile=plan.profile, head_messages=len(head),
        head_tokens=sum(estimator.message_tokens(m) for m in head), tail_messages=len(tail),
        tail_tokens=sum(estimator.message_tokens(m) for m in tail),
        recent_target=thresholds.recent_target, tail_budget=plan.tail_budget, reason=plan.reason)]
    fresh = head[1:] if head and head[0].is_compaction_summary else head
    constraints, omitted = merge_constraints(state.constraints, session_constraints(fresh))
    number = next_archive_number(Path(session_dir))
    current_text = current_request.text if current_request is not None else None
    previous_body = (bound_previous_checkpoint(state.previous_checkpoint, estimator)
                     if state.previous_checkpoint else None)
    request = build_summary_request(
        fresh, config=config, prompts=prompts, profile=plan.profile,
        budget=thresholds.input_budget, summary_max_tokens=thresholds.summary_max_tokens,
        estimator=estimator, current_request=current_text, previous_checkpoint=previous_body,
        constraints=[c.text for c in constraints if not c.superseded],
        archive_name=f"history-{number}.md")
    prompt = request.system_prompt + "\n\n" + request.input_text
    result = _run_summarizer(summarizer, request, config.compaction.timeout_seconds)
    if isinstance(result, RejectedDecision):
        return _rejected(history, decisions, state, result, prompt=prompt, cut=cut)
    usage: Usage | None = result.usage
    summary_tokens = estimator.count(result.text)
    try:
        sections = validate_summary(result.text)
    except SummaryInvalid as exc:
        return _rejected(history, decisions, state, RejectedDecision(
            reason=exc.reason, summary_tokens=summary_tokens), usage=usage, prompt=prompt, cut=cut)
    if summary_tokens > thresholds.summary_max_tokens:
        return _rejected(history, decisions, state, RejectedDecision(
            reason=f"summary too large: {summary_tokens:,} > summary max "
                   f"{thresholds.summary_max_tokens:,} tokens", summary_tokens=summary_tokens),
            usage=usage, prompt=prompt, cut=cut)
    ref = ArchiveRef(path=f"history-{number}.md", number=number, messages=len(head))
    checkpoint = Checkpoint(
        mode=plan.profile, summarizer=result.kind, sections=sections,
        previous_checkpoint=previous_body, constraints=constraints, constraints_omitted=omitted,
        retained=select_retained(fresh, budget=config.compaction.retain_recent_tokens,
                                 estimator=estimator, current_request=current_text),
        archives=(*state.archives, ref))
    new_history = (checkpoint.to_message(), *tail)
    after = projected_tokens(new_history, current_request, estimator=estimator, tools=tools,
                             fixed=fixed)
    cp_tokens = estimator.message_tokens(new_history[0])
    decisions.append(CandidateDecision(
        summarizer=result.kind, model=result.model, summary_tokens=summary_tokens,
        summary_max_tokens=thresholds.summary_max_tokens, checkpoint_tokens=cp_tokens,
        projected_request_tokens=after, pressure_line=thresholds.pressure_line))
    problem = (f"after {after:,} > pressure line {thresholds.pressure_line:,}"
               if after > thresholds.pressure_line else
               f"after {after:,} ≥ before {request_tokens:,}" if after >= request_tokens else None)
    if problem:
        return _rejected(history, decisions, state, RejectedDecision(
            reason=problem, summary_tokens=summary_tokens, projected_request_tokens=after),
            usage=usage, prompt=prompt, cut=cut)
    path = write_archive(Path(session_dir), head, number=number, first_index=0)
    decisions.append(AppliedDecision(before_tokens=request_tokens, after_tokens=after,
                                     checkpoint_tokens=cp_tokens, archive_path=str(path),
                                     archive_number=number))
    new_state = state.model_copy(update={
        "archives": checkpoint.archives, "constraints": constraints,
        "constraints_omitted": omitted,
        "previous_checkpoint": checkpoint_body(checkpoint.render())})
    return CompactionOutcome(status="applied", decisions=tuple(decisions), history=new_history,
                             checkpoint=checkpoint, archive_path=str(path), cut_index=cut,
                             summary_usage=usage, summary_request_text=prompt, state=new_state)
