"""``AgentRunner``: a live conversation through the same preparation pipeline the replay uses.

One runner is one session. ``run(user_input)`` appends the user's message and loops: prepare the
request with :func:`iris.preparation.prepare` over the same six stages as a replay (the same
:class:`~iris.preparation.walk.Walk` over the session, a
:class:`~iris.preparation.carry.StepCarry` from step to step, the same usage tracker and
calibration, so triggers read the provider's usage exactly as in a replay) → send it to the model
→ run the tool calls it asked for → again, until the model answers without a tool call or
``max_steps`` model calls were made. Every :class:`ContextPreparation` is recorded (kept on the
runner, written to ``preparations.jsonl`` and handed to the sink and subscribers), and the session
is written in the native format as it goes (:mod:`iris.runner.record`).

Differences from a replay, all because the run is live: the provider measured exactly the request
the runner sent, so the history never "diverges" from what usage describes, and the calibration
compares the provider's count with the local estimate of that whole request; reduction artifacts
are written into the session folder as they are made; and the text sent to the model carries the
real path of each recovery file (:func:`iris.runner.wire.real_paths`) while records keep the
logical ``<session_dir>`` root.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ..compaction.calibration import Calibration
from ..compaction.remote import OpenAICompatibleSummariser, client_run_usage, start_client_run
from ..compaction.summarisers import ExtractiveSummariser, Summariser
from ..compaction.thresholds import thresholds as resolve_thresholds
from ..compaction.usage import RunUsage, UsageTracker, context_bytes
from ..context import ContextBuildScope, ContextSource
from ..errors import ConfigError
from ..frozen import UNCHANGED, FrozenModel
from ..preparation.carry import StepCarry
from ..preparation.engine_tools import with_engine_tools
from ..preparation.memory import StepMemory
from ..preparation.pipeline import STAGES, Stage, StepMeta, prepare
from ..preparation.publisher import EvidenceSink, PreparationEvent, Publisher
from ..preparation.records import ContextPreparation, PreparedRequest, StageName, StageRecord
from ..preparation.state import Part, PipelineSettings, PreparationState, TokenCache, ToolSpec
from ..preparation.walk import Collector, Walk, context_parts, contribution_parts, provider_reading
from ..prompts import PromptTemplates, configured_snapshot
from ..reduction.toolkinds import ToolKindMap
from ..replay import config_snapshot_id, rejected_summary_usage
from ..safe_files import ensure_dir
from ..session import (
    Message,
    RecordedCompaction,
    RecordedContribution,
    Session,
    SessionHeader,
    StepSnapshot,
    TextBlock,
)
from ..tokens import TokenEstimator, default_estimator
from .config import RunnerConfig, load_runner_config, parse_runner_config
from .model import ChatModel, ModelCallFailed, OpenAIChatModel
from .record import SessionRecord
from .tools import Tool, ToolBox
from .wire import wire_messages, wire_tools

__all__ = ["AgentRunner", "RunResult"]

_SESSION_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}")
Stop = Literal["answered", "step_limit", "failed", "cancelled"]


class RunResult(FrozenModel):
    """What one ``run`` did."""

    session_id: str
    run_id: str
    """``<session id>:run-<n>``: the n-th user turn of the session, from 0."""
    stop: Stop
    """``answered``: the model answered without a tool call; ``step_limit``: ``max_steps`` model
    calls were made; ``failed``: a preparation failed or the model call failed (see ``error``);
    ``cancelled``: the host's ``cancel`` callable said so during a preparation."""
    answer: str | None
    """The text of the final answer (``answered`` only)."""
    error: str | None
    """Why the run failed, naming the step (``failed`` only)."""
    preparations: tuple[ContextPreparation, ...]
    """This run's preparations, one per step."""
    session_path: Path
    """The native session file (``session.jsonl``), written up to the end of this run."""
    session_dir: Path
    """The session folder: archives, reduced artifacts, tool outputs, preparations."""

    @property
    def compactions(self) -> int:
        """Compactions applied in this run."""
        return sum(p.compaction_applied for p in self.preparations)


