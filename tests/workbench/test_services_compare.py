"""The Configuration page's comparison as a service (R-UI-6): the choices of a session, their
labels, and one ComparedRun per choice, replayed once while the caller keeps the cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.config import ContextConfig
from iris.prompts import PromptSnapshot

from workbench.services.compare import choice_label, choice_run, compare_choices
from workbench.services.presets import PRESET_NAMES, load_preset
from workbench.services.replay import replay_and_save
from workbench.storage.store import Store

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"


def test_r_ui_6_choices_labels_and_one_replay_per_configuration(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        session_id = store.import_file(SAMPLE).session_id
        info, _ = replay_and_save(store, session_id, name="mine")
        choices = compare_choices(store, session_id)
        assert list(choices)[:1 + len(PRESET_NAMES)] == ["editor", *(f"preset:{n}" for n in PRESET_NAMES)]
        assert choices[f"replay:{info.id}"] == "saved replay · mine"
        assert choice_label(f"replay:{info.id}", choices, " (A)") == "replay mine (A)"
        assert choice_label("preset:cost-first", choices) == "cost-first"

        cache: dict = {}
        seen: list[str] = []
        templates, default = PromptSnapshot.defaults(), load_preset("default")

        def summary(choice: str, label: str, editor: ContextConfig | None = default):
            return choice_run(store, session_id, choice, label, editor=editor,
                                  templates=templates, cache=cache,
                                  progress=lambda f, label: seen.append(label))

        first = summary("preset:cost-first", "cost-first")
        replayed = len(seen)
        again = summary("preset:cost-first", "cost-first")
        assert again is first and len(seen) == replayed > 0  # served from the cache
        assert first.label == "cost-first" and len(cache) == 1
        saved = summary(f"replay:{info.id}", "replay mine")
        assert saved.configuration_hash == info.configuration_hash and len(cache) == 1
        with pytest.raises(ValueError, match="not valid"):
            summary("editor", "editor", editor=None)
