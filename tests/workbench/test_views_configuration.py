"""Configuration page helpers (R-UI-6): validation with field path/line/reason and Chord-style
fallback warnings (R-CMP-2), and the common-fields form written back into the YAML in place."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iris.config import parse_config
from iris.errors import ConfigError

from workbench.services.presets import preset_text
from workbench.views.configuration import (
    FORM_FIELDS,
    apply_form,
    check_config,
    form_values,
    set_yaml_value,
)

BASE = preset_text("default")


def test_r_ui_6_invalid_iris_field_names_path_line_and_reason():
    check = check_config("compaction:\n  threshold: 0.7\n  keep_recent_ratio: 2\n")
    assert not check.ok and check.config is None
    assert check.field == "compaction.keep_recent_ratio" and check.line == 3
    assert check.reason is not None and "0 < value < 1" in check.reason
    assert check.error is not None and "<editor>:3" in check.error


def test_r_ui_6_unknown_key_and_broken_yaml_are_errors_not_exceptions():
    unknown = check_config("compaction:\n  thresold: 0.7\n")
    assert unknown.field == "compaction.thresold" and unknown.reason == "unknown field"
    broken = check_config("compaction: [\n")
    assert not broken.ok and broken.reason is not None
    assert "invalid YAML" in broken.reason and broken.line is not None


def test_r_cmp_2_chord_fallback_is_a_warning_and_the_form_shows_the_effective_value():
    check = check_config("compaction:\n  threshold: 1.5\n  reminder: 9\n")
    assert check.ok
    assert len(check.warnings) == 2
    assert check.warnings[0].startswith("compaction.threshold: 1.5")
    assert check.config is not None
    values = form_values(check.config)
    assert values["threshold"] == 0.8 and values["reminder"] == 0.0


def test_r_ui_6_form_edit_changes_only_that_value_and_keeps_comments():
    values = dict(form_values(parse_config(BASE)), threshold=0.5)
    out = apply_form(BASE, values)
    changed = [(a, b) for a, b in zip(BASE.splitlines(), out.splitlines()) if a != b]
    assert changed == [("  threshold: 0.8", "  threshold: 0.5")]
    assert out.count("#") == BASE.count("#")  # comments survive


def test_r_ui_6_budget_is_added_then_removed_when_cleared():
    values = dict(form_values(parse_config(BASE)), input_budget_tokens=64000)
    added = apply_form(BASE, values)
    assert "  input_budget_tokens: 64000\n" in added
    assert parse_config(added).compaction.input_budget_tokens == 64000
    cleared = apply_form(added, dict(values, input_budget_tokens=None))
    assert cleared == BASE


def test_r_red_1_reduction_true_becomes_a_mapping_that_keeps_its_meaning():
    values = form_values(parse_config(BASE))
    off = apply_form(BASE, dict(values, reduction_enabled=False))
    assert "reduction: false" in off and parse_config(off).reduction.enabled is False
    tuned = apply_form(BASE, dict(values, shell_success_bytes=1234))
    cfg = parse_config(tuned)
    assert cfg.reduction.enabled is True and cfg.reduction.shell_success_bytes == 1234
    assert "reduction:\n  enabled: true\n  shell_success_bytes: 1234" in tuned


def test_r_ui_6_form_over_invalid_text_is_refused():
    with pytest.raises(ConfigError):
        apply_form("compaction:\n  keep_recent_ratio: 5\n", {"threshold": 0.5})


def test_r_ui_6_flow_style_text_is_rewritten_whole():
    text = "compaction: {threshold: 0.8}\n"
    assert set_yaml_value(text, "compaction", "threshold", 0.5) == ""
    out = apply_form(text, dict(form_values(parse_config(text)), threshold=0.5))
    assert parse_config(out).compaction.threshold == 0.5


_VALUES = st.fixed_dictionaries({
    "input_budget_tokens": st.one_of(st.none(), st.integers(1, 2_000_000)),
    "threshold": st.sampled_from([0.0, 0.3, 0.5, 0.75, 0.9, 1.0]),
    "reserved": st.integers(0, 50_000),
    "reminder": st.sampled_from([-1.0, 0.0, 0.4, 0.6]),
    "keep_recent_ratio": st.sampled_from([0.05, 0.15, 0.3]),
    "reduction_enabled": st.booleans(),
    "shell_success_bytes": st.integers(1, 100_000),
    "stale_age_turns": st.integers(1, 20),
})


@settings(max_examples=25, deadline=None)
@given(values=_VALUES, preset=st.sampled_from(["default", "cost-first", "quality-first"]))
def test_r_ui_6_form_values_round_trip_through_the_yaml(values, preset):
    """Whatever the form says is what the written YAML validates to, on every preset."""
    text = preset_text(preset)
    full = {**form_values(parse_config(text)), **values}
    out = apply_form(text, full)
    assert form_values(parse_config(out)) == full
    assert {f.key for f in FORM_FIELDS} == set(full)
