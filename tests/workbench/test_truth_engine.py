"""Replays that tell the truth: model catalogue and budget source (R-CMP-3), unrecorded overhead and
calibrated estimates (R-TOK-2/3), trigger value and basis, the recorded compaction in replays and
the as-recorded baseline, ``workbench replay --summary-json``. Generated sessions always run; the
real Claude Code sessions in ../shared run when present."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from iris.catalogue import CatalogueEntry, lookup
from iris.compaction import thresholds
from iris.compaction.calibration import Calibration
from iris.config import default_config, parse_config
from iris.errors import ConfigError
from iris.replay import ReplayOptions, replay
from iris.session import (
    Message,
    ModelLimits,
    RecordedCompaction,
    Session,
    SessionHeader,
    TextBlock,
    Usage,
)
from iris.tokens import TokenEstimator
from record_access import all_present, request_of, stage_of

from workbench.analysis.replay_report import estimate_error
from workbench.cli import main

SHARED = Path(__file__).resolve().parents[3] / "shared" / "real-sessions" / "claude_code"
OVERHEAD, RATIO = 20000, 1.25
EST = TokenEstimator()


def _user(text: str, **kw) -> Message:
    return Message(role="user", content=(TextBlock(text=text),), **kw)


def _generated(n: int = 30, *, model: str = "claude-opus-4-6", compact_at: int | None = None
               ) -> Session:
    """A session whose provider counts are exactly ``OVERHEAD + RATIO × local`` of what the agent
    sent; with ``compact_at`` the agent compacts before that turn (its summary replaces the
    history)."""
    messages: list[Message] = []
    compactions = []
    sent = 3  # request framing (REQUEST_OVERHEAD)
    for k in range(n):
        if k == compact_at:
            summary = _user("Summary of the earlier work: " + "fact " * 200,
                            is_compaction_summary=True)
            compactions.append(RecordedCompaction(at_message=len(messages), pre_tokens=999_999,
                                                  source="claude_code:compact_boundary"))
            messages.append(summary)
            sent = 3 + EST.message_tokens(summary)
        question = _user(f"turn {k}: " + "lorem ipsum dolor " * 400)
        messages.append(question)
        sent += EST.message_tokens(question)
        prompt = OVERHEAD + round(RATIO * sent)
        reply = Message(role="assistant", content=(TextBlock(text=f"done {k}"),),
                        usage=Usage(input_tokens=prompt, output_tokens=10))
        messages.append(reply)
        sent += EST.message_tokens(reply)
    header = SessionHeader(session_id="truth", source_format="claude_code", model=model)
    return Session(header=header, messages=tuple(messages), compactions=tuple(compactions))


# ---------------------------------------------------------------------------- catalogue, budget

def _known(model: str) -> CatalogueEntry:
    entry = lookup(model)
    assert entry is not None, f"{model} is not in the catalogue"
    return entry


def test_r_cmp_3_catalogue_lookup_exact_dated_and_provider_prefixed():
    """R-CMP-3 (4): the packaged catalogue names each model's window and its source."""
    entry = _known("claude-opus-4-6")
    assert (entry.context, entry.max_output) == (200_000, 128_000)
    assert "anthropic.com" in entry.source
    assert _known("anthropic/claude-3-5-sonnet-20241022").name == "claude-3-5-sonnet"
    assert _known("gpt-5-codex").input_budget == 272_000  # documented input limit
    assert _known("o3-mini").name == "o3-mini"  # longest prefix wins over "o3"
    assert lookup("no-such-model") is None and lookup(None) is None


def test_r_cmp_3_budget_precedence_names_its_source():
    """R-CMP-3: config > model.limit > session limits > catalogue > 96000, each source named."""
    session_limits = ModelLimits(context=100_000, output=20_000)
    cases = [
        (parse_config({"compaction": {"input_budget_tokens": 50_000},
                       "model": {"limit": {"context": 90_000, "output": 10_000}}}),
         50_000, "config"),
        (parse_config({"model": {"limit": {"context": 90_000, "output": 10_000}}}),
         80_000, "model_config"),
        (default_config(), 80_000, "session"),
    ]
    for cfg, budget, source in cases:
        t = thresholds(cfg, session_limits, "claude-opus-4-6")
        assert (t.input_budget, t.budget_source) == (budget, source)
        assert t.budget_detail
    t = thresholds(default_config(), None, "claude-opus-4-6")
    assert (t.input_budget, t.budget_source, t.pressure_line) == (200_000, "catalogue", 160_000)
    assert t.budget_detail.startswith("model catalogue: claude-opus-4-6: context 200,000")
    t = thresholds(default_config(), None, "home-made-model")
    assert (t.input_budget, t.budget_source) == (96_000, "default")
    assert "home-made-model" in t.budget_detail


