"""Replay a recorded session through the preparation pipeline, step by step (R-PREP-6).

Step ``k`` prepares the request that produced assistant response ``k`` from the messages recorded
before it. The replay keeps its own durable history: recorded messages are appended as the walk
goes on, and a compaction the replay applies at step ``k`` replaces that history, so step ``k+1``
starts from the checkpoint plus the raw tail plus the messages recorded since. Provider usage of
each response is recorded next to the local estimate (trusted, or a frozen ``≈`` estimate).

Cost follows what changes: each recorded message is turned into a part (and counted) once, token
sums are carried incrementally, the reduction engine reuses its frozen prefix, and the request
hash is built from per-message hashes computed once. Same session + configuration + template
snapshot + summariser = identical records; the engine names the files of the replay's working
directory (reduced artifacts, tool outputs) only under the logical root ``<session_dir>``, and the
host-side writer maps that root to the directory, so where the replay ran changes nothing.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from pydantic import Field

from .collector_pause import StepFreezer, replay_collections
from .compaction.agent_rules import apply_agent_rule
from .compaction.calibration import Calibration, continued_prefix
from .compaction.microcompact import rule_applies as microcompact_rule_applies
from .compaction.records import CompactionOutcome
from .compaction.remote import client_run_usage, start_client_run
from .compaction.summarisers import ExtractiveSummariser, Summariser
from .compaction.thresholds import Thresholds
from .compaction.thresholds import thresholds as resolve_thresholds
from .compaction.usage import RunUsage, UsageTracker
from .config import ContextConfig, config_hash, default_config
from .context import ContextBuildScope, RecordedContextSource
from .frozen import UNCHANGED, FrozenModel
from .preparation.baseline import BASELINE_STAGES, RecordedCompactionMark, recorded_marks
from .preparation.carry import StepCarry
from .preparation.compaction import restored_tokens
from .preparation.engine_tools import with_engine_tools
from .preparation.memory import StepMemory
from .preparation.pipeline import STAGES, PreparationOutcome, Stage, StepMeta, prepare
from .preparation.publisher import Publisher
from .preparation.records import (
    CompactionRejected,
    ContextPreparation,
    Microcompacted,
    PreparedRequest,
    StageName,
    StageRecord,
    content_hash,
)
from .preparation.state import (
    Part,
    PipelineSettings,
    PreparationState,
    TokenCache,
    ToolSpec,
    WindowOffset,
)
from .preparation.walk import (
    Collector,
    Walk,
    context_parts,
    contribution_parts,
    provider_reading,
)
from .prompts import PromptTemplates, configured_snapshot
from .reduction.artifacts import DeferredArtifactWriter
from .reduction.toolkinds import ToolKindMap
from .replay_options import ReplayEnvironment, ReplayObservers, ReplayOptions, StepProgress
from .session import ModelLimits, Session, Usage
from .tokens import REQUEST_OVERHEAD, default_estimator
from .work_dir import claim_work_dir

__all__ = ["AppliedCompaction", "RecordedCompactionMark", "Replay", "ReplayEnvironment", "ReplayObservers",
           "ReplayOptions", "StepProgress", "replay"]


class AppliedCompaction(FrozenModel):
    """One compaction the replay committed: where it cut and what it wrote."""

    step_index: int
    preparation_id: str
    cut_index: int
    """Index in the replay's durable history where the raw tail starts."""
    first_kept_message: int | None
    """Session index of the first raw message kept after the checkpoint (None: no raw tail)."""
    archived_messages: tuple[int, ...]
    """Session indices of the messages moved into the archive (earlier checkpoints excluded)."""
    archive_name: str
    checkpoint_text: str
    summary_request_text: str = ""
    summary_usage: Usage | None = None


