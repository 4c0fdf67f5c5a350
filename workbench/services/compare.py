"""The Configuration page's A/B comparison: each side is the editor's configuration, a preset or a
saved replay of the session, reduced to a :class:`~workbench.analysis.compared_run.ComparedRun` (saved
replays are read back; configurations are replayed, once per session, configuration, template
snapshot and label while the caller keeps ``cache``) (R-UI-6)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from iris.config import ContextConfig, config_hash, parse_config
from iris.fidelity import LossRecord
from iris.frozen import UNCHANGED, FrozenModel
from iris.prompts import PromptSnapshot

from ..analysis.compared_run import ComparedRun, compared_run
from ..analysis.fidelity import replay_losses
from ..records import RecordedMark
from ..storage.store import Store
from .fidelity import saved_losses
from .presets import PRESET_NAMES, preset_text
from .replay import open_saved, replay_session
from .truth import session_marks

__all__ = ["Comparison", "choice_label", "choice_run", "compare_choices", "compare_pair"]


def compare_choices(store: Store, session_id: str) -> dict[str, str]:
    """Choice key → words: the editor, every preset, every saved replay of the session."""
    saved = {f"replay:{r.id}": f"saved replay · {r.name}" for r in store.replays.list(session_id)}
    return {"editor": "this editor's configuration",
            **{f"preset:{n}": f"preset · {n}" for n in PRESET_NAMES}, **saved}


def choice_label(choice: str, choices: Mapping[str, str], suffix: str = "") -> str:
    """The short label a chart and the tables use for one choice (``suffix`` tells A from B)."""
    label = {"editor": "editor"}.get(choice) or choices[choice].replace("saved replay · ", "replay ")
    return label.removeprefix("preset · ") + suffix


def choice_run(store: Store, session_id: str, choice: str, label: str, *,
                   editor: ContextConfig | None, templates: PromptSnapshot,
                   cache: MutableMapping[Any, ComparedRun],
                   progress: Callable[[float, str], None]) -> ComparedRun:
    """A ComparedRun of one choice; ``ValueError`` when the editor's configuration is chosen but
    not valid."""
    if choice.startswith("replay:"):
        saved = open_saved(store, choice.removeprefix("replay:"))
        return compared_run(label, saved, configuration_hash=saved.info.configuration_hash,
                           template_snapshot_id=saved.info.template_snapshot_id).evolve(
            **UNCHANGED, fidelity=saved_losses(store, session_id, saved).replay)
    config = editor if choice == "editor" else parse_config(
        preset_text(choice.removeprefix("preset:")), source="<editor>")
    if config is None:
        raise ValueError("the editor's configuration is not valid; fix it first")
    key = (session_id, config_hash(config), templates.snapshot_id, label)
    if key not in cache:
        result, _ = replay_session(store.session(session_id), config=config,
                                   prompts=templates, progress=progress)
        cache[key] = compared_run(label, result, configuration_hash=config_hash(config),
                                 template_snapshot_id=templates.snapshot_id).evolve(
            **UNCHANGED, fidelity=replay_losses(store.session(session_id), result).replay)
    return cache[key]


class Comparison(FrozenModel):
    """Two choices compared on one session: their compared runs (A, B) and the agent's recorded
    compactions placed on the session's responses (for the chart and the who-compacted table)."""

    runs: tuple[ComparedRun, ComparedRun]
    marks: tuple[RecordedMark, ...]
    agent_losses: tuple[LossRecord, ...] = ()
    """What the agent's own recorded compactions lost (docs/fidelity.md)."""


def compare_pair(store: Store, session_id: str, a: str, b: str, *, choices: Mapping[str, str],
                 editor: ContextConfig | None, templates: PromptSnapshot,
                 cache: MutableMapping[Any, ComparedRun],
                 progress: Callable[[float, str], None]) -> Comparison:
    """Choices ``a`` and ``b`` (keys of ``choices``) as compared runs, A's progress on the first half
    of the bar and B's on the second; the same choice twice is labelled ``(A)`` and ``(B)``."""
    same = " (A)" if a == b else ""
    first = choice_run(store, session_id, a, choice_label(a, choices, same), editor=editor,
                           templates=templates, cache=cache,
                           progress=lambda f, label: progress(f / 2, f"A: {label}"))
    second = choice_run(store, session_id, b, choice_label(b, choices, " (B)" if same else ""),
                            editor=editor, templates=templates, cache=cache,
                            progress=lambda f, label: progress(0.5 + f / 2, f"B: {label}"))
    return Comparison(runs=(first, second), marks=session_marks(store, session_id),
                      agent_losses=saved_losses(store, session_id).recorded)