def test_r_cmp_3_configuration_adds_and_overrides_catalogue_entries():
    """R-CMP-3: a configuration's ``catalogue:`` adds or overrides entries; bad ones name the
    field."""
    cfg = parse_config("catalogue:\n  home-made-model: {context: 50000}\n"
                       "  claude-opus-4-6: {context: 1000000, source: beta header}\n")
    assert thresholds(cfg, None, "home-made-model-v2").input_budget == 50_000
    t = thresholds(cfg, None, "claude-opus-4-6")
    assert t.input_budget == 1_000_000 and "beta header" in t.budget_detail
    with pytest.raises(ConfigError, match=r"catalogue\.x\.context"):
        parse_config("catalogue:\n  x: {context: 0}\n")
    with pytest.raises(ConfigError, match="estimate.unrecorded_overhead"):
        parse_config("estimate: {unrecorded_overhead: -1}\n")


def test_default_replay_takes_the_catalogue_budget():
    """R-CMP-3: a Claude Code transcript records no limits; the catalogue gives the window."""
    r = replay(_generated(3))
    assert r.thresholds.budget_source == "catalogue" and r.thresholds.input_budget == 200_000
    assert all(p.input_budget == 200_000 for p in r.preparations)


# ----------------------------------------------------------------- overhead and calibration

def test_overhead_and_ratio_are_measured_from_earlier_responses_only():
    """R-REAL-1, R-REAL-2: Overhead is measured at the first response; the ratio known at step k comes from
    responses before k (never from the future); the calibrated estimate then matches."""
    r = replay(_generated(12))
    preps = r.preparations
    assert preps[0].unrecorded_overhead_tokens == 0 and preps[0].calibration_ratio == 1.0
    assert preps[1].overhead_measured_at == 0
    # measured with ratio 1 (no sample yet): off by (RATIO - 1) x the first local estimate
    first_local = preps[0].recorded_request_tokens
    assert first_local is not None
    assert abs(preps[1].unrecorded_overhead_tokens - OVERHEAD) <= (RATIO - 1) * first_local + 2
    assert r.calibration.overhead_step == 0 and abs(r.calibration.ratio - RATIO) < 0.02
    for p in preps[3:]:  # the ratio needs two samples 2,000 local tokens apart
        whole, prompt = p.recorded_request_whole, p.provider_prompt_tokens
        assert whole is not None and prompt is not None
        assert abs(whole - prompt) / prompt < 0.01
    error = estimate_error(preps, r)
    assert error.median_abs_pct is not None and error.p90_abs_pct is not None
    assert error.median_abs_pct < 1 and error.p90_abs_pct < 3 and error.responses == 11
    # a session cut short gives the same values for the steps it has: nothing comes from later
    head = _generated(12).model_copy(update={"messages": _generated(12).messages[:12]})
    short = replay(head).preparations
    assert [p.calibration_ratio for p in short] == [p.calibration_ratio for p in preps[:6]]


def test_configuration_fixes_or_disables_the_overhead():
    """R-REAL-1: ``estimate.unrecorded_overhead`` fixes it (0 disables); ``calibrate: false`` keeps ratio 1."""
    off = replay(_generated(4), parse_config({"estimate": {"unrecorded_overhead": 0,
                                                           "calibrate": False}}))
    assert all(p.unrecorded_overhead_tokens == 0 and p.calibration_ratio == 1.0
               for p in off.preparations)
    assert all(p.whole_request_tokens == p.final_input_tokens for p in off.preparations)
    fixed = replay(_generated(4), parse_config({"estimate": {"unrecorded_overhead": 1234}}))
    assert fixed.calibration.overhead_source == "configuration"
    assert all(p.unrecorded_overhead_tokens == 1234 for p in fixed.preparations)


