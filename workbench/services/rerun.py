"""Re-run one step's compaction, or a whole replay, with an edited template snapshot (R-UI-4).

The variables a template is rendered with at a step are the ones the engine itself passed: the
replay is walked again with a recording stand-in for the :class:`~iris.prompts.PromptSnapshot` that
renders exactly as the snapshot does and keeps what each step passed and got back, and a recording
wrapper around the summariser that keeps its answer (even one the engine then rejects). Nothing
is re-created beside the engine.

Re-running a step walks the session with the replay's own snapshot up to the step before, then
switches to the edited snapshot for that one step and stops, so both sides start from the same
history and only the template differs. Replays are deterministic (R-PREP-6), so the original side
matches the saved replay. A whole re-run walks the session with the edited snapshot from the start.
Both report, side by side, the rendered summary request, the checkpoint, the request tokens before
and after, and whether the success condition held (R-CMP-8: ≤ the pressure line and smaller).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from iris.compaction import ClientStats, MeteredSummariser, Summariser, SummaryRequest, SummaryResult
from iris.config import ContextConfig, config_hash, default_config, parse_config
from iris.errors import SummariserError
from iris.fidelity import LossRecord, applied_loss_record
from iris.frozen import FrozenModel
from iris.preparation.publisher import PreparationEvent
from iris.preparation.records import (
    CompactionApplied,
    CompactionCandidate,
    CompactionPlan,
    CompactionRejected,
)
from iris.prompts import PromptSnapshot
from iris.replay import AppliedCompaction, Replay, ReplayObservers, ReplayOptions, StepProgress
from iris.replay import replay as run_replay
from iris.session import Session, Usage
from pydantic import ConfigDict

from ..analysis.compared_run import ComparedRun, compared_run
from ..analysis.text_diff import unified_diff
from ..storage.store import Store
from ..storage.stored import StoredReplay
from .replay import bundle_from_replay, summariser_name
from .summarisers import make_summariser

#: The ids the engine renders during a replay (the summary request, R-CMP-6); every other id
#: can only be previewed with example variables.
ENGINE_RENDERED_IDS: tuple[str, ...] = ("compaction", "compaction_input")

__all__ = ["ENGINE_RENDERED_IDS", "ReplayComparison", "ReplayInputs", "StepComparison",
           "StepOutcome", "apply_edits", "compaction_steps", "nearest_compaction_step",
           "original_step", "replay_inputs", "rerun_replay", "rerun_step", "run_step",
           "saved_inputs", "stored_snapshot", "text_diff", "with_engine_templates"]


class _Frozen(FrozenModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)  # frozen, extra="forbid" from FrozenModel


class ReplayInputs(_Frozen):
    """What a saved replay was made from: its session, configuration and template snapshot."""

    session: Session
    config: ContextConfig
    snapshot: PromptSnapshot
    summariser: str
    replay_id: str = ""
    session_id: str = ""
    """The stored session the replay belongs to (results made from these inputs are its own)."""


class StepOutcome(_Frozen):
    """One side of a step comparison: what the compaction stage did with one snapshot."""

    label: str
    step_index: int
    snapshot_id: str
    status: str
    """The compaction stage's status (skipped, candidate, rejected, applied)."""
    variables: Mapping[str, Mapping[str, Any]] = {}
    """Prompt id → the variables the engine passed when rendering it at this step."""
    rendered: Mapping[str, str] = {}
    """Prompt id → the rendered text at this step."""
    summary_request: str = ""
    """The rendered ``compaction`` + ``compaction_input`` text, as the summariser received it."""
    summary_text: str = ""
    """What the summariser answered (kept even when the engine rejected it)."""
    checkpoint_text: str = ""
    """The committed checkpoint ("" unless the compaction was applied)."""
    tokens_before: int = 0
    """This request as sent at the step, whole request (:mod:`workbench.analysis.figures`): before the
    commit when the compaction was applied."""
    tokens_after: int | None = None
    """This request as sent after the commit (None when nothing was committed)."""
    history_tokens_before: int | None = None
    """Detail: the untrimmed durable history the engine compacted and judged (whole request)."""
    history_tokens_after: int | None = None
    """Detail: the same after the summary, committed or projected (None without a summary)."""
    pressure_line: int = 0
    success: bool = False
    success_reason: str = ""
    summary_usage: Usage | None = None
    summariser: str = "extractive"
    phase: str = "ready"
    note: str = ""
    fidelity: LossRecord | None = None
    """What the committed checkpoint lost (docs/fidelity.md); None when nothing was committed."""