class Replay(FrozenModel):
    """Everything one replay produced; ``model_dump(mode="json")`` is deterministic."""

    session_id: str
    configuration_snapshot_id: str
    thresholds: Thresholds
    """Budget and lines at the start; each preparation carries those of its own step (they
    follow the recorded limits after a model switch)."""
    preparations: tuple[ContextPreparation, ...]
    requests: dict[str, PreparedRequest]
    """Final requests by ``preparation_id``. A preparation's ``final_request_ref`` stays None
    until an evidence sink stores the request and returns its reference (R-PREP-1)."""
    archives: dict[str, str]
    """``history-N.md`` name → text."""
    checkpoints: tuple[AppliedCompaction, ...]
    run_usage: RunUsage
    """Recorded provider usage: main model and summary (compaction) calls counted apart."""
    cancelled: bool = False
    observation_failures: tuple[str, ...] = ()
    """Sink or subscriber failures (they never change the records)."""
    baseline: Literal["engine", "recorded"] = "engine"
    """``engine``: the configuration's reduction and compaction; ``recorded``: the as-recorded
    baseline (what the agent really sent: no engine reduction or compaction, the recorded
    compactions applied where they happened)."""
    recorded_compactions: tuple[RecordedCompactionMark, ...] = ()
    """The agent's own compactions, on this replay's steps (for marks on every chart)."""
    calibration: Calibration = Field(default_factory=Calibration)
    """Unrecorded overhead and calibration ratio at the end of the replay (each preparation
    carries the values known before its own step)."""
    messages_counted: int = Field(default=0, exclude=True)
    """Messages whose tokens were counted (not cached): grows with what changes, not with steps
    × history. Not part of the JSON form (it depends on what an estimator had cached)."""

    def request(self, preparation: ContextPreparation) -> PreparedRequest | None:
        return self.requests.get(preparation.preparation_id)


def replay(session: Session, config: ContextConfig | None = None, *,
           prompts: PromptTemplates | None = None, summariser: Summariser | None = None,
           observers: ReplayObservers | None = None, environment: ReplayEnvironment | None = None,
           options: ReplayOptions | None = None) -> Replay:
    """Prepare every step of ``session``; never raises for a stage failure (see module doc).

    ``config`` defaults to the bundled configuration, ``summariser`` to the offline extractive
    one. Without ``prompts`` the templates come from the configuration's ``prompts.root`` under
    ``environment.workspace_root`` (packaged defaults for templates not saved there, and when no
    workspace is given for a relative root). ``observers`` are what the run reports to,
    ``environment`` what it reads besides the session and the directory it writes to, ``options``
    how it runs (see :mod:`iris.replay_options`; None: the defaults). Without
    ``environment.work_dir`` a private folder of this run is used and removed afterwards
    (:func:`iris.work_dir.claim_work_dir`); the archive texts are kept in :attr:`Replay.archives` unless
    ``options.keep_bodies`` is False.
    """
    observers = observers if observers is not None else ReplayObservers()
    env = environment if environment is not None else ReplayEnvironment()
    options = options if options is not None else ReplayOptions()
    config = config if config is not None else default_config()
    chosen = config
    config, rule_note = apply_agent_rule(config, session.header)  # an agent profile's version row
    # the templates of config.prompts.root under workspace_root (R-PRM-1)
    prompts = prompts if prompts is not None else configured_snapshot(config, env.workspace_root)
    summariser = summariser if summariser is not None else ExtractiveSummariser()
    own_dir = env.work_dir is None
    work_dir = Path(env.work_dir) if env.work_dir is not None else claim_work_dir()
    try:
        with replay_collections(options.pause_collector) as freezer:
            walker = _ReplayWalker(_RunInputs(
                session=session, config=config, chosen=chosen, rule_note=rule_note,
                prompts=prompts, summariser=summariser,
                observers=observers, environment=env, options=options, work_dir=work_dir,
                # the folder is removed at the end and nothing reads artifacts from it
                artifacts=DeferredArtifactWriter(work_dir) if own_dir else None,
                freezer=freezer))
            return walker.run()
    finally:
        if own_dir:
            shutil.rmtree(work_dir, ignore_errors=True)


def config_snapshot_id(config: ContextConfig, prompts: PromptTemplates | None) -> str:
    """Hash of the validated configuration plus the template snapshot."""
    return content_hash({"configuration": config_hash(config),
                         "templates": prompts.snapshot_id if prompts is not None else None})


