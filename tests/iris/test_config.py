"""The whole-configuration loader: Iris fields error, Chord fields fall back (R-CMP-1, R-CMP-2)."""

from __future__ import annotations

import pytest
from iris.config import ContextConfig, config_hash, config_to_yaml, default_config, load_config, parse_config
from iris.errors import ConfigError


def test_r_cmp_1_defaults_from_bundled_file():
    """R-CMP-1/R-CMP-2: the bundled file gives every documented default."""
    c = default_config()
    comp = c.compaction
    assert (comp.input_budget_tokens, comp.keep_recent_ratio, comp.summary_ratio,
            comp.timeout_seconds) == (None, 0.15, 0.05, 300.0)
    assert (comp.threshold, comp.reserved, comp.reminder, comp.retain_recent_tokens,
            comp.model_driven, comp.model_pool, comp.profile) == (0.8, 0, 0.0, 4096, False, None,
                                                                  "auto")
    assert c.warnings == () and c.model is None
    assert c == ContextConfig()


@pytest.mark.parametrize("field,literal", [
    ("input_budget_tokens", "0"), ("input_budget_tokens", "-5"), ("input_budget_tokens", "1.5"),
    ("input_budget_tokens", "true"), ("input_budget_tokens", "'96000'"),
    ("keep_recent_ratio", "0"), ("keep_recent_ratio", "1"), ("summary_ratio", "1.2"),
    ("summary_ratio", "x"), ("timeout_seconds", "0"), ("timeout_seconds", "-1"),
    ("timeout_seconds", ".inf"), ("timeout_seconds", ".nan"),
])
def test_r_cmp_1_iris_fields_error_with_file_line_and_field(tmp_path, field, literal):
    """R-CMP-1: invalid Iris fields are errors naming the file, line and field path."""
    path = tmp_path / "ctx.yaml"
    path.write_text(f"prompts:\n  root: p\ncompaction:\n  {field}: {literal}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert err.value.field == f"compaction.{field}"
    assert err.value.line == 4
    assert str(path) in str(err.value) and f"compaction.{field}" in str(err.value)


@pytest.mark.parametrize("field,value,expected", [
    ("threshold", 1.5, 0.8), ("threshold", -0.1, 0.8), ("threshold", float("nan"), 0.8),
    ("threshold", float("inf"), 0.8), ("threshold", "high", 0.8),
    ("reminder", 2, 0.0), ("reminder", -0.5, 0.0), ("reminder", float("-inf"), 0.0),
    ("reserved", -1, 0), ("reserved", 1.5, 0),
    ("retain_recent_tokens", -10, 4096), ("retain_recent_tokens", 0, 4096),
    ("model_driven", "yes", False), ("model_pool", 3, None), ("profile", "fast", "auto"),
])
def test_r_cmp_2_chord_fields_fall_back_with_warning(field, value, expected):
    """R-CMP-2: invalid Chord values fall back to the built-in default with a warning naming the
    field path (0 for retain_recent_tokens silently means the default)."""
    c = parse_config({"compaction": {field: value}})
    assert getattr(c.compaction, field) == expected
    if field == "retain_recent_tokens" and value == 0:
        assert c.warnings == ()
    else:
        assert len(c.warnings) == 1 and c.warnings[0].startswith(f"compaction.{field}:")


def test_r_cmp_2_valid_chord_values_kept():
    """R-CMP-2: threshold 0, reminder -1 and explicit values are valid, no warning."""
    c = parse_config({"compaction": {"threshold": 0, "reminder": -1, "reserved": 16000,
                                     "profile": "archival", "model_driven": True}})
    assert (c.compaction.threshold, c.compaction.reminder, c.compaction.reserved) == (0, -1, 16000)
    assert c.warnings == ()


def test_r_cmp_2_per_model_invalid_threshold_inherits_global():
    """R-CMP-2: an invalid per-model threshold inherits the global one; invalid reminder → 0."""
    c = parse_config({"model": {"name": "m", "compaction": {"threshold": 7, "reminder": "x"}}})
    assert c.model is not None and c.model.compaction is not None
    assert c.model.compaction.threshold is None
    assert c.model.compaction.reminder == 0.0
    assert [w.split(":")[0] for w in c.warnings] == ["model.compaction.threshold",
                                                     "model.compaction.reminder"]


def test_unknown_fields_and_sections_are_errors_with_line():
    """extra="forbid" everywhere: the line of the unknown key is reported."""
    with pytest.raises(ConfigError) as err:
        parse_config("compaction:\n  threshold: 0.5\n  thresold: 0.7\n", source="a.yaml")
    assert (err.value.field, err.value.line) == ("compaction.thresold", 3)
    with pytest.raises(ConfigError) as err:
        parse_config("compction: {}\n", source="a.yaml")
    assert err.value.field == "compction" and err.value.line == 1
    with pytest.raises(ConfigError) as err:
        parse_config("model:\n  limit:\n    context: -1\n", source="a.yaml")
    assert err.value.field == "model.limit" and err.value.line == 2


def test_invalid_yaml_and_missing_file(tmp_path):
    with pytest.raises(ConfigError) as err:
        parse_config("compaction: [\n", source="b.yaml")
    assert "b.yaml" in str(err.value) and err.value.line is not None
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "none.yaml")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        parse_config("- 1\n")


def test_reduction_section_errors_name_field():
    """R-RED-2 via the whole loader: a bad reduction value names its field path and line."""
    with pytest.raises(ConfigError) as err:
        parse_config("reduction:\n  error_age_turns: 2.5\n", source="c.yaml")
    assert err.value.field == "reduction.error_age_turns" and err.value.line == 2
    assert parse_config("reduction: false\n").reduction.enabled is False


def test_yaml_round_trip_and_stable_hash():
    """config_to_yaml reads back equal; the hash is stable and ignores warnings."""
    c = parse_config({"compaction": {"threshold": 0.65, "reserved": 100},
                      "model": {"name": "x", "limit": {"context": 400000, "output": 128000},
                                "compaction": {"threshold": 0.5}}})
    again = parse_config(config_to_yaml(c))
    assert again == c
    h = config_hash(c)
    assert h.startswith("sha256:") and len(h) == 71 and h == config_hash(again)
    assert config_hash(parse_config({"compaction": {"threshold": 9}})) == config_hash(ContextConfig())
    assert config_hash(parse_config({"compaction": {"threshold": 0.7}})) != config_hash(ContextConfig())


def test_section_of_wrong_type_names_field_and_line():
    """A section that is not a mapping is an error naming the section and its line."""
    with pytest.raises(ConfigError) as err:
        parse_config("prompts:\n  root: p\ncompaction: 5\n", source="d.yaml")
    assert (err.value.field, err.value.line) == ("compaction", 3)
    assert "must be a mapping" in str(err.value)
