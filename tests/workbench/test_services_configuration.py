"""The Configuration page's services (R-UI-6): what a replay would use (templates, endpoint,
summarisers), "Replay and save" with a configuration and a summariser, and the A/B comparison of
two choices with the agent's recorded compactions, on a real store with the real engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.config import config_hash
from iris.prompts import PromptSnapshot
from truth_helpers import RECORDED_STEP, store_long_with_recorded_compaction

from workbench.analysis.compared_run import ComparedRun
from workbench.services.compare import compare_choices, compare_pair
from workbench.services.configuration import replay_setup, replay_with
from workbench.services.presets import load_preset
from workbench.storage.store import Store

BUGFIX = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"


def test_r_ui_6_replay_setup_names_templates_endpoint_and_summarisers(tmp_path, monkeypatch,
                                                                      workbench_home):
    for name in ("WORKBENCH_SUMMARY_BASE_URL", "WORKBENCH_SUMMARY_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with Store(tmp_path / "workbench.db") as store:
        session_id = store.import_file(BUGFIX).session_id
        setup = replay_setup(store, session_id, load_preset("default"))
        assert setup.summarisers == ("extractive",)  # no recorded summaries, no endpoint
        assert setup.endpoint.startswith("not configured")
        assert setup.templates.problem is None and "prompts.root" in setup.templates.where
        prompts = workbench_home / "workspace" / ".iris" / "prompts"
        prompts.mkdir(parents=True)
        (prompts / "compaction.j2").write_text("{% if %}", encoding="utf-8")
        broken = replay_setup(store, session_id, None).templates
        assert broken.problem is not None and "compaction" in broken.problem
        assert broken.where == "the packaged default templates"
        assert broken.snapshot.snapshot_id == PromptSnapshot.defaults().snapshot_id


def test_r_ui_6_replay_with_saves_under_the_name_and_summarises(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        session_id = store.import_file(BUGFIX).session_id
        config, seen = load_preset("cost-first"), []
        name, run = replay_with(store, session_id, "mine", config=config,
                                templates=PromptSnapshot.defaults(), summariser="extractive",
                                progress=lambda f, label: seen.append(f))
        saved = store.replays.find(session_id, "mine")
        assert saved is not None and name == "mine" == run.label
        assert saved.configuration_hash == config_hash(config) and saved.summariser == "extractive"
        assert len(run.steps) == saved.step_count and seen[-1] == 1.0
        with pytest.raises(ValueError, match="not valid"):
            replay_with(store, session_id, "bad", config=None,
                        templates=PromptSnapshot.defaults(), summariser="extractive")
        assert store.replays.find(session_id, "bad") is None


def test_r_ui_6_compare_pair_labels_both_sides_halves_the_bar_and_marks_the_agent(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        session_id = store_long_with_recorded_compaction(store)
        choices = compare_choices(store, session_id)
        cache: dict[object, ComparedRun] = {}
        seen: list[tuple[float, str]] = []

        def compare(a: str, b: str):
            return compare_pair(store, session_id, a, b, choices=choices, editor=None,
                                templates=PromptSnapshot.defaults(), cache=cache,
                                progress=lambda f, label: seen.append((f, label)))

        pair = compare("preset:quality-first", "preset:cost-first")
        assert [r.label for r in pair.runs] == ["quality-first", "cost-first"]
        assert [m.step for m in pair.marks] == [RECORDED_STEP]
        a_side = [f for f, label in seen if label.startswith("A: ")]
        b_side = [f for f, label in seen if label.startswith("B: ")]
        assert a_side and b_side and max(a_side) <= 0.5 <= min(b_side) and max(b_side) <= 1.0
        same = compare("preset:cost-first", "preset:cost-first")
        assert [r.label for r in same.runs] == ["cost-first (A)", "cost-first (B)"]
        with pytest.raises(ValueError, match="not valid"):
            compare("editor", "preset:default")