def largest_prompt(session: Session) -> int | None:
    """The largest prompt the session's provider accepted (trusted usage), or None."""
    return max((m.usage.prompt_tokens for m in session.messages
                if m.usage is not None and m.usage.is_trusted), default=None)


def manual_steps(session: Session) -> dict[int, str]:
    """Steps before which the recorded agent's user asked for a compaction (``/compact``), with
    the words that name it in the compaction record."""
    steps: dict[int, str] = {}
    for mark in recorded_marks(session, (), baseline=True):
        if mark.trigger == "manual":
            before = f" at {mark.tokens_before:,} tokens" if mark.tokens_before else ""
            steps[mark.step] = (f"the recorded agent's user asked for a compaction here (manual, "
                                f"message {mark.at_message}{before})")
    return steps


def rejected_summary_usage(preparation: ContextPreparation) -> list[Usage]:
    """Usage reported by the summary calls of ``preparation`` whose summary was rejected."""
    return [d.summary_usage for s in preparation.stages if s.name == "compaction"
            for d in s.decisions if isinstance(d, CompactionRejected) and d.summary_usage is not None]


def _failing(exc: Exception) -> Stage:
    """Assembly for a step whose context source failed: the failure belongs to assembly."""
    def stage(state: PreparationState, settings: PipelineSettings
              ) -> tuple[PreparationState, StageRecord]:
        raise exc
    return stage


@dataclass(frozen=True)
class _RunInputs:
    """What one replay runs on, resolved by :func:`replay` (defaults filled in)."""

    session: Session
    config: ContextConfig
    """The configuration the replay runs: ``chosen`` with its agent rule's row applied."""
    chosen: ContextConfig
    """The configuration as given (its snapshot id names the replay)."""
    rule_note: str
    """Which agent-rule row was applied and why ("" without ``compaction.agent_rules``)."""
    prompts: PromptTemplates
    summariser: Summariser
    observers: ReplayObservers
    environment: ReplayEnvironment
    options: ReplayOptions
    work_dir: Path
    artifacts: DeferredArtifactWriter | None
    """A writer that only holds each step's artifacts (the work folder is private), or None."""
    freezer: StepFreezer