class StepComparison(_Frozen):
    """Original and edited snapshot at one step, side by side."""

    step_index: int
    original: StepOutcome
    edited: StepOutcome
    prompt_diff: str
    checkpoint_diff: str
    edited_ids: tuple[str, ...] = ()


class ReplayComparison(_Frozen):
    """A whole replay with the original and the edited snapshot."""

    original: ComparedRun
    edited: ComparedRun
    steps: tuple[StepComparison, ...]
    """One comparison per step where either side entered compaction."""
    edited_replay: Replay
    edited_bundle: Any
    """The edited replay as an ``EvidenceBundle`` (what saving it under a name stores)."""
    session_id: str = ""
    """The stored session this comparison was computed for; it may be saved only under it."""


class _RecordingPrompts:
    """Renders like a :class:`PromptSnapshot` and records what each step passed and got.

    ``switch_at`` makes one step render from ``switched`` instead (the step being re-run).
    """

    def __init__(self, snapshot: PromptSnapshot, switched: PromptSnapshot | None = None,
                 switch_at: int | None = None) -> None:
        self.snapshot, self.switched, self.switch_at = snapshot, switched, switch_at
        self.step = 0
        self.renders: dict[int, dict[str, tuple[dict[str, Any], str]]] = {}

    @property
    def snapshot_id(self) -> str:
        return (self.switched or self.snapshot).snapshot_id

    def active(self) -> PromptSnapshot:
        if self.switched is not None and self.step == self.switch_at:
            return self.switched
        return self.snapshot

    def render(self, prompt_id: str, variables: Mapping[str, Any]) -> str:
        text = self.active().render(prompt_id, variables)
        self.renders.setdefault(self.step, {})[prompt_id] = (copy.deepcopy(dict(variables)), text)
        return text


class _RecordingSummariser:
    """Passes requests to the real summariser and keeps each step's answer."""

    def __init__(self, inner: Summariser, prompts: _RecordingPrompts) -> None:
        self.inner, self.prompts = inner, prompts
        self.kind = summariser_name(inner)
        self.answers: dict[int, SummaryResult] = {}

    def summarise(self, request: SummaryRequest, *, timeout_seconds: float) -> SummaryResult:
        result = self.inner.summarise(request, timeout_seconds=timeout_seconds)
        self.answers[self.prompts.step] = result
        return result


class _RecordingMeteredSummariser(_RecordingSummariser):
    """The recording wrapper of a summariser that calls a model: the inner client's breaker and
    counters stay visible to the engine (:class:`~iris.compaction.MeteredSummariser`)."""

    def __init__(self, inner: MeteredSummariser, prompts: _RecordingPrompts) -> None:
        super().__init__(inner, prompts)
        self.metered = inner

    @property
    def stats(self) -> ClientStats:
        return self.metered.stats

    def start_run(self) -> ClientStats:
        return self.metered.start_run()

    def refusal(self) -> str | None:
        return self.metered.refusal()


def _recording(inner: Summariser, prompts: _RecordingPrompts) -> _RecordingSummariser:
    if isinstance(inner, MeteredSummariser):
        return _RecordingMeteredSummariser(inner, prompts)
    return _RecordingSummariser(inner, prompts)


