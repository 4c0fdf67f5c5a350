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

from . import rerun
from .replay import default_workspace, open_saved

__all__ = ["ReplayTemplates", "RerunTarget", "default_workspace", "replay_templates", "rerun_target",
           "run_edited", "saved_snapshot"]


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

    store: Any
    replay_id: str
    replay_name: str
    session_id: str
    step: int
    original: rerun.StepOutcome
    inputs: rerun.ReplayInputs


def rerun_target(store: Any, replay_id: str | None, session_id: str | None,
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
    summarizer = rerun.make_summarizer(kind, inputs.session)
    if what == "step":
        return rerun.rerun_step(inputs, edited, target.step, progress=progress,
                                summarizer=summarizer)
    return rerun.rerun_replay(inputs, edited, progress=progress, summarizer=summarizer)