def test_calibration_observe_ignores_small_samples_and_new_windows():
    c = Calibration().observe(0, 100, 25_000)
    assert (c.overhead, c.overhead_step, c.ratio) == (24_900, 0, 1.0)
    small = c.observe(1, 500, 30_000)  # a tiny local part says nothing about the ratio
    assert (small.ratio, small.ratio_step, small.samples) == (1.0, None, 0)
    c2 = c.observe(2, 10_100, 37_500)  # two points: ratio 1.25, overhead 24,875
    assert abs(c2.ratio - 1.25) < 1e-9 and c2.ratio_step == 2 and c2.overhead == 24_875
    c2 = c2.observe(2, 10_000, 37_375)
    assert abs(c2.ratio - 1.25) < 1e-9
    c3 = c2.observe(3, 1_000, 40_000, new_window=True)  # first response after a compaction
    assert c3.window_overhead == 40_000 - 1250 and c3.overhead == 24_875


def test_trigger_after_the_replays_own_compaction_keeps_the_overhead():
    """R-REAL-1: Trigger basis: provider usage while the request is the recorded one, then the calibrated
    local estimate plus the overhead (it never silently drops the overhead)."""
    cfg = parse_config({"compaction": {"input_budget_tokens": 60_000}})
    r = replay(_generated(30), cfg)
    applied = [p for p in r.preparations if p.compaction_applied]
    assert applied, "the small budget must make the replay compact"
    first = applied[0]
    assert first.trigger_basis == "provider" and first.trigger_tokens is not None
    assert first.trigger_tokens >= first.pressure_line
    later = [p for p in r.preparations if p.step_index > first.step_index]
    assert later and all(p.trigger_basis == "calibrated_local" for p in later)
    for p in later:
        expected = round(p.calibration_ratio * stage_of(p, "compaction").before_input_tokens) \
            + p.unrecorded_overhead_tokens
        assert p.trigger_tokens is not None
        assert abs(p.trigger_tokens - expected) <= 2
        assert p.trigger_tokens > stage_of(p, "compaction").before_input_tokens + OVERHEAD // 2
    plan = next(d for d in stage_of(first, "compaction").decisions if d.kind == "compaction-plan")
    commit = next(d for d in stage_of(first, "compaction").decisions if d.kind == "compaction-applied")
    assert plan.request_tokens == commit.tokens_before  # one whole-request basis
    stage = stage_of(first, "compaction")  # the stage's own figures, reconciled on both bases
    after = round(first.calibration_ratio * stage.after_input_tokens) \
        + first.unrecorded_overhead_tokens
    assert (f"→ {after:,} (local {stage.before_input_tokens:,} → "
            f"{stage.after_input_tokens:,})") in stage.note
    assert commit.tokens_after <= first.pressure_line
    final = stage_of(later[-1], "final_selection").decisions[0]
    assert f"whole request {later[-1].whole_request_tokens:,}" in final.reason


# ------------------------------------------------------ recorded compaction and the baseline

def test_replay_leaves_the_agent_summary_out_and_the_baseline_keeps_it():
    """R-REAL-4: A replay with its own policy does not replay the agent's summary as an ordinary message;
    the as-recorded baseline applies the recorded compaction where it happened."""
    s = _generated(8, compact_at=5)
    engine = replay(s)
    last = request_of(engine, engine.preparations[-1])
    assert not any("Summary of the earlier work" in m.text for m in last.messages)
    assert any("turn 0:" in m.text for m in last.messages)  # its own history goes on
    mark, = engine.recorded_compactions
    assert (mark.step, mark.tokens_before, mark.summary_in_replay) == (5, 999_999, False)
    usage = s.messages[s.index.batches[5].assistant_message].usage
    assert usage is not None and mark.tokens_after == usage.prompt_tokens
    base = replay(s, options=ReplayOptions(baseline="recorded"))
    assert base.baseline == "recorded" and base.recorded_compactions[0].summary_in_replay
    request = request_of(base, base.preparations[-1])
    assert "Summary of the earlier work" in request.messages[0].text
    assert not any("turn 0:" in m.text for m in request.messages)
    for p in base.preparations:
        entered = [st.name for st in p.stages if st.status != "skipped"]
        assert entered == ["assembly", "final_selection"] and not p.compaction_applied
        assert p.final_input_tokens == p.recorded_request_tokens
    p90 = estimate_error(base.preparations, base).p90_abs_pct
    assert p90 is not None and p90 < 5


