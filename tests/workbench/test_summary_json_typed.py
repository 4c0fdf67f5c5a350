"""The ``--summary-json`` document is written from typed records (``ReplayReport`` with its
``ReplayCost``): these tests pin its text, key order and values against the in-memory replay, so
the records serialise exactly as the string-keyed dicts they replaced did."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from iris.config import parse_config
from iris.replay import Replay, ReplayOptions, replay
from iris.session import Session

from workbench.analysis import figures
from workbench.analysis.fidelity import replay_losses
from workbench.analysis.replay_report import error_meaning, replay_report, replay_trigger
from workbench.cli import main
from workbench.importers import load_session
from workbench.importers.claude_progress import subagent_sessions
from workbench.pricing import ReplayCost, recorded_cost_rates, replay_cost, tally
from workbench.pricing.billing import recorded_bill

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"

#: The documented key order (docs/cli.md) of each object in the document.
SUMMARY_KEYS = ("session_id", "model", "steps", "failed_steps", "failures", "input_budget",
                "input_budget_source",
                "input_budget_detail", "pressure_line", "baseline", "unrecorded_overhead_tokens",
                "overhead_measured_at", "calibration_ratio", "compactions", "recorded_compactions",
                "estimate_error", "cost", "summariser", "template_snapshot_id")
COMPACTION_KEYS = ("step", "tokens_before", "tokens_after", "trigger_value", "trigger_basis",
                   "history_tokens_before", "history_tokens_after", "trigger", "fidelity")
RECORDED_KEYS = ("step", "tokens_before", "tokens_after", "trigger", "fidelity")
ERROR_KEYS = ("median_abs_pct", "p90_abs_pct", "responses", "basis", "meaningful",
              "text_redacted", "note")
#: Keys the estimate error has only after a drop of the agent's context the file does not record.
DROP_KEYS = ("unrecorded_drops", "left_out")
COST_KEYS = ("currency", "price_known", "source", "prices_as_of", "basis", "models",
             "unpriced_models", "steps_priced", "steps_unpriced", "steps_compared", "requests_usd",
             "summaries_usd", "summaries_estimated", "replay_usd", "recorded_usd",
             "recorded_billed_usd", "subagents_billed_usd", "saved_usd", "saved_pct", "savings", "replay_cache", "uncached",
             "recorded_bill", "recorded_cost_rates", "note")
NESTED_COST_KEYS = {"savings": ("smaller_requests_usd", "cache_misses_usd", "summaries_usd"),
                    "replay_cache": ("read_tokens", "written_tokens", "read_tokens_if_kept"),
                    "uncached": ("recorded_usd", "requests_usd", "saved_usd")}
BILL_KEYS = ("usd", "responses", "compaction_requests", "from_recorded_cost", "from_list_price",
             "unpriced_models", "models")
MODEL_BILL_KEYS = ("responses", "priced_as", "input_tokens", "output_tokens", "cache_read_tokens",
                   "cache_write_5m_tokens", "cache_write_1h_tokens", "usd", "from_recorded_cost",
                   "from_list_price")

TIGHT = "compaction: {input_budget_tokens: 60000}\n"


def _cost_dict(cost: ReplayCost) -> dict[str, Any]:
    """The cost as the documented dict, read field by field from the record (no ``model_dump``)."""
    out: dict[str, Any] = {k: getattr(cost, k) for k in COST_KEYS}
    out["unpriced_models"] = list(cost.unpriced_models)
    for key, keys in NESTED_COST_KEYS.items():
        part = getattr(cost, key)
        out[key] = None if part is None else {k: getattr(part, k) for k in keys}
    bill = cost.recorded_bill
    if bill is not None:
        out["recorded_bill"] = {k: getattr(bill, k) for k in BILL_KEYS}
        out["recorded_bill"]["unpriced_models"] = list(bill.unpriced_models)
        out["recorded_bill"]["models"] = {m: {k: getattr(b, k) for k in MODEL_BILL_KEYS}
                                          for m, b in bill.models.items()}
    return out


def _expected(session: Session, result: Replay, cost: ReplayCost) -> dict[str, Any]:
    """The document built the way the string-keyed code built it, from the in-memory replay."""
    t = result.thresholds
    losses = replay_losses(session, result)
    own = {r.step: r.as_json() for r in losses.replay}
    recorded = {r.step: r.as_json() for r in losses.recorded}
    error = figures.estimate_error(result.preparations,
                                   [m.step for m in result.recorded_compactions]).model_dump()
    return {
        "session_id": result.session_id, "model": session.header.model,
        "steps": len(result.preparations),
        "failed_steps": sum(p.phase == "failed" for p in result.preparations),
        "failures": [{"step": p.step_index, "stage": p.error.stage, "reason": p.error.message}
                     for p in result.preparations if p.phase == "failed" and p.error is not None],
        "input_budget": t.input_budget,
        "input_budget_source": t.budget_source, "input_budget_detail": t.budget_detail,
        "pressure_line": t.pressure_line, "baseline": result.baseline,
        "unrecorded_overhead_tokens": result.calibration.overhead,
        "overhead_measured_at": result.calibration.overhead_step,
        "calibration_ratio": figures.replay_calibration_ratio(result.calibration,
                                                              result.preparations),
        "compactions": [c.model_dump() | {"trigger": replay_trigger(result, c.step),
                                          "fidelity": own.get(c.step)}
                        for c in figures.applied_compactions(result.preparations)],
        "recorded_compactions": [{"step": m.step, "tokens_before": m.tokens_before,
                                  "tokens_after": m.tokens_after, "trigger": m.trigger,
                                  "fidelity": recorded.get(m.step)}
                                 for m in result.recorded_compactions],
        "estimate_error": ({k: v for k, v in error.items() if k not in DROP_KEYS}
                           | error_meaning(session).model_dump()
                           | {k: v for k, v in error.items() if k in DROP_KEYS}),
        "cost": _cost_dict(cost),
        "summariser": {"kind": "offline", "model": None, "base_url": None,
                       "reads_templates": False},
        "template_snapshot_id": None,
    }


def _text(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _cases(real_sessions: Path | None) -> list[tuple[Path, str]]:
    cases = [(SAMPLES / "bugfix.jsonl", ""), (SAMPLES / "long_session.jsonl", TIGHT),
             (SAMPLES / "unanswered.jsonl", "")]
    if real_sessions is not None:
        cases.append((real_sessions / "claude_code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz",
                      TIGHT))
    return cases


@pytest.mark.parametrize("name,config", [("bugfix.jsonl", ""), ("long_session.jsonl", TIGHT),
                                         ("unanswered.jsonl", "")])
def test_r_ui_9_summary_text_is_the_documented_dict_of_the_in_memory_replay(name, config):
    """R-UI-9, R-TWIN-5: the summary's text is, byte for byte, the documented object (every key in
    the documented order, values as the in-memory replay computes them), compactions included."""
    session = load_session(SAMPLES / name).session
    result = replay(session, parse_config(config) if config else None)
    summary = replay_report(session, result)
    cost = replay_cost(session, result)
    expected = _expected(session, result, cost)
    assert summary.json_text() == _text(expected)
    assert tuple(json.loads(summary.json_text())) == SUMMARY_KEYS
    if config:
        assert summary.compactions and all(c.fidelity is not None for c in summary.compactions)


def test_r_twin_6_cost_record_matches_its_parts_and_keeps_money_json_native():
    """R-TWIN-6: the cost record states the recorded bill, the rates and the tally of the same
    replay, every key in the documented order, and no Decimal reaches the document."""
    session = load_session(SAMPLES / "bugfix.jsonl").session
    result = replay(session)
    cost = replay_cost(session, result)
    dumped = cost.model_dump()
    assert tuple(dumped) == COST_KEYS
    assert cost.recorded_bill == recorded_bill(session)
    assert tuple(dumped["recorded_bill"]) == BILL_KEYS
    assert all(tuple(m) == MODEL_BILL_KEYS for m in dumped["recorded_bill"]["models"].values())
    assert cost.recorded_cost_rates == {m: round(float(r), 4)
                                        for m, r in recorded_cost_rates(session).items()}
    assert cost.price_known and cost.saved_usd is not None and cost.savings is not None

    def leaves(value: Any) -> list[Any]:
        if isinstance(value, dict):
            return [x for v in value.values() for x in leaves(v)]
        if isinstance(value, (list, tuple)):
            return [x for v in value for x in leaves(v)]
        return [value]

    assert not any(isinstance(v, Decimal) for v in leaves(dumped))
    nothing = tally([])
    assert nothing.model_dump() == ReplayCost(
        source=nothing.source, prices_as_of=nothing.prices_as_of,
        note="no price known for no model recorded").model_dump()


def test_r_ui_9_cli_summary_json_is_the_in_memory_summary(tmp_path: Path, real_sessions: Path):
    """R-UI-9: `workbench replay FILE --summary-json OUT` on a sample session and a real Claude
    Code session (with a budget that makes the replay compact) writes the in-memory replay's
    summary: the same text outside the prompt-cache figures (which depend on whether the run kept
    request bodies) and the documented key order everywhere."""
    for path, config in _cases(real_sessions)[1:]:
        yaml = tmp_path / "c.yaml"
        yaml.write_text(config or "{}\n", encoding="utf-8")
        out = tmp_path / f"{path.name}.json"
        assert main(["replay", str(path), "--summary-json", str(out), "--config", str(yaml)]) == 0
        text = out.read_text(encoding="utf-8")
        session = load_session(path).session
        result = replay(session, parse_config(config),
                        options=ReplayOptions(keep_bodies=False))
        memory = json.loads(replay_report(session, result,
                                           subagents=subagent_sessions(path)).json_text())
        written = json.loads(text)
        assert tuple(written) == SUMMARY_KEYS and tuple(written["cost"]) == COST_KEYS
        assert all(tuple(c) == COMPACTION_KEYS for c in written["compactions"])
        assert all(tuple(c) == RECORDED_KEYS for c in written["recorded_compactions"])
        assert tuple(written["estimate_error"]) == ERROR_KEYS
        assert bool(written["compactions"]) is bool(config)  # the budget makes the replay compact
        cache_figures = {"requests_usd", "replay_usd", "saved_usd", "saved_pct", "savings",
                         "replay_cache", "uncached"}
        for key in SUMMARY_KEYS:
            if key not in ("cost", "template_snapshot_id"):
                assert written[key] == memory[key], key
        assert written["template_snapshot_id"].startswith("sha256:")  # R-FID-6
        for key in set(COST_KEYS) - cache_figures:
            assert written["cost"][key] == memory["cost"][key], key
        assert text == json.dumps(written, indent=2, ensure_ascii=False) + "\n"