def stored_snapshot(stored: StoredReplay) -> PromptSnapshot:
    """The template snapshot a saved replay used (the packaged defaults if it was not kept)."""
    sources = stored.template_sources()
    return PromptSnapshot(sources) if sources is not None else PromptSnapshot.defaults()


def replay_inputs(store: Store, stored: StoredReplay) -> ReplayInputs:
    """Session, configuration and snapshot of a saved replay, ready to be walked again."""
    text = stored.configuration_yaml()
    config = parse_config(text, source=f"replay {stored.info.name!r}") if text else default_config()
    return ReplayInputs(session=store.session(stored.info.session_id), config=config,
                        snapshot=stored_snapshot(stored), summariser=stored.info.summariser,
                        replay_id=stored.id, session_id=stored.info.session_id)


def apply_edits(target: PromptSnapshot, base: PromptSnapshot, edited: PromptSnapshot
                ) -> PromptSnapshot:
    """``target`` with every template ``edited`` changed relative to ``base`` (with_template)."""
    for prompt_id in edited.edited_ids(base):
        target = target.with_template(prompt_id, edited.template_source(prompt_id))
    return target


def with_engine_templates(target: PromptSnapshot, current: PromptSnapshot) -> PromptSnapshot:
    """``target`` with the templates a replay renders (``compaction``, ``compaction_input``) taken
    from ``current`` (the Templates page's snapshot, edited or saved) where they differ."""
    for prompt_id in ENGINE_RENDERED_IDS:
        source = current.template_source(prompt_id)
        if source != target.template_source(prompt_id):
            target = target.with_template(prompt_id, source)
    return target


def compaction_steps(stored: StoredReplay) -> tuple[int, ...]:
    """Steps where the compaction stage was entered (a plan was recorded), in order."""
    return tuple(sorted({step for step, _, _ in stored.decisions_of_kind("compaction-plan")}))


def nearest_compaction_step(steps: tuple[int, ...], selected: int | None) -> int | None:
    """The selected step if it compacted, else the latest compaction before it, else the first."""
    if not steps:
        return None
    if selected is None:
        return steps[0]
    before = [s for s in steps if s <= selected]
    return before[-1] if before else steps[0]


def text_diff(original: str, edited: str, name: str) -> str:
    """Unified diff of two texts ("" when equal)."""
    return unified_diff(original, edited, fromfile=f"original/{name}", tofile=f"edited/{name}")


def _walk(inputs: ReplayInputs, prompts: _RecordingPrompts, summariser: Summariser,
          last_step: int | None, progress: StepProgress | None) -> tuple[Replay, _RecordingSummariser]:
    """Replay with the recording stand-ins, stopping after ``last_step`` (None: the whole session).

    The recorders learn which step is being prepared from the engine's preparation events: after
    the event of step k, what they see belongs to step k + 1."""
    recorder = _recording(summariser, prompts)

    def published(event: PreparationEvent) -> None:
        prompts.step = event.step_index + 1

    result = run_replay(inputs.session, inputs.config, prompts=prompts, summariser=recorder,
                        observers=ReplayObservers(on_event=published, progress=progress),
                        options=ReplayOptions(stop_after=last_step))
    return result, recorder


