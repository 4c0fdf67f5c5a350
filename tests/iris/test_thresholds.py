"""Budget, pressure lines and colours: every worked number of R-CMP-3 and R-CMP-2, and R-CMP-4."""

from __future__ import annotations

import pytest
from iris.compaction import pressure_colour, thresholds
from iris.config import parse_config
from iris.session import ModelLimits


def _t(compaction=None, model=None, limits=None):
    data = {"compaction": compaction or {}}
    if model is not None:
        data["model"] = model
    return thresholds(parse_config(data), limits)


def test_r_cmp_3_input_272000_threshold_08_gives_217600():
    """R-CMP-3: input 272000, threshold 0.8 → 217600."""
    t = _t(model={"limit": {"input": 272000}})
    assert (t.input_budget, t.budget_source, t.usable_budget, t.threshold_line) == (
        272000, "model_config", 272000, 217600)


def test_r_cmp_3_reserved_16000_gives_204800_with_256000_denominator():
    """R-CMP-3: reserved 16000 → 204800; the UI percentage uses 256000 as denominator."""
    t = _t({"reserved": 16000}, model={"limit": {"input": 272000}})
    assert (t.usable_budget, t.threshold_line, t.pressure_line) == (256000, 204800, 204800)


def test_r_cmp_3_context_400000_output_128000_gives_272000():
    """R-CMP-3: context 400000 with output 128000 → budget 272000."""
    t = _t(model={"limit": {"context": 400000, "output": 128000}})
    assert t.input_budget == 272000 and t.threshold_line == 217600


def test_r_cmp_3_budget_rule_order():
    """R-CMP-3: explicit config > config model.limit > session limits > 96000 default."""
    session = ModelLimits(context=200000, output=32000)
    assert _t({"input_budget_tokens": 50000}, model={"limit": {"input": 9000}},
              limits=session).budget_source == "config"
    assert _t(model={"limit": {"input": 9000}}, limits=session).input_budget == 9000
    t = _t(limits=session)
    assert (t.input_budget, t.budget_source) == (168000, "session")
    t = _t()
    assert (t.input_budget, t.budget_source, t.pressure_line) == (96000, "default", 76800)


def test_r_cmp_3_missing_output_reserves_max_output_tokens():
    """R-CMP-3: without limit.output, context − max_output_tokens (default 64000)."""
    assert _t(limits=ModelLimits(context=200000)).input_budget == 136000
    assert _t(model={"limit": {"context": 200000}, "max_output_tokens": 8000}).input_budget == 192000


def test_r_cmp_1_derived_lines_use_exact_rounding():
    """R-CMP-1: recent target and summary max are ceil(budget × ratio), pressure line floor."""
    t = _t()
    assert (t.recent_target, t.summary_max_tokens, t.pressure_line) == (14400, 4800, 76800)
    t = _t({"input_budget_tokens": 1001, "keep_recent_ratio": 0.1, "summary_ratio": 0.3})
    assert (t.recent_target, t.summary_max_tokens, t.pressure_line) == (101, 301, 800)


@pytest.mark.parametrize("threshold,reminder", [(0.8, 0.60), (0.65, 0.585), (0.4, 0.36)])
def test_r_cmp_2_derived_reminder(threshold, reminder):
    """R-CMP-2: reminder 0 derives min(0.60, threshold × 0.90)."""
    t = _t({"threshold": threshold, "input_budget_tokens": 100000})
    assert t.reminder == pytest.approx(reminder, abs=1e-12)
    assert t.reminder_line == int(100000 * reminder + 1e-9)


def test_r_cmp_2_explicit_and_disabled_reminder():
    """R-CMP-2: explicit reminder kept; −1 disables only the reminder; ≥ threshold never fires."""
    t = _t({"reminder": 0.5, "input_budget_tokens": 100000})
    assert (t.reminder, t.reminder_line) == (0.5, 50000)
    t = _t({"reminder": -1})
    assert t.reminder is None and t.reminder_line is None and t.auto_enabled
    t = _t({"reminder": 0.9})
    assert t.reminder == 0.9 and t.reminder_line is None


def test_r_cmp_2_threshold_zero_disables_compaction_and_reminder():
    """R-CMP-2: threshold 0 disables automatic compaction and the reminder."""
    t = _t({"threshold": 0})
    assert not t.auto_enabled and t.threshold_line is None and t.reminder_line is None
    assert t.pressure_line == 76800  # manual compaction still has a success target


def test_r_cmp_2_invalid_threshold_falls_back_to_default_line():
    """R-CMP-2: threshold 1.5 falls back to 0.8 → the default line, with a warning."""
    c = parse_config({"compaction": {"threshold": 1.5}})
    assert thresholds(c).threshold_line == 76800 and c.warnings


def test_r_cmp_2_per_model_override_and_per_model_zero():
    """R-CMP-2: per-model threshold/reminder override; a model without one inherits; per-model 0
    disables only that model."""
    t = _t({"threshold": 0.65}, model={"name": "luna", "limit": {"input": 272000},
                                       "compaction": {"threshold": 0.25, "reminder": 0.2}})
    assert (t.threshold_line, t.reminder_line, t.model) == (68000, 54400, "luna")
    t = _t({"threshold": 0.65}, model={"name": "plain", "limit": {"input": 272000}})
    assert t.threshold_line == 176800 and t.reminder == pytest.approx(0.585)
    t = _t({"threshold": 0.65}, model={"limit": {"input": 272000}, "compaction": {"threshold": 0}})
    assert not t.auto_enabled and t.reminder_line is None
    assert _t({"threshold": 0.65}).auto_enabled
    t = _t(model={"limit": {"input": 100000}, "compaction": {"reminder": -1}})
    assert t.auto_enabled and t.reminder_line is None


def test_r_cmp_4_colour_bands():
    """R-CMP-4: below reminder green, reminder to threshold orange, at/over threshold red."""
    t = _t({"input_budget_tokens": 100000})  # reminder 60000, threshold 80000
    assert [pressure_colour(n, t) for n in (59999, 60000, 79999, 80000, 120000)] == [
        "green", "orange", "orange", "red", "red"]
    off = _t({"input_budget_tokens": 100000, "reminder": -1})
    assert [pressure_colour(n, off) for n in (79999, 80000)] == ["green", "red"]
    disabled = _t({"input_budget_tokens": 100000, "threshold": 0})
    assert [pressure_colour(n, disabled) for n in (99999, 100000)] == ["green", "red"]