class _ReplayWalker:
    """Walks one replay step by step: owns the walk, the carry, the usage tracker and the
    calibration, and prepares each step's request (a live run's loop is ``iris.runner.AgentRunner``)."""

    def __init__(self, inputs: _RunInputs) -> None:
        session, config, options = inputs.session, inputs.config, inputs.options
        estimator = inputs.environment.estimator or default_estimator()
        self.session, self.progress = session, inputs.observers.progress
        self.baseline: Literal["engine", "recorded"] = options.baseline
        self.stop_after, self.keep_bodies = options.stop_after, options.keep_bodies
        self.keep_records, self.on_compaction = options.keep_records, inputs.observers.on_compaction
        self.artifacts, self.freezer = inputs.artifacts, inputs.freezer
        self.calibration = Calibration.start(getattr(config, "estimate", None))
        self.cache = TokenCache(estimator)
        self.memory = StepMemory(tokens=self.cache)
        """The stages' step memory, kept from step to step (see ``_step_settings``)."""
        self.recorded_prompt = largest_prompt(session)
        self.rule_note = inputs.rule_note
        self.thresholds = self._with_rule(resolve_thresholds(
            config, session.header.limits, session.header.model,
            recorded_prompt=self.recorded_prompt))
        self.manual_steps = (manual_steps(session) if options.baseline == "engine"
                             and config.compaction.apply_recorded_manual else {})
        micro = config.compaction.microcompact if options.baseline == "engine" else "off"
        self.micro_due = list(session.microcompactions) if micro != "off" else []
        """Recorded microcompactions not applied yet (each at the first ready step reaching it)."""
        self.micro_rule = (micro == "by-version" and not session.microcompactions
                           and session.header.source_format == "claude_code"
                           and microcompact_rule_applies(session.header.agent_version))
        """Claude Code's microcompaction rule decides at every step (see ``iris.compaction.microcompact``)."""
        self.settings = self._settings(inputs)
        self.summary_client_start = start_client_run(inputs.summariser)  # a counting client's breaker
        self._by_limits: dict[tuple[ModelLimits | None, str | None], PipelineSettings] = {}
        self.snapshot_id = config_snapshot_id(inputs.chosen, inputs.prompts)
        self.source = inputs.environment.context_source
        if self.source is None and session.context_snapshots:
            self.source = RecordedContextSource(session)
        self.context: tuple[Part, ...] = ()
        self.context_error: Exception | None = None
        try:  # static: rendered once; a failure fails every step's assembly (R-BUILD-2 errors)
            self.context = context_parts(inputs.environment.context_input, self.cache)
        except Exception as exc:  # noqa: BLE001 -- recorded per step, never raised out of replay
            self.context_error = exc
        tools = inputs.environment.tools
        offered = tools if options.baseline == "recorded" else with_engine_tools(tools, config)
        self.tools = tuple(ToolSpec(str(s["name"]), dict(s), estimator.tool_schema_tokens(s))
                           for s in offered)
        self.publisher = Publisher(inputs.observers.sink)
        if inputs.observers.on_event is not None:
            self.publisher.broker.subscribe(inputs.observers.on_event)
        self.collector = Collector() if self.source is not None else None
        self.carry = StepCarry()
        """What the last step handed to the next (durable history and carried decisions)."""
        self.calibrated_cuts = 0
        """Recorded compactions the walk had passed when the calibration last observed usage."""
        self.replay_cuts = 0
        """Compactions this replay has applied so far."""
        self.agent_profile = options.baseline == "engine" and config.compaction.agent_rules is not None
        """An agent profile (``compaction.agent_rules``): the replay follows the agent's windows."""
        if self.agent_profile and self.calibration.fixed_overhead is None:
            # a file that continues an earlier conversation: the profile's compaction folds the
            # history the file does not hold away with the rest
            self.calibration = self.calibration.evolve(
                **UNCHANGED, fixed_prefix=continued_prefix(session))
        self.window_offset: WindowOffset | None = None
        """The offset of the window this replay shares with the agent (see
        :attr:`PreparationState.window_offset`); None until measured."""
        self.offset_cuts = (0, 0)
        """(this replay's compactions, the agent's) when the offset was last reset."""

    def _with_rule(self, t: Thresholds) -> Thresholds:
        """The budget's detail also names the agent-rule row the lines come from."""
        if not self.rule_note:
            return t
        return t.evolve(**UNCHANGED, budget_detail=f"{t.budget_detail}; {self.rule_note}")

    def _settings(self, inputs: _RunInputs) -> PipelineSettings:
        """The settings of the session's own model window, complete from the option objects."""
        t, session = self.thresholds, inputs.session
        return PipelineSettings(
            config=inputs.config, thresholds=t, memory=self.memory, prompts=inputs.prompts,
            summariser=inputs.summariser, work_dir=inputs.work_dir,
            tool_kinds=ToolKindMap.for_dialect(session.header.tool_dialect),
            cancel=inputs.observers.cancel,
            artifacts=inputs.artifacts, incremental=inputs.options.incremental)

    def run(self) -> Replay:
        walk = Walk(self.cache, self.session, baseline=self.baseline == "recorded")
        tracker = UsageTracker(model=self.session.header.model)
        preparations: list[ContextPreparation] = []
        requests: dict[str, PreparedRequest] = {}
        checkpoints: list[AppliedCompaction] = []
        archives: dict[str, str] = {}
        batches, cancelled = self.session.index.batches, False
        if self.stop_after is not None:
            batches = batches[:self.stop_after + 1]
        try:
            for k, batch in enumerate(batches):
                outcome, tracker, before = self._step(k, batch.assistant_message, walk, tracker)
                p = outcome.preparation
                if outcome.request is not None and self.keep_bodies:
                    requests[p.preparation_id] = outcome.request
                if p.compaction_applied and outcome.state.compaction is not None:
                    applied = self._applied(k, p, before, outcome.state.compaction)
                    checkpoints.append(applied)
                    if self.keep_bodies:
                        archives[applied.archive_name] = outcome.state.compaction.archive_text
                    self._archived(applied, outcome.state.compaction.archive_text)
                ref = self.publisher.publish(p, outcome.request)
                if isinstance(ref, str) and ref and outcome.request is not None:
                    p = p.evolve(**UNCHANGED, final_request_ref=ref)  # the sink's reference
                if self.keep_records:
                    preparations.append(p)
                if self.artifacts is not None:
                    self.artifacts.discard()
                self.freezer.step_done()
                if self.progress is not None:
                    self.progress(k + 1, len(batches))
                if p.phase == "cancelled":
                    cancelled = True
                    break
        finally:
            if self.collector is not None:
                self.collector.close()
        return Replay(session_id=self.session.header.session_id,
                      configuration_snapshot_id=self.snapshot_id, thresholds=self.thresholds,
                      preparations=tuple(preparations), requests=requests, archives=archives,
                      checkpoints=tuple(checkpoints), run_usage=client_run_usage(
                          tracker.totals, self.settings.summariser, self.summary_client_start),
                      cancelled=cancelled, observation_failures=tuple(self.publisher.failures),
                      baseline=self.baseline, calibration=self.calibration,
                      recorded_compactions=recorded_marks(
                          self.session, walk.left_out, baseline=self.baseline == "recorded"),
                      messages_counted=self.cache.counted)

    def _archived(self, applied: AppliedCompaction, text: str) -> None:
        """Hand a committed compaction and its archive text to the observer; like a sink's, its
        failure is noted and never changes the replay."""
        if self.on_compaction is None:
            return
        try:
            self.on_compaction(applied, text)
        except Exception as exc:  # noqa: BLE001 -- an observer's failure never changes execution
            self.publisher.failures.append(
                f"step {applied.step_index}: on_compaction: {type(exc).__name__}: {exc}")

    def _contributions(self, k: int, walk: Walk) -> tuple[tuple[Part, ...], Exception | None]:
        if self.source is None or self.collector is None:
            return (), None
        header = self.session.header
        try:
            # the source's snapshot for this step is the whole state (R-DYN-1)
            scope = ContextBuildScope(session_id=header.session_id, run_id=self._run_id(walk),
                                      step_index=k, workspace_root=header.workspace_root,
                                      run_input=walk.run_input)
            snapshot = self.collector.run(self.source.collect(scope))
            return contribution_parts(tuple(snapshot.contributions), self.cache), None
        except Exception as exc:  # noqa: BLE001 -- the source failed: this step's assembly fails, replay goes on
            return (), exc

    def _run_id(self, walk: Walk) -> str:
        return f"{self.session.header.session_id}:run-{max(walk.runs - 1, 0)}"

    def _step(self, k: int, at: int, walk: Walk, tracker: UsageTracker
              ) -> tuple[PreparationOutcome, UsageTracker, tuple[Part, ...]]:
        """Prepare step ``k``: the outcome, the tracker after its response and the durable
        history the step started from."""
        # the previous response's usage measured a compacted context only when the recorded
        # compaction came before that response's request; one recorded between that response and
        # this request leaves the replayed history the one the provider counted
        measured_compacted = walk.recorded_compaction
        agent_count = self._agent_count(walk.position, at)
        micro = tuple(m for m in self.micro_due if m.at_message <= at)
        leaving = self.window_offset  # the window the agent's compaction at this step closes
        cleared = walk.clears_passed
        carry = self.carry = walk.advance(self.session, at, self.carry)
        if walk.clears_passed > cleared and self.baseline != "recorded":
            # the user cleared the conversation: this replay's history restarted with the agent's
            self.replay_cuts += walk.clears_passed - cleared
        response = self.session.messages[at]
        model = response.model or (response.usage.model if response.usage else None) or walk.model
        window = carry.window
        if model and tracker.model and model != tracker.model:
            tracker = tracker.observe_switch(model)
            # a model switch opens a new pressure window (for this step: a step that is not ready
            # keeps the carried one) and withdraws the old notices (R-CMP-11)
            carry = self.carry = carry.without_notices()
            window = None
        self._shared_window(walk)
        contributions, error = self._contributions(k, walk)
        error = self.context_error or error
        state = PreparationState(
            step_index=k, context=self.context, contributions=contributions,
            durable=carry.durable, durable_tokens=carry.durable_tokens, tools=self.tools,
            called_tools=frozenset(walk.called), reduction_state=carry.reduction_state,
            seen=carry.seen, usage_reading=tracker.reading,
            diverged=carry.diverged or (walk.recorded_compaction if walk.baseline
                                        else measured_compacted or walk.clears_passed > cleared),
            compaction_state=carry.compaction_state, window=window,
            todos_completed=walk.todos_completed, calibration=self.calibration,
            recorded_manual=self.manual_steps.get(k),
            window_offset=leaving if agent_count is not None else self.window_offset,
            agent_count=agent_count, microcompactions=micro, microcompact_rule=self.micro_rule)
        recorded = walk.recorded_tokens + REQUEST_OVERHEAD
        answered = tracker.observe_response(response.usage, context_bytes=walk.bytes, model=model)
        tokens, kind = provider_reading(answered, response.usage)
        meta = StepMeta(configuration_snapshot_id=self.snapshot_id, run_id=self._run_id(walk),
                        session_id=self.session.header.session_id, step_index=k,
                        response_message_index=at, provider_prompt_tokens=tokens,
                        provider_usage_kind=kind, recorded_request_tokens=recorded,
                        provider_usage_note=response.usage.usage_note if response.usage else None,
                        recorded_window=self.baseline == "recorded")
        stages: tuple[tuple[StageName, Stage], ...] = (
            BASELINE_STAGES if self.baseline == "recorded" else STAGES)
        if error is not None:
            stages = (("assembly", _failing(error)), *stages[1:])
        outcome = prepare(state, self._step_settings(walk), meta, stages=stages)
        cleared = self._cleared(outcome, walk)
        if cleared:  # the agent cleared the same results: its request shrank as this one did
            walk.recorded_tokens += cleared
            recorded += cleared
        if outcome.preparation.phase == "ready" and outcome.state.compaction is not None:
            self.replay_cuts += 1
            if outcome.state.calibration is not None:  # folded by the compaction stage
                self.calibration = outcome.state.calibration
        self._calibrate(k, recorded, response.usage, walk)
        self._measure_offset(k, outcome, response.usage, walk)
        if outcome.preparation.phase == "ready":
            self.carry = outcome.carry
            self.micro_due = self.micro_due[len(micro):]
            compaction = outcome.state.compaction
            if compaction is not None:
                tracker = tracker.observe_compaction(outcome.preparation.final_input_tokens,
                                                     compaction.summary_usage)
                answered = tracker.observe_response(response.usage, context_bytes=walk.bytes,
                                                    model=model)
        else:  # a rejected summary call that reported usage is billed all the same (R-TOK-6)
            for usage in rejected_summary_usage(outcome.preparation):
                answered = answered.observe_rejected_summary(usage)
        return outcome, answered, carry.durable

    @staticmethod
    def _cleared(outcome: PreparationOutcome, walk: Walk) -> int:
        """The change in the local count of the agent's request from this step's microcompaction:
        the messages it cleared since the agent's last recorded compaction."""
        if outcome.preparation.phase != "ready":
            return 0
        since = max((i for i in walk.recorded_cuts if i < walk.position), default=0)
        return sum(delta for stage in outcome.preparation.stages if stage.name == "trim_old_bodies"
                   for d in stage.decisions if isinstance(d, Microcompacted)
                   for i, delta in d.message_deltas if i >= since)

    def _agent_count(self, start: int, upto: int) -> int | None:
        """An agent profile: the agent's own count of the request it compacted (Claude Code's
        ``preTokens``; a Codex rollout records no such count) when an automatic recorded
        compaction lies between the last response and this step's request; None otherwise."""
        if not self.agent_profile:
            return None
        return next((c.pre_tokens for c in self.session.compactions
                     if start <= c.at_message < upto and c.trigger == "auto" and c.pre_tokens
                     and c.source.startswith("claude_code:")), None)

    def _shared_window(self, walk: Walk) -> None:
        """A compaction on either side (this replay's or the agent's) ends the shared window."""
        cuts = (self.replay_cuts, walk.cuts_passed)
        if cuts != self.offset_cuts:
            self.window_offset, self.offset_cuts = None, cuts

    def _measure_offset(self, k: int, outcome: PreparationOutcome, usage: Usage | None,
                        walk: Walk) -> None:
        """An agent profile: at the first response after both the agent and this replay
        compacted (as often), the replay's whole request minus the provider's count of the
        agent's; from then on the two histories grow by the same recorded messages."""
        self._shared_window(walk)
        if (not self.agent_profile or self.window_offset is not None or usage is None
                or not usage.is_trusted or outcome.preparation.phase != "ready"
                or not 0 < self.replay_cuts == walk.cuts_passed):
            return
        cal, sent = self.calibration, outcome.preparation.final_input_tokens
        offset = WindowOffset(cal.whole(sent) - usage.prompt_tokens, k)
        if (self.settings.config.compaction.restore_recent_reads is not None
                and cal.fixed_overhead is None and cal.window_step == k != cal.overhead_step):
            # the agent re-attached files its transcript does not record: the overhead of its
            # window (measured on this same response) holds them, the replay's request holds its
            # own pick; the offset compares the rest of the two requests
            reattached = restored_tokens(outcome.state)
            offset = WindowOffset(
                cal.whole(sent - reattached, window=True) - usage.prompt_tokens, k,
                reattached=round(cal.ratio * reattached),
                agent_reattached=cal.window_overhead - cal.overhead)
        self.window_offset = offset

    def _calibrate(self, k: int, recorded: int, usage: Usage | None, walk: Walk) -> None:
        """The response of step ``k`` arrived: update the calibration (used from step k+1)."""
        if usage is None or not usage.is_trusted:
            return
        if self.agent_profile and walk.cuts_passed > self.replay_cuts:
            # an agent profile: the agent compacted and this replay has not (yet), so the
            # provider measured a history the replay does not hold and its ratio would not
            # describe the replay's requests; the first response once both have compacted opens
            # the new window
            return
        self.calibration = self.calibration.observe(
            k, recorded, usage.prompt_tokens, new_window=walk.cuts_passed > self.calibrated_cuts)
        self.calibrated_cuts = walk.cuts_passed

    def _step_settings(self, walk: Walk) -> PipelineSettings:
        """This step's settings; without ``incremental`` a fresh step memory (token counts kept)."""
        settings = self._settings_for(walk.limits, walk.model)
        if settings.incremental:
            return settings
        return replace(settings, memory=self.memory.fresh())

    def _settings_for(self, limits: ModelLimits | None, model: str | None = None) -> PipelineSettings:
        """Settings for the model window in use: the budget follows the recorded limits of the
        current model (R-CMP-3), else its catalogue entry, unless the configuration sets it."""
        if limits == self.session.header.limits and model in (None, self.session.header.model):
            return self.settings
        cached = self._by_limits.get((limits, model))
        if cached is None:
            t = self._with_rule(resolve_thresholds(self.settings.config, limits, model,
                                                   recorded_prompt=self.recorded_prompt))
            cached = self._by_limits[(limits, model)] = replace(self.settings, thresholds=t)
        return cached

    def _applied(self, k: int, p: ContextPreparation, before: tuple[Part, ...],
                 outcome: CompactionOutcome) -> AppliedCompaction:
        cut, archive = outcome.cut_index, outcome.archive_path
        if cut is None or archive is None:
            raise ValueError(f"step {k}: an applied compaction without a cut index or archive")
        tail = before[cut:]
        return AppliedCompaction(
            step_index=k, preparation_id=p.preparation_id, cut_index=cut,
            first_kept_message=tail[0].history_index if tail else None,
            archived_messages=tuple(x.history_index for x in before[:cut]
                                    if x.history_index is not None),
            archive_name=Path(archive).name,
            checkpoint_text=outcome.history[0].text,
            summary_request_text=outcome.summary_request_text,
            summary_usage=outcome.summary_usage)