def _verdict(stage: Any, line: int, sent: int) -> dict[str, Any]:
    """The figures and R-CMP-8 verdict of this compaction stage, as the engine judged it.

    ``tokens_*`` are this request as sent (``sent``: the step's whole request when nothing was
    committed), the one basis of :mod:`workbench.analysis.figures`; the engine judges the untrimmed
    durable history (``history_tokens_*``), which the verdict names. Nothing is re-judged here.
    """
    applied = next((d for d in stage.decisions if isinstance(d, CompactionApplied)), None)
    if applied is not None:
        why = (f"untrimmed durable history after {applied.tokens_after:,} ≤ pressure line "
               f"{line:,} and < before {applied.tokens_before:,}")
        return {"tokens_before": (applied.sent_tokens_before if applied.sent_tokens_before
                                  is not None else sent),
                "tokens_after": applied.sent_tokens_after, "success": True,
                "success_reason": why, "history_tokens_before": applied.tokens_before,
                "history_tokens_after": applied.tokens_after}
    candidate = next((d for d in stage.decisions if isinstance(d, CompactionCandidate)), None)
    plan = next((d for d in stage.decisions if isinstance(d, CompactionPlan)), None)
    rejected = next((d.reason for d in stage.decisions if isinstance(d, CompactionRejected)), None)
    return {"tokens_before": sent, "tokens_after": None, "success": False,
            "success_reason": rejected or (stage.note or "compaction was not entered"),
            "history_tokens_before": plan.request_tokens if plan else None,
            "history_tokens_after": candidate.tokens_after if candidate else None}


def _outcome(label: str, result: Replay, prompts: _RecordingPrompts,
             recorder: _RecordingSummariser, step: int, snapshot_id: str,
             session: Session | None = None) -> StepOutcome:
    """What the compaction stage did at ``step`` of ``result``, with the recorded texts."""
    if step >= len(result.preparations):
        return StepOutcome(label=label, step_index=step, snapshot_id=snapshot_id,
                           status="skipped", phase="missing", note="the replay has no such step")
    prep = result.preparations[step]
    stage = prep.stage("compaction")
    if stage is None:  # the pipeline records every stage, even those a failure stopped
        return StepOutcome(label=label, step_index=step, snapshot_id=snapshot_id,
                           status="skipped", phase=prep.phase, note="the step records no compaction stage")
    renders = prompts.renders.get(step, {})
    applied = next((c for c in result.checkpoints if c.step_index == step), None)
    answer = recorder.answers.get(step)
    sent = prep.whole_request_tokens if prep.whole_request_tokens is not None else (
        prep.final_input_tokens)
    verdict = _verdict(stage, prep.pressure_line, sent)
    rendered_ids = [pid for pid in ENGINE_RENDERED_IDS if pid in renders]
    return StepOutcome(
        label=label, step_index=step, snapshot_id=snapshot_id, status=stage.status,
        variables={pid: v for pid, (v, _) in renders.items()},
        rendered={pid: t for pid, (_, t) in renders.items()},
        summary_request="\n\n".join(renders[pid][1] for pid in rendered_ids),
        summary_text=answer.text if answer is not None else "",
        checkpoint_text=applied.checkpoint_text if applied else "",
        **verdict, pressure_line=prep.pressure_line, summary_usage=answer.usage if answer is not None else None,
        summariser=recorder.kind, phase=prep.phase, note=stage.note,
        fidelity=_loss(session, applied, len(result.checkpoints)) if applied else None)


def _loss(session: Session | None, applied: AppliedCompaction, count: int) -> LossRecord | None:
    """The loss record of ``applied`` against the rest of ``session`` (None without a session)."""
    if session is None:
        return None
    return applied_loss_record(session, n=count, step=applied.step_index,
                               archived=applied.archived_messages,
                               first_kept=applied.first_kept_message,
                               checkpoint=applied.checkpoint_text)


def run_step(inputs: ReplayInputs, step: int, *, snapshot: PromptSnapshot | None = None,
             summariser: Summariser | None = None, label: str = "original",
             progress: StepProgress | None = None) -> StepOutcome:
    """Walk to ``step`` with the replay's snapshot; render that step with ``snapshot`` if given."""
    prompts = _RecordingPrompts(inputs.snapshot, snapshot, step if snapshot is not None else None)
    summariser = summariser if summariser is not None else make_summariser(
        "extractive", inputs.session)
    result, recorder = _walk(inputs, prompts, summariser, step, progress)
    used = snapshot if snapshot is not None else inputs.snapshot
    return _outcome(label, result, prompts, recorder, step, used.snapshot_id, inputs.session)


