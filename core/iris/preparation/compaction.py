"""Stage 5, compaction: skipped below the line; candidate, rejected or applied as it really went.

Trigger (R-TOK-3…5, R-CMP-10): the provider's reading of the previous response decides while the
replayed request is the one the provider measured. Once this replay has applied a compaction of
its own, an earlier stage of this step reduced the request (fold, trim, drop), or the session
carries no trusted usage at all, the provider's numbers describe a different request, so the
replay's own whole-request estimate (calibrated local + unrecorded overhead) decides instead; the
record says which basis was used. With no trusted usage sample at all (R-TOK-4) nothing triggers
unless ``compaction.trigger_without_usage`` is set.
Outcomes (R-CMP-8, R-PREP-3): ``applied`` replaces the durable history with the checkpoint plus
the raw tail; ``no_cut`` is a plan that stays a ``candidate`` (fine while within the hard input
limit); ``rejected`` or an error/timeout ends the run: the preparation is ``failed`` and the old
durable state is kept.

Pressure notices and the grace (R-CMP-11, R-CMP-12) are decided here from the same reading
(:mod:`.notices`): a line reached for the first time in the window adds a ``pressure-notice``
decision (and, with ``model_driven``, the durable notice message); with ``model_driven`` the first
crossing may be deferred by the grace, which the stage note says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import assert_never

from ..compaction.engine import CompactionEnvironment, CompactionRequest, compact
from ..compaction.records import (
    AppliedDecision,
    CandidateDecision,
    CompactionOutcome,
    NoCutDecision,
    PlanDecision,
    RejectedDecision,
    SkippedDecision,
)
from ..compaction.records import CompactionDecision as EngineDecision
from ..compaction.thresholds import Thresholds
from ..compaction.triggers import TriggerStep
from ..frozen import UNCHANGED
from . import notices
from .agent_count import agent_additions, local_tokens_since_response
from .final import current_input_index
from .records import (
    CompactionApplied,
    CompactionCandidate,
    CompactionPlan,
    CompactionRejected,
    Decision,
    FailureKind,
    PreparationFailure,
    StageRecord,
    StageStatus,
)
from .state import Part, PipelineSettings, PreparationState, StageFailed, WindowOffset

__all__ = ["agent_additions", "apply", "request_reduced", "restored_tokens", "trigger"]


def _added_words(reasoning: int, after: int) -> str:
    parts = [f"{reasoning:,} earlier turns' encrypted reasoning" if reasoning else "",
             f"{after:,} of messages after the last response" if after else ""]
    return " + ".join(p for p in parts if p)


def trigger(state: PreparationState, settings: PipelineSettings,
            added: tuple[int, int] | None = None) -> tuple[bool, str, str, int | None]:
    """(start?, basis, reason, value compared) for automatic compaction at this step.

    Every value is a whole request: the provider's count, or the calibrated local estimate plus
    the unrecorded overhead (``calibrated_local``), never the bare local estimate. With no trusted
    usage sample yet nothing triggers (basis ``none``, no value) unless
    ``compaction.trigger_without_usage`` allows the calibrated local estimate. ``added``: what
    :func:`agent_additions` adds (computed when None); the calibrated estimate already holds the
    messages after the last response, so only the reasoning is added to it."""
    reasoning, after = agent_additions(state, settings) if added is None else added
    t = settings.thresholds
    if not t.auto_enabled or t.threshold_line is None:
        return False, "disabled", "automatic compaction is disabled (threshold 0)", None
    reading = state.usage_reading
    reduced = request_reduced(state)
    unsampled = reading is None or reading.kind == "none"
    if unsampled and not settings.config.compaction.trigger_without_usage:
        why = ("no trusted provider usage yet: the gauge shows 0 and nothing triggers (R-TOK-4; "
               "compaction.trigger_without_usage is off)")
        return False, "none", why, None
    if state.agent_count is not None and not reduced and (
            not state.diverged or state.window_offset is not None):
        return _agent_trigger(state, state.agent_count, t.threshold_line)
    if (state.diverged and state.window_offset is not None and not reduced and reading is not None
            and reading.kind == "observed" and reading.can_trigger):
        return _offset_trigger(state, reading.tokens + reading.output_tokens, reasoning, after,
                               t.threshold_line)
    if state.diverged or reduced or reading is None or unsampled:
        why = ("no trusted provider usage yet; compaction.trigger_without_usage: true"
               if unsampled else "the replayed history differs from the recorded one after a "
               "compaction" if state.diverged else "the provider counted the recorded request, "
               "and the replay's earlier stages reduced this one")
        since = local_tokens_since_response(state, settings)
        if since is None:
            value = state.whole(state.input_tokens) + reasoning
            what = _whole_words(state, value - reasoning)
            if reasoning:
                what = f"{what} + {_added_words(reasoning, 0)} = {value:,}"
        else:  # Codex's count: its byte estimate of the messages since the last response
            base = state.whole(state.input_tokens - since)
            value = base + reasoning + after
            what = (f"{_whole_words(state, base)} up to the last response + "
                    f"{_added_words(reasoning, after) or '0'}, as the agent counts = {value:,}")
        sign = "≥" if value >= t.threshold_line else "<"
        return (value >= t.threshold_line, "calibrated_local",
                f"{what} {sign} threshold line {t.threshold_line:,} ({why})", value)
    from ..compaction.usage import should_trigger

    if reasoning or after:
        reading = reading.evolve(**UNCHANGED, tokens=reading.tokens + reasoning + after)
    decision = should_trigger(reading, t, local_estimate=state.input_tokens)
    reason = decision.reason
    if reasoning or after:
        reason = f"{reason}; provider count {decision.tokens - reasoning - after:,} + " \
                 f"{_added_words(reasoning, after)}, as the agent counts"
    if decision.basis in ("provider", "estimate", "below"):
        basis = "provider" if reading.kind == "observed" else "provider_estimate"
        return decision.trigger, basis, reason, decision.tokens
    return decision.trigger, "none", reason, None


def _notice_added(state: PreparationState, added: tuple[int, int], basis: str,
                  value: int | None) -> tuple[int, int]:
    """What the notices' reading adds to the provider's count so that it reads the value the
    trigger compared (the agent's own count, the window offset: see :func:`trigger`)."""
    if basis == "calibrated_local" and value is not None:  # the notices add the first figure
        return value - state.whole(state.input_tokens), 0
    reading = state.usage_reading
    if basis not in ("provider", "agent_count") or value is None or reading is None:
        return added
    expected = reading.tokens + reading.output_tokens + added[0] + added[1]
    return added if value == expected else (added[0], added[1] + value - expected)


def _agent_trigger(state: PreparationState, count: int, line: int
                   ) -> tuple[bool, str, str, int]:
    """At the step of the agent's automatic compaction: the agent's own recorded count of the
    request (plus the window offset when the replay compacted before)."""
    w = state.window_offset
    value = count + (w.offset if w else 0)
    shift = f" {_offset_words(w)} = {value:,}" if w else ""
    sign = "≥" if value >= line else "<"
    return (value >= line, "agent_count",
            (f"the agent's own count of this request {count:,} (recorded with its compaction, "
             f"preTokens){shift} {sign} threshold line {line:,}"), value)


def _offset_trigger(state: PreparationState, provider: int, reasoning: int, after: int,
                    line: int) -> tuple[bool, str, str, int]:
    """An agent profile in the agent's window (``state.window_offset``): the provider's count of
    the last response, what the agent adds, and the replay's difference from the agent's request
    measured at the window's first response."""
    w = state.window_offset
    assert w is not None
    value = provider + reasoning + after + w.offset
    added = _added_words(reasoning, after)
    sign = "≥" if value >= line else "<"
    return (value >= line, "provider",
            f"provider count {provider:,}" + (f" + {added}" if added else "")
            + f" {_offset_words(w)} = {value:,} {sign} threshold line {line:,}", value)


def _offset_words(w: WindowOffset) -> str:
    """The window offset as a term of the trigger's sum, with where it was measured and what it
    leaves out."""
    left_out = ""
    if w.reattached is not None and w.agent_reattached is not None:
        left_out = (f"; the files each re-attached after its compaction left out: this replay's "
                    f"{w.reattached:,}, the agent's {w.agent_reattached:,} (not in its "
                    "transcript: its window's overhead above the system prompt and tools)")
    return (f"{'+' if w.offset >= 0 else '−'} {abs(w.offset):,} (this replay's request minus "
            f"the agent's, measured at step {w.step}, the first response after both "
            f"compacted{left_out})")


def request_reduced(state: PreparationState) -> bool:
    """True when an earlier stage of this step changed the request: a fold or trim shortened the
    history it sends (``history`` differs from the durable history) or something was dropped.
    The provider's count then measures the recorded request, not this one."""
    return state.history_tokens != state.durable_tokens or bool(state.dropped)


def _whole_words(state: PreparationState, value: int) -> str:
    cal = state.calibration
    if cal is None or (cal.overhead == 0 and cal.ratio == 1.0):
        return f"local estimate {value:,}"
    return (f"calibrated local estimate + unrecorded overhead {value:,} (local "
            f"{state.input_tokens:,} × {cal.ratio:.3f} + {cal.overhead:,})")


def _map(d: EngineDecision, *, cut: int | None, before: int, line: int, attempt: int,
         w: Callable[[int], int] = int) -> Decision:
    """One compaction-engine decision as a record decision, branch by branch (exhaustive).

    Request sizes are whole requests (``w``: calibrated local estimate + unrecorded overhead, the
    basis the trigger and the pressure line use); summary and checkpoint sizes are local counts
    of those texts."""
    match d:
        case PlanDecision():
            return CompactionPlan(
                trigger=d.trigger, request_tokens=w(before), pressure_line=line,
                cut_index=d.cut_index, archived_messages=d.head_messages,
                kept_messages=d.tail_messages,
                reason=f"{d.reason} (head {d.head_tokens:,} tokens, tail {d.tail_tokens:,} "
                       f"tokens, recent target {d.recent_target:,})")
        case NoCutDecision():
            return CompactionPlan(trigger="auto", request_tokens=w(d.request_tokens),
                                  pressure_line=line, cut_index=None, reason=d.reason)
        case CandidateDecision():
            return CompactionCandidate(
                attempt=attempt, cut_index=cut, summary_tokens=d.summary_tokens,
                tokens_after=w(d.projected_request_tokens),
                reason=f"{d.summariser} summary of {d.summary_tokens:,} tokens (max "
                       f"{d.summary_max_tokens:,}); checkpoint {d.checkpoint_tokens:,} tokens; "
                       f"whole request would be {w(d.projected_request_tokens):,} against the "
                       f"pressure line {line:,}" + (f"; {d.note}" if d.note else ""))
        case RejectedDecision():
            after = d.projected_request_tokens
            return CompactionRejected(attempt=attempt, tokens_after=None if after is None else w(after),
                                      reason=_rejection_words(d, before=before, line=line, w=w))
        case SkippedDecision():
            return CompactionRejected(attempt=attempt, reason=f"{d.gate}: {d.reason}")
        case AppliedDecision():
            name = Path(d.archive_path).name  # the working directory is not part of the record
            return CompactionApplied(
                cut_index=cut if cut is not None else 0, archive_path=name,
                checkpoint_tokens=d.checkpoint_tokens, tokens_before=w(d.before_tokens),
                tokens_after=w(d.after_tokens),
                reason=f"committed: whole request {w(d.before_tokens):,} → "
                       f"{w(d.after_tokens):,} tokens (counted on the untrimmed durable "
                       f"history); head archived to {name}")
        case _:
            assert_never(d)


def _rejection_words(d: RejectedDecision, *, before: int, line: int, w: Callable[[int], int]
                     ) -> str:
    """The engine's reason on the whole-request basis the header and the trigger use: its size
    check (R-CMP-8) compares raw local figures against the pressure line converted to local
    units, a figure shown nowhere else, so the check is worded again with both sides as whole
    requests (calibrated local estimate + unrecorded overhead)."""
    after = d.projected_request_tokens
    if after is None or w is int or not d.reason.startswith("after "):
        return d.reason
    if " > pressure line " in d.reason:
        return (f"whole request after the summary {w(after):,} > pressure line {line:,} "
                "(calibrated local estimate + unrecorded overhead)")
    return (f"whole request after the summary {w(after):,} ≥ the untrimmed durable history "
            f"before it {w(before):,} (calibrated local estimate + unrecorded overhead)")


def _decisions(outcome: CompactionOutcome, before: int, settings: PipelineSettings,
               state: PreparationState) -> tuple[Decision, ...]:
    out: list[Decision] = []
    attempt = 1
    w = int if state.calibration is None else state.whole
    usage = outcome.summary_usage
    for d in outcome.decisions:
        mapped = _map(d, cut=outcome.cut_index, before=before, line=settings.pressure_line,
                      attempt=attempt, w=w)
        if isinstance(mapped, CompactionRejected) and isinstance(d, RejectedDecision) \
                and usage is not None:  # billed although rejected
            mapped = mapped.evolve(**UNCHANGED, summary_usage=usage)
        out.append(mapped)
        if isinstance(d, (RejectedDecision, SkippedDecision)):
            attempt += 1
    return tuple(out)


def _with_sent(decisions: tuple[Decision, ...], before: int, after: int
               ) -> tuple[Decision, ...]:
    """The commit with this request as sent (trimmed) next to the untrimmed durable figures."""
    def sent(d: Decision) -> Decision:
        if not isinstance(d, CompactionApplied):
            return d
        return d.evolve(
            **UNCHANGED, sent_tokens_before=before, sent_tokens_after=after,
            reason=f"{d.reason}; this request as sent (after this step's fold and trim) "
                   f"{before:,} → {after:,} (the step's whole request)")
    return tuple(sent(d) for d in decisions)


def _skip(state: PreparationState, note: str, before: int | None = None,
          decisions: tuple[Decision, ...] = ()) -> tuple[PreparationState, StageRecord]:
    n = state.input_tokens
    return state, StageRecord(name="compaction", status="skipped",
                              before_input_tokens=n if before is None else before,
                              after_input_tokens=n, note=note, decisions=decisions)


def _applied_state(state: PreparationState, outcome: CompactionOutcome, settings: PipelineSettings
                   ) -> PreparationState:
    """Durable history = checkpoint message(s) + raw tail; this request keeps its trimmed tail."""
    cut = outcome.cut_index
    if cut is None:
        raise ValueError("an applied compaction without a cut index")
    tail = len(state.durable) - cut
    messages = tuple(outcome.history)
    head = messages[:len(messages) - tail]
    cache = settings.cache
    checkpoint = tuple(Part(m, cache.message(m), "checkpoint", None, "checkpoint", marks=("summarised",))
                       for m in head)
    durable_tail: list[Part] = []
    for j, message in enumerate(messages[len(messages) - tail:]):
        old = state.durable[cut + j]
        durable_tail.append(old if old.message is message else
                            Part(message, cache.message(message), "history", old.history_index))
    durable = checkpoint + tuple(durable_tail)
    history = checkpoint + state.history[cut:]
    return replace(state, durable=durable, durable_tokens=sum(p.tokens for p in durable),
                   history=history, history_tokens=sum(p.tokens for p in history),
                   compaction=outcome, compaction_state=outcome.state,
                   diverged=True)


def restored_tokens(state: PreparationState) -> int:
    """Local tokens of what the applied compaction put beside its summary (restored files)."""
    return sum(p.tokens for p in state.durable
               if p.origin == "checkpoint" and not p.message.is_compaction_summary)


def _engine_thresholds(state: PreparationState, settings: PipelineSettings) -> Thresholds:
    """The thresholds in the engine's unit (raw local estimate of the replayed messages): each
    whole-request line minus the unrecorded overhead, divided by the calibration ratio, so the
    engine's success test (after ≤ pressure line) holds for the whole request; the raw tail's
    share of the budget (``recent_target``, a part of the request, so no overhead) divided by the
    ratio, so the tail kept is that share of the whole request too."""
    t, cal = settings.thresholds, state.calibration
    if cal is None or (cal.overhead == 0 and cal.ratio == 1.0):
        return t

    def local(n: int | None) -> int | None:
        return None if n is None else state.local_line(n)

    return t.evolve(**UNCHANGED, pressure_line=state.local_line(t.pressure_line),
                    threshold_line=local(t.threshold_line),
                    input_budget=state.local_line(t.input_budget),
                    recent_target=int(t.recent_target / max(cal.ratio, 1e-9)))


def _fail(record: StageRecord, message: str, kind: FailureKind, error_type: str = "",
          state: PreparationState | None = None) -> StageFailed:
    return StageFailed(record, PreparationFailure(stage="compaction", message=message, kind=kind,
                                                  error_type=error_type),
                       trigger_reading=state.trigger_reading if state is not None else None)


def _attempt(state: PreparationState, settings: PipelineSettings, before: int, entered: str
             ) -> CompactionOutcome:
    """One call of the compaction engine; an exception becomes a rejected, failed stage."""
    u = current_input_index(state.history)
    current = state.history[u].message if u < len(state.history) else None
    try:
        if settings.work_dir is None or settings.summariser is None or settings.prompts is None:
            raise ValueError("compaction needs templates, a summariser and a session directory "
                             "for archives")
        request = CompactionRequest(
            history=tuple(p.message for p in state.durable), current_request=current,
            # the engine compares against the raw (durable) request it can rebuild itself
            request_tokens=before - state.history_tokens + state.durable_tokens,
            trigger="manual" if state.recorded_manual else "auto",
            previous=state.compaction_state, step_index=state.step_index)
        return compact(request, CompactionEnvironment(
            config=settings.config, thresholds=_engine_thresholds(state, settings),
            prompts=settings.prompts, summariser=settings.summariser,
            work_dir=settings.work_dir, estimator=settings.cache.estimator,
            tools=tuple(t.schema for t in state.tools), reduction_memory=settings.memory.reduction,
            tool_kinds=settings.tool_kinds,
            token_ratio=state.calibration.ratio if state.calibration is not None else 1.0))
    except Exception as exc:
        text = f"{type(exc).__name__}: {exc}"
        record = StageRecord(
            name="compaction", status="rejected", before_input_tokens=before,
            after_input_tokens=before, note=f"{entered}; the attempt failed: the run ends",
            decisions=(CompactionPlan(trigger="manual" if state.recorded_manual else "auto",
                                      request_tokens=before,
                                      pressure_line=settings.pressure_line, reason=entered),
                       CompactionRejected(attempt=1, reason=text)))
        kind = "timeout" if isinstance(exc, TimeoutError) else "error"
        raise _fail(record, text, kind, type(exc).__name__, state) from exc


def _grace_note(step: TriggerStep | None, settings: PipelineSettings) -> str:
    """Why the grace of R-CMP-12 did or did not defer this entry (model_driven only)."""
    if step is None or not settings.config.compaction.model_driven:
        return ""
    if "grace ends" in step.reason:
        return "; grace ends at 95% of the budget"
    if not step.window.reminder_delivered:
        return "; no grace: no reminder was delivered earlier in this window"
    return "; the grace of this window is spent"


def _notice(state: PreparationState, settings: PipelineSettings,
            pressure: tuple[TriggerStep, str] | None) -> tuple[PreparationState, tuple[Decision, ...]]:
    if pressure is None:
        return state, ()
    state, decision = notices.deliver(state, settings, *pressure)
    return state, (decision,) if decision is not None else ()


def apply(state: PreparationState, settings: PipelineSettings
          ) -> tuple[PreparationState, StageRecord]:
    added = agent_additions(state, settings)
    start, basis, reason, value = trigger(state, settings, added)
    if state.recorded_manual:  # a user action the agent's transcript records: applied here
        start, reason = True, f"{state.recorded_manual}; {reason}"
    state = state.evolve(trigger_reading=(value, basis))
    # R-CMP-11/12: the same reading decides notices and the grace (nothing when disabled)
    pressure = (notices.pressure(state, settings, basis, added=_notice_added(state, added, basis,
                                                                          value))
                if basis != "disabled" else None)
    step = pressure[0] if pressure is not None else None
    before = state.input_tokens
    if not start or (step is not None and not step.compact and not state.recorded_manual):
        note = f"not entered: {reason} (basis: {basis})"
        if start and step is not None:  # deferred: "…; grace: N request(s) before compaction"
            note += "; " + step.reason.rsplit("; ", 1)[-1] + " (R-CMP-12)"
        new, found = _notice(state, settings, pressure)
        return _skip(new, note, before, found)
    entered = f"entered: {reason} (basis: {basis}){_grace_note(step, settings)}"
    outcome = _attempt(state, settings, before, entered)
    decisions = _decisions(outcome, before - state.history_tokens + state.durable_tokens,
                           settings, state)

    def record(status: StageStatus, after: int, note: str, extra: tuple[Decision, ...] = ()
               ) -> StageRecord:
        return StageRecord(name="compaction", status=status, before_input_tokens=before,
                           after_input_tokens=after, decisions=decisions + extra,
                           note=f"{entered}; {note}")

    if outcome.status == "applied":  # a new window: the old notices no longer apply
        new = notices.withdraw(_applied_state(state, outcome, settings))
        if new.calibration is not None:  # the summary replaced history the file does not hold
            new = new.evolve(calibration=new.calibration.folded(restored_tokens(new)))
        decisions = _with_sent(decisions, state.whole(before), new.whole(new.input_tokens))
        return new, record("applied", new.input_tokens,
                           f"committed, cut at history message {outcome.cut_index}; this "
                           f"request as sent (trimmed), whole request {state.whole(before):,} → "
                           f"{new.whole(new.input_tokens):,} (local {before:,} → "
                           f"{new.input_tokens:,})")
    if outcome.status in ("no_cut", "skipped"):  # planned, not committed (R-CMP-8: continue)
        new, found = _notice(state, settings, pressure)
        planned = record("candidate", new.input_tokens, "no new cut point"
                         if outcome.status == "no_cut" else "the engine skipped the attempt",
                         found)
        if state.whole(before) > settings.input_budget:
            raise _fail(planned, f"no cut point and the request ({state.whole(before):,} tokens) is over the "
                                 f"hard input limit {settings.input_budget:,}", "error", state=state)
        return new, planned
    why = next((d.reason for d in reversed(decisions) if isinstance(d, CompactionRejected)),
               "the summary was not accepted")
    raise _fail(record("rejected", before, "rejected: the run ends and the old state is kept"),
                why, "timeout" if why.startswith("timeout") else "error", state=state)
