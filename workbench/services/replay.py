"""Replays as the pages and the CLI use them: replay a stored session with a configuration and a
template snapshot, save the result under a name, and reopen it instantly.

Default replays are made lazily: the first time a session is opened in the app (or a step is asked
for from the CLI) and it has no replay yet, :func:`ensure_default_replay` replays it under the name
``default`` with the bundled configuration and templates, reporting progress; later opens read the
store. This keeps ``workbench import`` as fast as an import, and ``make run`` still opens on the
samples with their replays ready after the first look. Reopened replays are cached per store file,
replay id and save time, so switching pages never parses the store again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from iris.compaction.summarisers import Summariser
from iris.config import (
    ContextConfig,
    config_hash,
    config_to_yaml,
    default_config,
    parse_config,
)
from iris.errors import StorageError
from iris.frozen import UNCHANGED
from iris.preparation.records import ContextPreparation, PreparedRequest
from iris.prompts import PromptSnapshot, configured_snapshot
from iris.replay import AppliedCompaction, Replay, ReplayObservers, ReplayOptions, config_snapshot_id
from iris.replay import replay as run_replay
from iris.replay_options import Baseline
from iris.session import Message, Session
from iris.yaml_errors import read_yaml

from ..analysis.replay_reader import replay_facts
from ..analysis.words import counted
from ..progress import Progress, no_progress
from ..records import ArchiveRecord, EvidenceBundle, ReplayInfo
from ..storage.store import Store, workbench_home
from ..storage.stored import StoredReplay

if TYPE_CHECKING:  # the pricing package is imported only when prefixes are asked for
    from ..pricing.cache import Prefix

__all__ = [
    "BUDGET_REPLAY_NAME",
    "DEFAULT_REPLAY_NAME",
    "RECORDED_REPLAY_NAME",
    "StepFigures",
    "StreamedReplay",
    "budget_96k_config",
    "bundle_from_replay",
    "check_replay_owner",
    "default_workspace",
    "ensure_default_replay",
    "ensure_default_replays",
    "load_configuration",
    "open_saved",
    "replay_and_save",
    "replay_choices",
    "replay_session",
    "save_replay_result",
    "session_messages",
    "stream_replay",
    "summariser_name",
    "workspace_templates",
]

DEFAULT_REPLAY_NAME = "default"
BUDGET_REPLAY_NAME = "budget 96k"
RECORDED_REPLAY_NAME = "as recorded"
"""The as-recorded baseline replay saved next to ``default``."""
BUDGET_96K = 96000
def summariser_name(summariser: Summariser | None) -> str:
    """The summariser's declared ``kind`` as stored with a replay and shown in the UI:
    ``extractive`` (also for None, the engine's default), ``recorded``, ``remote``; ``custom`` for
    a summariser whose kind is empty."""
    if summariser is None:
        return "extractive"
    return summariser.kind or "custom"


def replay_session(session: Session, *, config: ContextConfig | None = None,
                   prompts: PromptSnapshot | None = None, summariser: Summariser | None = None,
                   progress: Progress = no_progress,
                   workspace_root: str | Path | None = None,
                   baseline: Baseline = "engine",
                   keep_bodies: bool = True) -> tuple[Replay, EvidenceBundle]:
    """Run the engine's replay and shape its result for the store: ``(replay, bundle)``.

    Without ``prompts`` the templates come from ``config.prompts.root`` under ``workspace_root``
    (default: the workbench workspace, as on the Templates page). ``keep_bodies=False``: no final
    request or archive text is kept (a replay that is not saved; each step's request holds the
    whole window, so keeping them all grows with steps × window)."""
    config = config or default_config()
    prompts = prompts or workspace_templates(config, workspace_root)

    def steps_done(done: int, total: int) -> None:
        progress(0.05 + 0.85 * done / max(total, 1), f"step {done:,} of {total:,}")

    result = run_replay(session, config, prompts=prompts, summariser=summariser,
                        observers=ReplayObservers(progress=steps_done),
                        options=ReplayOptions(baseline=baseline, keep_bodies=keep_bodies))
    progress(0.9, "shaping the records")
    return result, bundle_from_replay(result, config=config, prompts=prompts,
                                      summariser=summariser_name(summariser))


def default_workspace() -> Path:
    """The workbench's own workspace: ``$WORKBENCH_HOME/workspace`` (prompts under .iris/prompts).

    Defined here rather than with the template services, which import the re-run and comparison
    views (pandas, plotly): a command-line replay needs only this path."""
    return workbench_home() / "workspace"


def workspace_templates(config: ContextConfig, workspace_root: str | Path | None = None
                        ) -> PromptSnapshot:
    """The template snapshot of ``config.prompts.root`` under ``workspace_root`` (default: the
    workbench workspace); ``ConfigError`` for a configured root that is not a directory."""
    return configured_snapshot(config, workspace_root if workspace_root is not None
                               else default_workspace())


def bundle_from_replay(result: Replay, *, config: ContextConfig, prompts: PromptSnapshot,
                       summariser: str = "extractive") -> EvidenceBundle:
    """An :class:`EvidenceBundle` of an ``iris.replay.Replay`` plus its configuration/templates.

    The store is the evidence layer: each final request is filed under its content hash, which
    becomes the preparation's ``final_request_ref`` (None in the engine's record, R-PREP-1)."""
    preparations: list[ContextPreparation] = []
    requests: dict[str, PreparedRequest] = {}
    for p in result.preparations:
        request = result.request(p)
        if request is not None:
            ref = p.final_request_ref or request.ref
            requests[ref] = request
            p = p if p.final_request_ref == ref else p.evolve(**UNCHANGED, final_request_ref=ref)
        preparations.append(p)
    archives = tuple(
        ArchiveRecord(n=n, step_index=c.step_index, path=c.archive_name,
                      text=result.archives.get(c.archive_name, ""), checkpoint_text=c.checkpoint_text)
        for n, c in enumerate(result.checkpoints, start=1))
    return _header(config, prompts, summariser, result.configuration_snapshot_id).evolve(
        **UNCHANGED, preparations=tuple(preparations), requests=requests, archives=archives,
        facts=replay_facts(result, warnings=config.warnings))


def _header(config: ContextConfig, prompts: PromptSnapshot, summariser: str,
            snapshot_id: str) -> EvidenceBundle:
    """What a saved replay keeps besides its steps: configuration, templates, summariser."""
    return EvidenceBundle(
        preparations=(), configuration_snapshot_id=snapshot_id,
        configuration_hash=config_hash(config),
        configuration_json=config.model_dump(mode="json", exclude={"warnings"}),
        configuration_yaml=config_to_yaml(config), template_snapshot_id=prompts.snapshot_id,
        template_sources=dict(prompts.sources), summariser=summariser)


_HEAVY = ("stages", "final_tools", "final_contribution_keys", "protected_sources")
_FIGURES = tuple(n for n in ContextPreparation.model_fields if n not in _HEAVY)


class StageFigures(NamedTuple):
    """One stage of a :class:`StepFigures`: its tokens, not its decisions."""

    name: str
    status: str
    before_input_tokens: int
    after_input_tokens: int
    decisions: tuple[Any, ...] = ()


class StepFigures:
    """What a streamed replay keeps of a step that applied no compaction: every scalar field of
    its record (``step_index``, ``phase``, the token figures, calibration, usage…) and each
    stage's tokens; read by attribute as the record is (summaries, figures, run summaries and
    cost read them so). A few hundred bytes, where the record with its decisions is tens of
    kilobytes."""

    __slots__ = (*_FIGURES, "stages")

    def __init__(self, preparation: ContextPreparation) -> None:
        for name in _FIGURES:
            setattr(self, name, getattr(preparation, name))
        self.stages = tuple(StageFigures(s.name, s.status, s.before_input_tokens,
                                         s.after_input_tokens) for s in preparation.stages)

    def stage(self, name: str) -> StageFigures | None:
        return next((s for s in self.stages if s.name == name), None)


def _figures_of(preparation: ContextPreparation) -> Any:
    """What a streamed replay keeps of a step: its :class:`StepFigures`, or the whole record
    when it applied a compaction (its decisions say how; there are few such steps)."""
    return preparation if preparation.compaction_applied else StepFigures(preparation)


@dataclass
class _StepTee:
    """The evidence sink of a streamed replay: each step goes to the store's sink (when saving)
    and to the prefix sink (when pricing), and only its figures stay (whole records with
    ``keep``). A store failure is kept and raised once the replay ends (the engine's publisher
    would otherwise note it and go on)."""

    store: Any = None
    prefixes: Any = None
    keep: bool = False
    steps: list[Any] = field(default_factory=list)
    error: Exception | None = None
    archives: int = 0

    def save(self, preparation: ContextPreparation, request: PreparedRequest | None) -> str | None:
        ref = None
        if self.store is not None and self.error is None:
            try:
                ref = self.store.save(preparation, request)
            except Exception as exc:  # noqa: BLE001 -- raised after the replay, see the class doc
                self.error = exc
        if self.prefixes is not None:
            self.prefixes.save(preparation, request)
        self.steps.append(preparation if self.keep else _figures_of(preparation))
        return ref

    def archive(self, applied: AppliedCompaction, text: str) -> None:
        self.archives += 1
        if self.store is not None and self.error is None:
            self.store.archive(ArchiveRecord(n=self.archives, step_index=applied.step_index,
                                             path=applied.archive_name, text=text,
                                             checkpoint_text=applied.checkpoint_text))


@dataclass(frozen=True)
class StreamedReplay:
    """A replay streamed into the store (or through it with nothing saved): ``result`` is the
    engine's result with each preparation as :func:`stream_replay` kept it and no request or
    archive body; ``prefixes`` each ready step's cache prefix (when asked for), what
    ``replay_cost`` reads from request bodies; ``info`` the saved replay (None: not saved)."""

    result: Replay
    info: ReplayInfo | None = None
    prefixes: dict[int, Prefix] | None = None
    template_snapshot_id: str | None = None
    """The prompt template snapshot the replay rendered with."""


def stream_replay(session: Session, *, store: Store | None = None, session_id: str = "",
                  name: str = DEFAULT_REPLAY_NAME, config: ContextConfig | None = None,
                  prompts: PromptSnapshot | None = None, summariser: Summariser | None = None,
                  progress: Progress = no_progress, baseline: Baseline = "engine",
                  keep_records: bool = False, prefixes: bool = False) -> StreamedReplay:
    """Replay ``session`` and write each step into ``store`` under ``name`` as it is made (None:
    nothing saved), holding one step at a time: the saved replay reads back as a whole replay
    saved in one piece did. The result's ``preparations`` are each step's :class:`StepFigures`
    (a step that applied a compaction keeps its record): every figure the summary, run summary,
    facts and cost state, read by attribute; ``keep_records``: the records, whole, as the engine
    made them (``--json``). ``prefixes``: also each step's cache prefix, for pricing the replay
    as one that kept its request bodies is priced."""
    config = config or default_config()
    prompts = prompts or workspace_templates(config)
    name_of = summariser_name(summariser)
    sink = None
    if prefixes:
        from ..pricing.prefixes import prefix_sink

        sink = prefix_sink(session)
    tee = _StepTee(prefixes=sink, keep=keep_records)

    def steps_done(done: int, total: int) -> None:
        progress(0.05 + 0.85 * done / max(total, 1), f"step {done:,} of {total:,}")

    def run() -> Replay:
        result = run_replay(session, config, prompts=prompts, summariser=summariser,
                            observers=ReplayObservers(progress=steps_done, sink=tee,
                                                      on_compaction=tee.archive),
                            options=ReplayOptions(baseline=baseline, keep_bodies=False,
                                                  keep_records=False))
        if tee.error is not None:
            raise tee.error
        if result.observation_failures:  # the sink and archive hook are this function's own
            raise StorageError(f"the replay could not be kept: {result.observation_failures[0]}")
        return result.evolve(**UNCHANGED, preparations=tuple(tee.steps))

    if store is None:
        result, info = run(), None
    else:
        header = _header(config, prompts, name_of, config_snapshot_id(config, prompts))
        with store.replays.streamed(header, session_id=session_id, name=name) as sink:
            tee.store = sink
            result = run()
            progress(0.95, "saving")
            info = sink.finish(replay_facts(result, warnings=config.warnings))
    return StreamedReplay(result=result, info=info,
                          prefixes=tee.prefixes.prefixes if tee.prefixes is not None else None,
                          template_snapshot_id=prompts.snapshot_id)


def load_configuration(path: str | Path | None) -> ContextConfig:
    """The configuration file or preset name at ``path`` (ConfigError names file/line/field), or
    the default."""
    from .presets import resolve_config

    return resolve_config(path or None)


def replay_and_save(store: Store, session_id: str, *, name: str = DEFAULT_REPLAY_NAME,
                    config: ContextConfig | None = None, prompts: PromptSnapshot | None = None,
                    summariser: Summariser | None = None, progress: Progress = no_progress,
                    baseline: Baseline = "engine") -> tuple[ReplayInfo, Any]:
    """Replay a stored session and save it under ``name`` (replacing one of that name), each
    step written as it is made (:func:`stream_replay`): the result keeps each step's figures
    (:class:`StepFigures`), not its decisions, request or archive bodies (the saved replay has
    those)."""
    progress(0.0, "reading the session")
    session = store.session(session_id)
    streamed = stream_replay(session, store=store, session_id=session_id, name=name,
                             config=config, prompts=prompts, summariser=summariser,
                             progress=progress, baseline=baseline)
    store.session_tokens(session_id, session.messages)  # the replay has just counted every message
    progress(1.0, "ready")
    return cast("ReplayInfo", streamed.info), streamed.result


def budget_96k_config() -> ContextConfig:
    """The bundled configuration with ``compaction.input_budget_tokens: 96000`` set explicitly."""
    data = cast("dict[str, Any]", read_yaml(config_to_yaml(default_config()), None)[0])
    data["compaction"]["input_budget_tokens"] = BUDGET_96K
    return parse_config(data, source="bundled default + input_budget_tokens 96000")


def ensure_default_replay(store: Store, session_id: str,
                          progress: Progress = no_progress) -> ReplayInfo:
    """The session's ``default`` replay (bundled configuration), made now if it does not exist.

    When that configuration takes a budget other than the spec's 96,000 (usually from the model
    limits recorded in the session), a second replay ``budget 96k`` is made with
    ``compaction.input_budget_tokens: 96000``, so long sessions show compaction at work too. Next
    to them, ``as recorded`` is the as-recorded baseline: what the agent really sent (no engine
    reduction or compaction, the recorded compactions applied where they happened).
    """
    existing = store.replays.find(session_id, DEFAULT_REPLAY_NAME)
    if existing is not None:
        return existing
    def third(lo: float) -> Progress:
        return lambda f, label: progress(lo + f / 3, label)

    info, result = replay_and_save(store, session_id, progress=third(0.0))
    if store.replays.find(session_id, RECORDED_REPLAY_NAME) is None:
        replay_and_save(store, session_id, name=RECORDED_REPLAY_NAME, baseline="recorded",
                        progress=third(1 / 3))
    if result.thresholds.input_budget != BUDGET_96K and \
            store.replays.find(session_id, BUDGET_REPLAY_NAME) is None:
        replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME, config=budget_96k_config(),
                        progress=third(2 / 3))
    progress(1.0, "ready")
    return info


def ensure_default_replays(store: Store, progress: Progress = no_progress) -> tuple[ReplayInfo, ...]:
    """:func:`ensure_default_replay` for every stored session (``workbench replay --defaults``)."""
    sessions = store.list_sessions()
    out: list[ReplayInfo] = []
    for i, summary in enumerate(sessions):
        def part(fraction: float, label: str, i: int = i, sid: str = summary.id) -> None:
            progress((i + fraction) / len(sessions), f"{sid}: {label}")
        out.append(ensure_default_replay(store, summary.id, progress=part))
    return tuple(out)


def replay_choices(store: Store, session_id: str) -> dict[str, str]:
    """Replay id → label for the sidebar picker (default first, then by save time)."""
    replays = sorted(store.replays.list(session_id),
                     key=lambda r: (r.name != DEFAULT_REPLAY_NAME, r.created_at, r.name))
    return {r.id: f"{r.name} · {counted(r.step_count, 'step')} · {r.summariser}" for r in replays}


def replay_id_named(store: Store, session_id: str, name: str) -> str | None:
    """The id of the session's replay saved under ``name`` (the CLI's ``--name``; a link may name
    a replay by it), or None."""
    found = store.replays.find(session_id, name)
    return None if found is None else found.id


def open_saved(store: Store, replay_id: str) -> StoredReplay:
    """A reopened replay, from the store's cache until the replay is saved again."""
    return store.replays.open(replay_id)