def _compare(step: int, original: StepOutcome, edited: StepOutcome,
             edited_ids: tuple[str, ...]) -> StepComparison:
    return StepComparison(
        step_index=step, original=original, edited=edited,
        prompt_diff=text_diff(original.summary_request, edited.summary_request,
                              f"summary-request-step-{step}.txt"),
        checkpoint_diff=text_diff(original.checkpoint_text or original.summary_text,
                                  edited.checkpoint_text or edited.summary_text,
                                  f"checkpoint-step-{step}.md"),
        edited_ids=edited_ids)


def rerun_step(inputs: ReplayInputs, edited: PromptSnapshot, step: int, *, summariser: Summariser | None = None,
               progress: StepProgress | None = None) -> StepComparison:
    """The step's compaction with the replay's snapshot and with ``edited``, from one history."""
    summariser = summariser if summariser is not None else make_summariser(
        "extractive", inputs.session)
    original = run_step(inputs, step, summariser=summariser, progress=progress)
    changed = run_step(inputs, step, snapshot=edited, summariser=summariser, label="edited",
                       progress=progress)
    return _compare(step, original, changed, edited.edited_ids(inputs.snapshot))


def rerun_replay(inputs: ReplayInputs, edited: PromptSnapshot, *, summariser: Summariser | None = None,
                 progress: StepProgress | None = None) -> ReplayComparison:
    """The whole session with the replay's snapshot and with ``edited``; compaction steps paired."""
    summariser = summariser if summariser is not None else make_summariser(
        "extractive", inputs.session)
    runs: list[tuple[Replay, _RecordingPrompts, _RecordingSummariser, PromptSnapshot]] = []
    for snapshot in (inputs.snapshot, edited):
        prompts = _RecordingPrompts(snapshot)
        result, recorder = _walk(inputs, prompts, summariser, None, progress)
        runs.append((result, prompts, recorder, snapshot))
    entered = sorted({p.step_index for result, *_ in runs for p in result.preparations
                      if (s := p.stage("compaction")) is not None and s.status != "skipped"})
    (base, p_a, rec_a, snap_a), (new, p_b, rec_b, snap_b) = runs
    pairs = tuple(_compare(k, _outcome("original", base, p_a, rec_a, k, snap_a.snapshot_id,
                                       inputs.session),
                           _outcome("edited", new, p_b, rec_b, k, snap_b.snapshot_id,
                                    inputs.session),
                           edited.edited_ids(inputs.snapshot)) for k in entered)
    h = config_hash(inputs.config)
    return ReplayComparison(
        original=compared_run("original templates", base, configuration_hash=h,
                             template_snapshot_id=inputs.snapshot.snapshot_id),
        edited=compared_run("edited templates", new, configuration_hash=h,
                           template_snapshot_id=edited.snapshot_id),
        steps=pairs, edited_replay=new,
        edited_bundle=bundle_from_replay(new, config=inputs.config, prompts=edited,
                                         summariser=summariser_name(summariser)),
        session_id=inputs.session_id)


def saved_inputs(store: Store, replay_id: str) -> ReplayInputs:
    """:func:`replay_inputs` of a saved replay, cached until it is saved again."""
    return store.replays.cached(replay_id, "inputs",
                                lambda: replay_inputs(store, store.replays.open(replay_id)))


def original_step(store: Store, replay_id: str, step: int) -> StepOutcome:
    """The step as the saved replay made it, with the variables the engine rendered (cached)."""
    return store.replays.cached(replay_id, ("original step", step),
                                lambda: _original_step(store, replay_id, step))


def _original_step(store: Store, replay_id: str, step: int) -> StepOutcome:
    inputs = saved_inputs(store, replay_id)
    try:
        summariser = make_summariser(inputs.summariser, inputs.session)
    except SummariserError:  # e.g. a remote replay opened without the endpoint configured
        summariser = make_summariser("extractive", inputs.session)
    return run_step(inputs, step, summariser=summariser)