def test_summary_json_has_exactly_the_documented_keys(tmp_path, capsys):
    """`workbench replay PATH --summary-json OUT` (and with --baseline recorded, --config)."""
    path = tmp_path / "s.jsonl"
    from workbench.importers.native import dump_session

    dump_session(_generated(8, compact_at=5), path)
    out = tmp_path / "summary.json"
    config = tmp_path / "c.yaml"
    config.write_text("compaction: {input_budget_tokens: 60000}\n", encoding="utf-8")
    assert main(["replay", str(path), "--summary-json", str(out), "--config", str(config)]) == 0
    data = json.loads(out.read_text())
    required = {"session_id", "model", "steps", "input_budget", "input_budget_source",
                "pressure_line", "unrecorded_overhead_tokens", "calibration_ratio",
                "compactions", "recorded_compactions", "estimate_error", "cost"}
    assert required <= set(data)
    assert data["input_budget"] == 60_000 and data["input_budget_source"] == "config"
    keys = ("step", "tokens_before", "tokens_after", "trigger")
    assert [{k: c[k] for k in keys} for c in data["recorded_compactions"]] == [
        {"step": 5, "tokens_before": 999_999,
         "tokens_after": data["recorded_compactions"][0]["tokens_after"], "trigger": "auto"}]
    for c in data["compactions"]:
        assert set(c) >= {*keys, "trigger_value", "trigger_basis"}
    assert set(data["estimate_error"]) >= {"median_abs_pct", "p90_abs_pct", "basis"}
    assert main(["replay", str(path), "--summary-json", str(out), "--baseline", "recorded"]) == 0
    base = json.loads(out.read_text())
    assert base["compactions"] == [] and base["baseline"] == "recorded"
    assert "unrecorded overhead" in capsys.readouterr().out


# ------------------------------------------------------------------------- real sessions

def _real(tmp_path: Path, name: str) -> Session:
    src = SHARED / f"{name}.jsonl.gz"
    if not src.is_file():
        pytest.skip("../shared/real-sessions is not available")
    target = tmp_path / f"{name}.jsonl"
    target.write_bytes(gzip.decompress(src.read_bytes()))
    from workbench.importers import load_session

    return load_session(target).session


#: A configuration that sends what the agent sent: no trimming, folding or reduction.
AGENT_LIKE = {"context_policy": {"enabled": False}, "reduction": False}


def test_real_claude_session_compacts_near_where_the_agent_did(tmp_path):
    """R-REAL-2, R-REAL-4: A Claude Code session on a 200k-window model: catalogue budget; a configuration that sends
    what the agent sent compacts a few steps before the agent (which fired at 167,731 tokens) on
    the provider's count, and at the agent's step with Claude Code's line (≈ 0.835 of the window);
    the default configuration's reductions keep its request under the line (R-TOK-3)."""
    s = _real(tmp_path, "8463c716-a2ea-4c14-9efa-87158ebd9f20")
    r = replay(s, parse_config(AGENT_LIKE))
    assert r.thresholds.budget_source == "catalogue" and r.thresholds.input_budget == 200_000
    recorded, = r.recorded_compactions
    assert recorded.tokens_before == 167_731 and recorded.step == 71
    applied = [p for p in r.preparations if p.compaction_applied]
    assert len(applied) == 1 and 0 < recorded.step - applied[0].step_index <= 8
    assert applied[0].trigger_basis == "provider"
    assert 24_000 < r.calibration.overhead < 28_000
    line = replay(s, parse_config(AGENT_LIKE | {"compaction": {"threshold": 0.835}}))
    assert [p.step_index for p in line.preparations if p.compaction_applied] == [71]
    default = replay(s)
    assert not any(p.compaction_applied for p in default.preparations)
    reduced = [p for p in default.preparations if p.step_index < recorded.step
               and p.trigger_basis == "calibrated_local"]
    assert len(reduced) > 60
    assert max(all_present(p.trigger_tokens for p in reduced)) < default.thresholds.pressure_line
    error = estimate_error(r.preparations, r)
    assert error.median_abs_pct is not None and error.p90_abs_pct is not None
    assert error.median_abs_pct < 1 and error.p90_abs_pct < 3