def _failing(exc: Exception) -> Stage:
    """Assembly for a step whose context source failed: the failure belongs to assembly."""
    def stage(state: PreparationState, settings: PipelineSettings
              ) -> tuple[PreparationState, StageRecord]:
        raise exc
    return stage


class AgentRunner:
    """A live agent session: ``AgentRunner.from_config(config, context_source=..., tools=...)``."""

    def __init__(self, config: RunnerConfig, *, model: ChatModel,
                 context_source: ContextSource | None = None, tools: Sequence[Tool] = (),
                 summariser: Summariser | None = None, prompts: PromptTemplates | None = None,
                 session_id: str | None = None, sink: EvidenceSink | None = None,
                 on_event: Callable[[PreparationEvent], object] | None = None,
                 cancel: Callable[[], bool] | None = None,
                 estimator: TokenEstimator | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.config, self.model, self.source = config, model, context_source
        self.clock = clock or (lambda: datetime.now(UTC))
        """The timestamps of the session file (injectable for deterministic tests)."""
        model_name = getattr(getattr(model, "endpoint", None), "model", None)
        self.record = self._open(session_id or f"live-{uuid.uuid4().hex[:12]}", model_name)
        self.session_id, self.session_dir = self.record.header.session_id, self.record.folder
        estimator = estimator or default_estimator()
        self.cache = TokenCache(estimator)
        engine = config.engine
        prompts = prompts if prompts is not None else configured_snapshot(engine, config.workspace_root)
        self.thresholds = t = resolve_thresholds(engine, config.limits, model_name)
        self.settings = PipelineSettings(
            config=engine, thresholds=t, memory=StepMemory(tokens=self.cache), prompts=prompts,
            summariser=summariser or ExtractiveSummariser(), work_dir=self.session_dir,
            tool_kinds=ToolKindMap.for_dialect(self.record.header.tool_dialect), cancel=cancel)
        self.summary_start = start_client_run(self.settings.summariser)  # a client's counters
        self.snapshot_id = config_snapshot_id(engine, prompts)
        self.context: tuple[Part, ...] = context_parts(config.context, self.cache)
        self.tools = tuple(ToolSpec(str(s["name"]), dict(s), estimator.tool_schema_tokens(s))
                           for s in with_engine_tools([tool.schema for tool in tools], engine))
        self.toolbox = ToolBox(tools, session_id=self.session_id, session_dir=self.session_dir,
                               transcript=lambda: self.record.messages,
                               workspace_root=config.workspace_root)
        self.publisher = Publisher(sink)
        if on_event is not None:
            self.publisher.broker.subscribe(on_event)
        self.walk = Walk(self.cache, self._session())
        self.carry = StepCarry()
        self.tracker = UsageTracker(model=model_name)
        self.calibration = Calibration.start(engine.estimate)
        self.preparations: list[ContextPreparation] = []
        self.requests: dict[str, PreparedRequest] = {}
        self.step_index = 0

    def _open(self, session_id: str, model_name: str | None) -> SessionRecord:
        """The session's folder (created) and record; a session id that is no safe folder name is
        refused before anything is written."""
        if not _SESSION_ID.fullmatch(session_id):
            raise ConfigError(f"session id {session_id!r} must be 1-128 letters, digits, '_', "
                              "'-' or '.', not starting with '.' (it names the session folder)",
                              field="session_id")
        root = self.config.sessions_dir
        root.mkdir(parents=True, exist_ok=True)
        workspace = self.config.workspace_root
        header = SessionHeader(session_id=session_id, title=self.config.title, model=model_name,
                               limits=self.config.limits, created_at=self.clock(),
                               workspace_root=str(workspace) if workspace else None)
        return SessionRecord(ensure_dir(root / session_id, root=root), header)

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_config(cls, config: RunnerConfig | Mapping[str, Any], *,
                    context_source: ContextSource | None = None, tools: Sequence[Tool] = (),
                    model: ChatModel | None = None, **options: Any) -> AgentRunner:
        """A runner from a configuration object or mapping (relative paths: the current
        folder). ``model`` replaces the configured endpoint's client; ``options`` are those of
        the constructor (``summariser``, ``prompts``, ``session_id``, ``sink``, ``on_event``,
        ``cancel``, ``estimator``)."""
        if not isinstance(config, RunnerConfig):
            config = parse_runner_config(config)
        if config.summariser == "endpoint" and options.get("summariser") is None:
            options["summariser"] = cls._summary_client(config)
        return cls(config, model=model or cls._client(config), context_source=context_source,
                   tools=tools, **options)

    @classmethod
    def from_config_file(cls, path: str | Path, *, context_source: ContextSource | None = None,
                         tools: Sequence[Tool] = (), model: ChatModel | None = None,
                         **options: Any) -> AgentRunner:
        """A runner from a runner YAML file (see :mod:`iris.runner.config`)."""
        return cls.from_config(load_runner_config(path), context_source=context_source,
                               tools=tools, model=model, **options)

    @staticmethod
    def _client(config: RunnerConfig) -> ChatModel:
        if config.endpoint is None:
            raise ConfigError("no endpoint configured and no model client given", field="endpoint")
        return OpenAIChatModel(config.endpoint)

    @staticmethod
    def _summary_client(config: RunnerConfig) -> Summariser:
        """The summary client on the configured endpoint (``summariser: endpoint``)."""
        e = config.endpoint
        if e is None:
            raise ConfigError("summariser: endpoint needs an endpoint", field="summariser")
        key = os.environ.get(e.api_key_env) if e.api_key_env else None
        return OpenAICompatibleSummariser(e.base_url, e.model, key or None, use_cache=False)

    @property
    def run_usage(self) -> RunUsage:
        """The provider usage of the session so far: main-model calls and summary calls apart."""
        return client_run_usage(self.tracker.totals, self.settings.summariser, self.summary_start)

    # ------------------------------------------------------------------ the loop

    @property
    def session(self) -> Session:
        """The session so far, as the workbench will import it."""
        return self._session().evolve(**UNCHANGED, compactions=tuple(self.record.compactions),
                                      context_snapshots=tuple(self.record.snapshots))

    def _session(self) -> Session:
        return Session(header=self.record.header, messages=tuple(self.record.messages))

    def run(self, user_input: str) -> RunResult:
        """One run: the user's message, then model calls and tool calls until an answer."""
        self.record.add_message(Message(role="user", content=(TextBlock(text=user_input),),
                                        timestamp=self.clock()))
        first = len(self.preparations)
        stop: Stop = "step_limit"
        answer: str | None = None
        error: str | None = None
        try:
            for _ in range(self.config.max_steps):
                reply, error = self._step()
                if reply is None:
                    stop = "cancelled" if self.preparations[-1].phase == "cancelled" else "failed"
                    break
                if not reply.tool_calls:
                    stop = "answered"
                    answer = "\n".join(b.text for b in reply.content if isinstance(b, TextBlock))
                    break
                for call in reply.tool_calls:
                    result = self.toolbox.run(call)
                    self.record.add_message(Message(role="tool", content=(result,),
                                                    timestamp=self.clock()))
        finally:
            self.record.flush()
        return RunResult(session_id=self.session_id, run_id=self._run_id(), stop=stop,
                         answer=answer, error=error,
                         preparations=tuple(self.preparations[first:]),
                         session_path=self.record.path, session_dir=self.session_dir)

    def _run_id(self) -> str:
        return f"{self.session_id}:run-{max(self.walk.runs - 1, 0)}"

    def _contributions(self, k: int) -> tuple[Part, ...]:
        if self.source is None:
            return ()
        scope = ContextBuildScope(session_id=self.session_id, run_id=self._run_id(), step_index=k,
                                  workspace_root=str(self.config.workspace_root)
                                  if self.config.workspace_root else None,
                                  run_input=self.walk.run_input)
        collector = Collector()  # its own loop: runners in other threads share the source only
        try:
            snapshot = collector.run(self.source.collect(scope))
        finally:
            collector.close()
        self.record.add_snapshot(StepSnapshot(step_index=k, contributions=tuple(
            RecordedContribution(key=c.key, text=c.text, required=c.required, priority=c.priority)
            for c in snapshot.contributions)))
        return contribution_parts(tuple(snapshot.contributions), self.cache)

    def _prepare(self, k: int) -> tuple[ContextPreparation, PreparedRequest | None, PreparationState]:
        walk = self.walk
        carry = self.carry = walk.advance(self._session(), len(self.record.messages), self.carry)
        stages: tuple[tuple[StageName, Stage], ...] = STAGES
        try:
            contributions = self._contributions(k)
        except Exception as exc:  # noqa: BLE001 -- the source failed: this step's assembly fails
            failing: tuple[StageName, Stage] = ("assembly", _failing(exc))
            contributions, stages = (), (failing, *STAGES[1:])
        state = PreparationState(
            step_index=k, context=self.context, contributions=contributions,
            durable=carry.durable, durable_tokens=carry.durable_tokens, tools=self.tools,
            called_tools=frozenset(walk.called), reduction_state=carry.reduction_state,
            seen=carry.seen, usage_reading=self.tracker.reading, diverged=False,
            compaction_state=carry.compaction_state, window=carry.window,
            todos_completed=walk.todos_completed, calibration=self.calibration)
        meta = StepMeta(configuration_snapshot_id=self.snapshot_id, run_id=self._run_id(),
                        session_id=self.session_id, step_index=k,
                        response_message_index=len(self.record.messages), activation="live")
        outcome = prepare(state, self.settings, meta, stages=stages)
        return outcome.preparation, outcome.request, outcome.state

    def _commit(self, p: ContextPreparation, state: PreparationState) -> None:
        """Carry a ready step's state forward; record an applied compaction in the session."""
        before = self.carry.durable
        self.carry = StepCarry.after(state)
        compaction = state.compaction
        if compaction is None or compaction.cut_index is None:
            return
        self.tracker = self.tracker.observe_compaction(p.final_input_tokens, compaction.summary_usage)
        tail = tuple(x.message for x in before[compaction.cut_index:])
        head = tuple(compaction.history[:len(compaction.history) - len(tail)])
        self.record.add_compaction(RecordedCompaction(
            at_message=len(self.record.messages), trigger="auto", pre_tokens=p.trigger_tokens,
            summary=head[0].text if head else None, source="iris:runner"), head, tail)
        # left out: not durable again
        self.carry = self.walk.advance(self._session(), len(self.record.messages), self.carry)

    def _publish(self, p: ContextPreparation, request: PreparedRequest | None) -> ContextPreparation:
        ref = self.publisher.publish(p, request)
        if isinstance(ref, str) and ref and request is not None:
            p = p.evolve(**UNCHANGED, final_request_ref=ref)
        self.preparations.append(p)
        if request is not None:
            self.requests[p.preparation_id] = request
        self.record.add_preparation(p)
        return p

    def _step(self) -> tuple[Message | None, str | None]:
        """One model step: prepare, send, record; (the reply, None) or (None, why it failed)."""
        k = self.step_index
        self.step_index += 1
        p, request, state = self._prepare(k)
        if p.phase != "ready" or request is None:
            for usage in rejected_summary_usage(p):
                self.tracker = self.tracker.observe_rejected_summary(usage)
            self._publish(p, None)
            why = p.error.message if p.error is not None else p.phase
            return None, f"step {k}: preparation {p.phase}: {why}"
        self._commit(p, state)
        try:
            reply = self.model.complete(wire_messages(request.messages, self.session_dir, request.marks),
                                        wire_tools(request.tools), id_prefix=f"call_{k}")
        except ModelCallFailed as exc:
            self._publish(p, request)
            return None, f"step {k}: model call failed: {exc}"
        message = reply.message.evolve(**UNCHANGED, timestamp=self.clock())
        usage = message.usage
        self.tracker = self.tracker.observe_response(
            usage, context_bytes=context_bytes(request.messages), model=message.model)
        tokens, kind = provider_reading(self.tracker, usage)  # as a replay states it
        p = p.evolve(**UNCHANGED, response_message_index=len(self.record.messages),
                     provider_prompt_tokens=tokens, provider_usage_kind=kind,
                     provider_usage_note=usage.usage_note if usage else None).with_id()
        self._publish(p, request)
        if usage is not None and usage.is_trusted:
            self.calibration = self.calibration.observe(k, p.final_input_tokens, usage.prompt_tokens)
        self.record.add_message(message)
        self.record.flush()
        return message, None