def session_messages(store: Store, session_id: str) -> tuple[Message, ...]:
    """The recorded messages of a stored session (the originals a marked request points at)."""
    return store.messages(session_id)


def save_replay_result(store: Store, bundle: EvidenceBundle, *, session_id: str, name: str,
                       computed_for: str | None = None) -> ReplayInfo:
    """Save an already computed replay (the CLI's ``--name``) under ``name``.

    A replay is saved only under the session it was computed for: ``computed_for`` (the stored
    session the caller computed it from) must be ``session_id``, and the session its records name
    must be the stored session's own; otherwise a :class:`StorageError` says so and nothing is saved.
    """
    check_replay_owner(store, bundle, session_id=session_id, computed_for=computed_for)
    return store.replays.save(bundle, session_id=session_id, name=name)


def check_replay_owner(store: Store, bundle: EvidenceBundle, *, session_id: str,
                       computed_for: str | None = None) -> None:
    """Refuse to store ``bundle`` under ``session_id`` when it was computed for another session."""
    if computed_for is not None and computed_for != session_id:
        raise StorageError(f"this replay was computed for session {computed_for!r}; refusing to "
                           f"save it under session {session_id!r} (re-run it on that session)")
    own = store.header(session_id).session_id or ""
    recorded = sorted({p.session_id for p in bundle.preparations} - {own})
    if own and recorded:
        raise StorageError(f"this replay's records belong to session {recorded[0]!r}; refusing to "
                           f"save it under session {session_id!r} (recorded id {own!r})")
