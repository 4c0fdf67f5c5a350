"""What the Configuration page shows and keeps in sync (R-UI-6): the form's widget values read from
the YAML and written back into it, the number boxes' options, the editor's verdict (hash, or
field, line and reason), and the line that says what "Replay and save" saved."""

from __future__ import annotations

from pathlib import Path

from iris.config import config_hash, parse_config
from iris.prompts import PromptSnapshot
from iris.replay import replay

from workbench.analysis.compared_run import compared_run
from workbench.importers import load_session
from workbench.services.presets import preset_text
from workbench.views.configuration import (
    FORM_FIELDS,
    ConfigCheck,
    check_config,
    form_edit,
    form_state,
    number_options,
    saved_replay_line,
    validity_line,
    widget_key,
)

BASE = preset_text("default")
LONG = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl"
FIELDS = {f.key: f for f in FORM_FIELDS}


def test_r_ui_6_form_state_holds_every_widget_of_a_valid_text_and_none_of_an_invalid_one():
    state = form_state("compaction:\n  threshold: 1.5\n")  # a fallback: the effective value
    assert set(state) == {f"cfg_f_{f.key}" for f in FORM_FIELDS}
    assert state[widget_key(FIELDS["threshold"])] == 0.8
    assert state["cfg_f_reduction_enabled"] is True
    assert form_state("compaction:\n  keep_recent_ratio: 2\n") == {}


def test_r_ui_6_form_edit_writes_the_widgets_back_into_the_yaml():
    state = dict(form_state(BASE), cfg_f_threshold=0.55)
    out = form_edit(BASE, state)
    changed = [(a, b) for a, b in zip(BASE.splitlines(), out.splitlines(), strict=True) if a != b]
    assert changed == [("  threshold: 0.8", "  threshold: 0.55")]
    assert form_state(out) == state  # and the form reads back what it wrote
    unset = dict(form_state(BASE))
    del unset["cfg_f_input_budget_tokens"]  # a missing widget is None: the field is removed
    assert "input_budget_tokens" not in form_edit(
        form_edit(BASE, dict(unset, cfg_f_input_budget_tokens=64000)), unset)


def test_r_ui_6_number_boxes_take_the_fields_bounds_steps_and_format():
    assert number_options(FIELDS["threshold"]) == {"min_value": 0.0, "max_value": 1.0,
                                                   "step": 0.05, "format": "%.2f"}
    assert number_options(FIELDS["input_budget_tokens"]) == {
        "min_value": 1, "max_value": None, "step": 1000, "placeholder": "derived"}
    assert number_options(FIELDS["reserved"])["placeholder"] is None


def test_r_ui_6_validity_line_gives_the_hash_or_field_line_and_reason():
    valid = check_config(BASE)
    assert valid.config is not None
    assert validity_line(valid) == f"Valid · configuration `{config_hash(valid.config)[:19]}…`"
    invalid = validity_line(check_config("compaction:\n  threshold: 0.7\n  keep_recent_ratio: 2\n"))
    assert invalid.startswith("field `compaction.keep_recent_ratio` · line 3: ")
    assert "0 < value < 1" in invalid
    assert validity_line(check_config("- a list\n")) == \
        "line 1: the top level must be a mapping, got list"
    assert validity_line(ConfigCheck(error="?", reason="no position")) == "Invalid: no position"


def test_r_ui_6_saved_replay_line_names_compactions_steps_budget_and_line():
    session = load_session(LONG).session
    config = parse_config(preset_text("cost-first"))
    result = replay(session, config, prompts=PromptSnapshot.defaults())
    run = compared_run("cost", result)
    steps = ", ".join(str(c.step_index) for c in result.checkpoints)
    line = saved_replay_line("cost", run)
    assert line.startswith(f"Replay **cost** saved: **{len(result.checkpoints)} compactions** "
                           f"(steps {steps}) over {len(result.preparations)} steps; budget 64,000 "
                           "(source: ")
    assert line.endswith(f"pressure line {result.thresholds.pressure_line:,}. Pick it in the "
                         "sidebar to step through it.")
    assert "(steps none)" in saved_replay_line("default", run.model_copy(update={"compactions": ()}))
