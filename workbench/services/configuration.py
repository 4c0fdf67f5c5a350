"""What the Configuration page's "Replay with this configuration" does (R-UI-6): the templates,
summary endpoint and summarisers a replay of the session can use, and the replay itself, saved
under a name and reduced to a :class:`~workbench.analysis.compared_run.ComparedRun` for the page to show."""

from __future__ import annotations

from iris.config import ContextConfig
from iris.frozen import FrozenModel
from iris.prompts import PromptSnapshot

from ..analysis.compared_run import ComparedRun, compared_run
from ..progress import Progress, no_progress
from ..storage.store import Store
from .replay import replay_and_save
from .summarisers import endpoint_status, stored_summariser, stored_summariser_options
from .templates import ReplayTemplates, replay_templates

__all__ = ["ReplaySetup", "replay_setup", "replay_with"]


class ReplaySetup(FrozenModel):
    """What a replay from the Configuration page would use."""

    templates: ReplayTemplates
    """The workspace's saved templates (or the packaged defaults, with the reason)."""
    endpoint: str
    """Whether an OpenAI-compatible summary endpoint is configured, in words."""
    summarisers: tuple[str, ...]
    """The summarisers this session can be replayed with (``extractive`` first)."""


def replay_setup(store: Store, session_id: str, config: ContextConfig | None) -> ReplaySetup:
    """The templates under ``config``'s ``prompts.root`` (the default root for an invalid
    configuration, None), the endpoint and the summarisers for ``session_id``."""
    return ReplaySetup(templates=replay_templates(config), endpoint=endpoint_status(),
                       summarisers=stored_summariser_options(store, session_id))


def replay_with(store: Store, session_id: str, name: str, *, config: ContextConfig | None,
                templates: PromptSnapshot, summariser: str,
                progress: Progress = no_progress) -> tuple[str, ComparedRun]:
    """Replay the stored session with ``config``, ``templates`` and the summariser named
    ``summariser``, save it as ``name`` (replacing one of that name) and return the saved name
    with its summary; ``ValueError`` when the configuration is not valid (None)."""
    if config is None:
        raise ValueError("the editor's configuration is not valid; fix it first")
    info, result = replay_and_save(store, session_id, name=name, config=config, prompts=templates,
                                   progress=progress,
                                   summariser=stored_summariser(store, session_id, summariser))
    return info.name, compared_run(info.name, result)
