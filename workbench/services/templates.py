"""What the Templates page does beyond rendering: where the workbench keeps its templates, which
step of a saved replay an edit can be re-run at (with what the engine rendered there), and the
re-run itself with the chosen summariser (R-UI-4, R-PRM-1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from iris.config import ContextConfig
from iris.errors import ConfigError, TemplateError
from iris.prompts import PromptConfig, PromptSnapshot, PromptSource, configured_snapshot
from pydantic import BaseModel, ConfigDict

from ..records import ReplayInfo
from ..storage.store import Store
from . import rerun
from .replay import default_workspace, open_saved, save_replay_result
from .summarisers import make_summariser

__all__ = ["ReplayTemplates", "RerunPlan", "RerunTarget", "default_workspace", "replay_templates",
           "rerun_plan", "rerun_target", "run_edited", "save_edited_replay", "save_template",
           "saved_snapshot"]


def saved_snapshot(workspace: str | Path, config: Any = None) -> PromptSnapshot:
    """The workspace's saved templates under ``config``'s ``prompts.root`` (default
    ``.iris/prompts``; packaged defaults for ids without a file; ``ConfigError`` for a configured
    root that is not a directory)."""
    if config is None:
        return PromptSource(workspace).snapshot()
    return configured_snapshot(config, workspace)


class ReplayTemplates(BaseModel):
    """The templates a replay started from the Configuration page uses, in words for the page."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    snapshot: PromptSnapshot
    where: str
    problem: str | None = None
    """Why the saved templates could not be used (the packaged defaults are used instead)."""


def replay_templates(config: ContextConfig | None) -> ReplayTemplates:
    """The workspace's saved templates under ``config``'s ``prompts.root`` (the default root when
    the configuration is not valid); the packaged defaults when a saved template is broken."""
    try:
        snapshot = saved_snapshot(default_workspace(), config)
    except (TemplateError, ConfigError) as exc:  # a broken saved template must not block a replay
        return ReplayTemplates(snapshot=PromptSnapshot.defaults(),
                               where="the packaged default templates", problem=str(exc))
    root = config.prompts.root if config is not None else PromptConfig().root
    return ReplayTemplates(snapshot=snapshot,
                           where=f"the workspace's saved templates (prompts.root `{root}`)")


class RerunTarget(BaseModel):
    """A saved replay's compaction step an edit is re-run at, with what the engine did there."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    store: Store
    replay_id: str
    replay_name: str
    session_id: str
    step: int
    original: rerun.StepOutcome
    inputs: rerun.ReplayInputs


def rerun_target(store: Store, replay_id: str | None, session_id: str | None,
                 selected_step: int | None) -> RerunTarget | str:
    """The compaction step nearest ``selected_step`` of the replay, or why there is none."""
    if session_id is None or replay_id is None:
        return ("Open a session (Sessions page) and pick a replay in the sidebar to render "
                "with a real step's variables and re-run its compaction.")
    stored = open_saved(store, replay_id)
    step = rerun.nearest_compaction_step(rerun.compaction_steps(stored), selected_step)
    if step is None:
        return (f"No compaction was planned in replay **{stored.info.name}**, so the engine "
                "never rendered the compaction templates. Pick another replay in the sidebar "
                "(e.g. `budget 96k`) or replay with a smaller budget on the Configuration page.")
    return RerunTarget(store=store, replay_id=stored.id, replay_name=stored.info.name,
                       session_id=stored.info.session_id, step=step,
                       original=rerun.original_step(store, replay_id, step),
                       inputs=rerun.saved_inputs(store, stored.id))


def run_edited(target: RerunTarget, current: PromptSnapshot, kind: str,
               what: Literal["step", "replay"], progress: Callable[[int, int], object] | None = None
               ) -> rerun.StepComparison | rerun.ReplayComparison:
    """Re-run the target's step (or the whole replay) with the replay's own templates and with
    ``current``'s compaction templates, summarised by ``kind``."""
    inputs = target.inputs
    edited = rerun.with_engine_templates(inputs.snapshot, current)
    summariser = make_summariser(kind, inputs.session)
    if what == "step":
        return rerun.rerun_step(inputs, edited, target.step, progress=progress,
                                summariser=summariser)
    return rerun.rerun_replay(inputs, edited, progress=progress, summariser=summariser)


def save_template(source: PromptSource, base: PromptSnapshot, prompt_id: str, text: str
                  ) -> tuple[Path, PromptSnapshot]:
    """Write ``text`` as ``prompt_id``'s template under ``source`` (the engine's safe write:
    ``IrisError`` for a refused target) and return the file with the new saved snapshot."""
    path = source.save(prompt_id, text)
    return path, base.with_template(prompt_id, text)


class RerunPlan(BaseModel):
    """What a re-run of the target with the page's snapshot would run, and its identity."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    snapshot: PromptSnapshot
    """The replay's own snapshot with the page's engine-rendered templates."""
    changed: tuple[str, ...]
    """The engine-rendered templates that differ from the replay's own."""
    kind: str
    """The summariser of both sides."""
    key: tuple[str, int, str, str]
    """(replay id, step, snapshot id, summariser): a kept result with another key is stale."""


def rerun_plan(target: RerunTarget, current: PromptSnapshot, kind: str) -> RerunPlan:
    """The snapshot a re-run of ``target`` uses with the page's ``current`` snapshot and the
    summariser ``kind``."""
    own = target.inputs.snapshot
    edited = rerun.with_engine_templates(own, current)
    return RerunPlan(snapshot=edited, changed=tuple(edited.edited_ids(own)), kind=kind,
                     key=(target.replay_id, target.step, edited.snapshot_id, kind))


def save_edited_replay(store: Store, result: rerun.ReplayComparison, name: str,
                       session_id: str | None) -> ReplayInfo:
    """Save the edited side of a whole re-run as replay ``name`` under ``session_id`` (the
    sidebar's session); refused with ``StorageError`` when the re-run was computed for another."""
    return save_replay_result(store, result.edited_bundle, name=name.strip(),
                              session_id=session_id or "", computed_for=result.session_id)
