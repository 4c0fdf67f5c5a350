"""AppTest for the Configuration page (R-UI-6): YAML validation inline, the form kept in sync with
the YAML both ways, presets loaded by name, replay with progress saved to the store, and the A/B
comparison of two configurations on one chart with totals and cut points."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
import yaml
from iris.config import parse_config
from iris.prompts import PromptSnapshot
from iris.replay import replay
from store_helpers import copy_store
from streamlit.testing.v1 import AppTest

from workbench.importers import load_session
from workbench.services.presets import preset_text
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
PAGE = "../pages/configuration.py"


def _open(sample: str | None) -> AppTest:
    if sample is not None:
        with open_store() as store:
            store.import_file(ROOT / "sample_sessions" / f"{sample}.jsonl")
    at = AppTest.from_file(APP, default_timeout=120).run()
    return at.switch_page(PAGE).run()


@pytest.fixture
def long_page(workbench_home, long_store) -> AppTest:
    """The long sample (compacts under the cost-first preset), replays already made."""
    copy_store(long_store, workbench_home)
    return _open(None)


@cache
def _engine_cuts(threshold: float) -> list[int]:
    """Compaction steps of the cost-first preset at ``threshold``, from the engine directly."""
    data = yaml.safe_load(preset_text("cost-first"))
    data["compaction"]["threshold"] = threshold
    loaded = load_session(ROOT / "sample_sessions" / "long_session.jsonl")
    result = replay(loaded.session, parse_config(data),
                    prompts=PromptSnapshot.defaults())
    return [c.step_index for c in result.checkpoints]


@pytest.fixture
def small_page() -> AppTest:
    """A tiny sample for the editor-only tests."""
    return _open("unanswered")


def test_r_ui_6_empty_store_edits_but_asks_for_a_session():
    at = _open(None)
    assert not at.exception
    text = at.text_area(key="cfg_yaml").value
    assert text is not None and text.startswith('# Preset "default"')
    assert "Valid" in at.success[0].value
    assert "Sessions page" in at.info[0].value


def test_r_ui_6_invalid_yaml_shows_field_line_and_reason_and_locks_the_form(small_page):
    at = small_page
    at.text_area(key="cfg_yaml").input("compaction:\n  threshold: 0.7\n  keep_recent_ratio: 2\n").run()
    assert not at.exception
    error = at.error[0].value
    assert "field `compaction.keep_recent_ratio`" in error and "line 3" in error
    assert "0 < value < 1" in error
    assert at.number_input(key="cfg_f_threshold").disabled
    assert at.button(key="cfg_replay").disabled


def test_r_cmp_2_fallback_is_a_warning_and_the_form_shows_the_effective_value(small_page):
    at = small_page
    at.text_area(key="cfg_yaml").input("compaction:\n  threshold: 7\n").run()
    assert not at.error
    assert "compaction.threshold: 7" in at.warning[0].value
    assert at.number_input(key="cfg_f_threshold").value == 0.8


def test_r_ui_6_form_and_yaml_stay_in_sync(small_page):
    at = small_page
    at.number_input(key="cfg_f_threshold").set_value(0.55).run()
    assert "  threshold: 0.55\n" in at.text_area(key="cfg_yaml").value
    at.toggle(key="cfg_f_reduction_enabled").set_value(False).run()
    assert "reduction: false" in at.text_area(key="cfg_yaml").value
    text = at.text_area(key="cfg_yaml").value.replace("reserved: 0", "reserved: 8000")
    at.text_area(key="cfg_yaml").input(text).run()
    assert at.number_input(key="cfg_f_reserved").value == 8000
    assert at.number_input(key="cfg_f_threshold").value == 0.55


def test_r_ui_6_preset_loads_by_name_into_editor_and_form(small_page):
    at = small_page
    at.selectbox(key="cfg_preset").select("cost-first")
    at.button(key="cfg_load_preset").click().run()
    assert at.text_area(key="cfg_yaml").value.startswith('# Preset "cost-first"')
    assert at.number_input(key="cfg_f_input_budget_tokens").value == 64000
    assert at.number_input(key="cfg_f_threshold").value == 0.7


def test_r_ui_6_threshold_change_replays_to_a_different_number_of_compactions(long_page):
    at = long_page
    at.selectbox(key="cfg_preset").select("cost-first")
    at.button(key="cfg_load_preset").click().run()
    at.text_input(key="cfg_replay_name").input("cost").run()
    at.button(key="cfg_replay").click().run()
    assert not at.exception, at.exception
    first, lower = _engine_cuts(0.7), _engine_cuts(0.4)
    assert len(first) != len(lower)  # the premise: a lower threshold compacts more often
    steps = ", ".join(map(str, first))
    assert f"**{len(first)} compactions** (steps {steps})" in at.success[-1].value
    at.number_input(key="cfg_f_threshold").set_value(0.4).run()
    at.button(key="cfg_replay").click().run()
    assert f"**{len(lower)} compactions**" in at.success[-1].value
    with open_store() as store:
        saved = store.replays.find(store.list_sessions()[0].id, "cost")
    assert saved is not None and saved.compactions_applied == len(lower)  # saving the same name replaces the replay


def test_r_ui_6_compare_two_presets_on_one_chart(long_page):
    at = long_page
    at.selectbox(key="cfg_a").select("preset:quality-first")
    at.selectbox(key="cfg_b").select("preset:cost-first")
    at.button(key="cfg_compare").click().run()
    assert not at.exception, at.exception
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    lines = [t["name"] for t in figure["data"] if t.get("mode") == "lines+markers"]
    assert lines == ["quality-first", "cost-first"]
    totals = at.dataframe[0].value
    assert list(totals["configuration"]) == ["quality-first", "cost-first"]
    expected = _engine_cuts(0.7)
    assert list(totals["compactions"]) == [0, len(expected)]
    cuts = at.dataframe[1].value
    assert list(cuts["step"]) == expected


def test_r_ui_6_compare_a_saved_replay_with_the_editor(long_page):
    at = long_page
    with open_store() as store:
        replay = store.replays.find(store.list_sessions()[0].id, "budget 96k")
    assert replay is not None
    at.selectbox(key="cfg_a").select(f"replay:{replay.id}")
    at.selectbox(key="cfg_b").select("editor")
    at.button(key="cfg_compare").click().run()
    assert not at.exception, at.exception
    totals = at.dataframe[0].value
    assert list(totals["configuration"]) == ["replay budget 96k", "editor"]
    assert list(totals["compactions"]) == [replay.compactions_applied, 0]
    assert replay.compactions_applied >= 1


def test_r_ui_6_broken_saved_template_falls_back_to_defaults_with_a_warning(workbench_home,
                                                                           long_store):
    copy_store(long_store, workbench_home)
    prompts = workbench_home / "workspace" / ".iris" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "compaction.j2").write_text("{% if %}", encoding="utf-8")
    at = _open(None)
    assert not at.exception
    assert any("cannot be used" in w.value and "compaction" in w.value for w in at.warning)
    assert any("packaged default templates" in c.value for c in at.caption)