def test_real_claude_manual_compaction_session_estimate(tmp_path):
    s = _real(tmp_path, "ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    base = replay(s, options=ReplayOptions(baseline="recorded"))
    assert base.recorded_compactions[0].tokens_before == 142_431
    error = estimate_error(base.preparations, base)
    assert error.median_abs_pct is not None and error.p90_abs_pct is not None
    assert error.median_abs_pct < 1 and error.p90_abs_pct < 3


def test_default_replays_save_the_as_recorded_baseline_with_the_truth_fields(tmp_path):
    """R-REAL-3: The store keeps ``as recorded`` next to ``default``; saved replays carry the calibration,
    the recorded compactions and the trigger value and basis of each compaction."""
    from workbench.importers.native import dump_session
    from workbench.services.replay import (
        RECORDED_REPLAY_NAME,
        ensure_default_replay,
        open_saved,
        replay_and_save,
    )
    from workbench.storage.store import open_store

    path = dump_session(_generated(30, compact_at=20), tmp_path / "s.jsonl")
    with open_store() as store:
        sid = store.import_file(path).session_id
        ensure_default_replay(store, sid)
        baseline = store.replays.find(sid, RECORDED_REPLAY_NAME)
        assert baseline is not None and baseline.compactions_applied == 0
        facts = open_saved(store, baseline.id).facts
        assert facts.baseline == "recorded"
        assert facts.recorded_compactions[0].step == 20
        assert facts.calibration.overhead_step == 0
        info, _ = replay_and_save(store, sid, name="tight", config=parse_config(
            {"compaction": {"input_budget_tokens": 60_000}}))
        saved = open_saved(store, info.id).facts.compactions
        assert saved and saved[0].trigger_basis == "provider"
        before, value, after = saved[0].tokens_before, saved[0].trigger_value, saved[0].tokens_after
        assert before is not None and value is not None and after is not None
        assert before >= value > after


def test_codex_replacement_history_is_left_out_of_engine_replays_and_kept_by_the_baseline():
    """R-REAL-3, R-REAL-5: Context a recorded compaction provided (Codex replacement history) is the compaction's
    output: an engine replay keeps its own history instead; the baseline continues from it."""
    def reply(text: str, prompt: int) -> Message:
        return Message(role="assistant", content=(TextBlock(text=text),),
                       usage=Usage(input_tokens=prompt, output_tokens=5))

    kept = Message(role="user", content=(TextBlock(text="REPLACEMENT: the task so far"),),
                   compaction_provided=True)
    copied = Message(role="assistant", content=(TextBlock(text="REPLACEMENT: earlier answer"),),
                     compaction_provided=True)
    messages = (_user("first task " * 300), reply("one", 9000), kept, copied,
                _user("next"), reply("two", 6000))
    s = Session(header=SessionHeader(session_id="codex-like", source_format="codex",
                                     model="gpt-5.3-codex"),
                messages=messages, compactions=(RecordedCompaction(
                    at_message=2, source="codex:compacted.replacement_history"),))
    assert len(s.index.batches) == 2  # the copied answer is not a model call
    engine = replay(s)
    texts = [m.text for m in request_of(engine, engine.preparations[-1]).messages]
    assert not any("REPLACEMENT" in t for t in texts) and any("first task" in t for t in texts)
    base = replay(s, options=ReplayOptions(baseline="recorded"))
    texts = [m.text for m in request_of(base, base.preparations[-1]).messages]
    assert texts[0].startswith("REPLACEMENT") and not any("first task" in t for t in texts)
    assert base.recorded_compactions[0].step == 1


def test_an_unrecorded_compaction_freezes_the_ratio_until_a_recorded_one():
    """Provider counts that fall while the recorded history grew measure a context the
    transcript does not hold: the ratio stays as it was (never learned from that context)."""
    c = Calibration().observe(0, 100, 20_100).observe(1, 10_100, 32_600)
    assert abs(c.ratio - 1.25) < 1e-9
    dropped = c.observe(2, 12_000, 9_000)
    assert dropped.frozen_at == 2 and dropped.ratio == c.ratio
    later = dropped.observe(3, 14_000, 12_000)
    assert later.ratio == c.ratio and later.frozen_at == 2
    reopened = later.observe(4, 3_000, 30_000, new_window=True)
    assert reopened.frozen_at is None and reopened.window_step == 4
