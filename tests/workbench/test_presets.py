"""The shipped presets (R-UI-6): loaded by name, valid without fallbacks, and
different where they say they are, with the effect they promise on a real replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.compaction import thresholds
from iris.config import default_config
from iris.errors import ConfigError
from iris.replay import replay
from iris.session import ModelLimits

from workbench.importers import load_session
from workbench.services.presets import PRESET_NAMES, load_preset, preset_text

ROOT = Path(__file__).resolve().parents[2]


def test_r_ui_6_three_presets_ship_as_yaml_files_and_load_without_warnings():
    assert PRESET_NAMES == ("default", "cost-first", "quality-first", "chord-style",
                            "claude-code", "codex")
    for name in PRESET_NAMES:
        assert (ROOT / "workbench" / "presets" / f"{name}.yaml").is_file()
        assert preset_text(name).startswith(f'# Preset "{name}"')
        assert load_preset(name).warnings == ()


def test_r_ui_6_default_preset_is_the_bundled_configuration():
    assert load_preset("default") == default_config()


def test_r_ui_6_unknown_preset_names_the_known_ones():
    with pytest.raises(ConfigError, match="known presets: default, cost-first, quality-first, "
                                          "chord-style, claude-code, codex"):
        load_preset("cheap")


def test_r_cmp_3_presets_budgets_and_lines():
    limits = ModelLimits(context=200000, output=64000)
    cost = thresholds(load_preset("cost-first"), limits)
    quality = thresholds(load_preset("quality-first"), limits)
    assert (cost.input_budget, cost.budget_source, cost.pressure_line) == (64000, "config", 44800)
    assert (quality.input_budget, quality.budget_source) == (136000, "session")
    assert quality.pressure_line == 122400  # floor(136000 × 0.9)
    assert quality.recent_target > thresholds(load_preset("default"), limits).recent_target


def test_r_red_2_cost_first_reduces_earlier_and_quality_first_later():
    default, cost, quality = (load_preset(n).reduction for n in PRESET_NAMES[:3])
    for field in ("shell_success_bytes", "read_like_output_bytes", "stale_output_bytes"):
        assert getattr(cost, field) < getattr(default, field) < getattr(quality, field)
    for field in ("shell_success_age_turns", "read_like_age_turns", "stale_age_turns"):
        assert getattr(cost, field) < getattr(default, field) < getattr(quality, field)


def test_r_prep_6_cost_first_compacts_the_long_sample_and_sends_fewer_tokens():
    session = load_session(ROOT / "sample_sessions" / "long_session.jsonl").session
    base = replay(session, load_preset("default"))
    cost = replay(session, load_preset("cost-first"))
    assert [c.step_index for c in base.checkpoints] == []
    assert cost.checkpoints  # the 64000 budget makes the long sample compact
    sent = lambda r: sum(p.final_input_tokens for p in r.preparations)
    assert sent(cost) < sent(base)
