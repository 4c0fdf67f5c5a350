"""Follow-ups on the whole-request basis: Compare's totals and steps table use the figure every
chart plots (R-TOK-2); a report of a session with no model call renders (R-UI-9); the trigger of
a request the replay reduced compares its own whole-request estimate, not the provider's count of
the recorded request (R-TOK-3); plan, candidate, commit, stage note and step reconcile (R-CMP-8)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from iris.config import parse_config
from iris.preparation.records import CompactionApplied, CompactionCandidate, CompactionPlan
from iris.replay import replay
from record_access import stage_of

import workbench as wb
from workbench.views.compare import ComparedRun, StepPoint, steps_table, totals_table


def _run(label: str, figures: list[tuple[int, int | None]]) -> ComparedRun:
    steps = tuple(StepPoint(step=i, phase="ready", final_input_tokens=raw,
                            whole_request_tokens=whole)
                  for i, (raw, whole) in enumerate(figures))
    return ComparedRun(label=label, input_budget=200_000, pressure_line=160_000, steps=steps)


def test_r_tok_2_compare_totals_use_the_whole_request_basis():
    """Tokens sent is the sum of the plotted whole-request figures, not of the raw estimate."""
    a = _run("A", [(1_000, 27_000), (2_000, 28_300)])
    b = _run("B", [(1_500, None)])  # an older record without whole-request figures: raw estimate
    totals = totals_table([a, b]).set_index("configuration")
    assert totals.loc["A", "tokens_sent"] == 55_300
    assert totals.loc["B", "tokens_sent"] == 1_500


def test_r_tok_2_compare_steps_table_uses_the_whole_request_basis():
    a = _run("A", [(1_000, 27_000), (2_000, 28_300)])
    b = _run("B", [(900, 26_000), (1_000, 26_100)])
    table = steps_table([a, b])
    assert list(table["tokens · A"]) == [27_000, 28_300]
    assert list(table["difference (B − A)"]) == [-1_000, -2_200]


def test_r_ui_9_report_of_a_one_message_session(tmp_path):
    """A session with one user message and no model call has no step: the report still renders
    (its usage chart has nothing to plot) instead of raising KeyError."""
    transcript = tmp_path / "one.jsonl"
    transcript.write_text(json.dumps({
        "type": "user", "uuid": "u1", "sessionId": "s-one", "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "hello"}}) + "\n", encoding="utf-8")
    session = wb.load_session(transcript)
    out = wb.write_report(session, tmp_path / "one.html")
    assert out is not None  # None only for standard output ('-')
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and 'id="wb-usage"' in html


# ------------------------------------------------------------ the trigger's basis (engine)

LONG = wb.sample_path("long_session")
REAL = (Path(__file__).resolve().parents[3] / "shared" / "real-sessions" / "claude_code"
        / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz")
BUDGET_96K = {"compaction": {"input_budget_tokens": 96000}}
#: Sends what the agent sent: no trimming, folding or reduction.
AGENT_LIKE = {"context_policy": {"enabled": False}, "reduction": False}


def _reduced(p) -> bool:
    """The replay's fold/trim/drop stages changed this step's request."""
    return any(p.stage(n).before_input_tokens != p.stage(n).after_input_tokens
               for n in ("fold_repeats", "drop_optional", "trim_old_bodies"))


def test_r_tok_3_a_reduced_request_triggers_on_its_own_whole_request_estimate():
    """R-TOK-3: the provider's count is the truth for the request it counted, the recorded one.
    A step whose request the replay's stages reduced compares its own calibrated local estimate
    plus the unrecorded overhead (``calibrated_local``); an unreduced one the provider's count."""
    r = replay(wb.load_session(LONG), parse_config(BUDGET_96K))
    first = next(p.step_index for p in r.preparations if p.compaction_applied)
    before = [p for p in r.preparations[1:first] if p.trigger_basis != "none"]
    assert any(_reduced(p) for p in before) and any(not _reduced(p) for p in before)
    for p in before:
        assert p.trigger_basis == ("calibrated_local" if _reduced(p) else "provider"), p.step_index
        if _reduced(p):  # the value is this request (as sent after the stages), whole basis
            assert p.trigger_tokens == p.whole_request_tokens, p.step_index
            assert "reduced this one" in stage_of(p, "compaction").note


def test_r_tok_3_an_unreduced_replay_triggers_on_the_provider_count():
    r = replay(wb.load_session(LONG), parse_config(BUDGET_96K | AGENT_LIKE))
    bases = {p.trigger_basis for p in r.preparations[1:] if not p.compaction_applied}
    first = next(p for p in r.preparations if p.compaction_applied)
    assert first.trigger_basis == "provider" and "provider" in bases
    assert first.trigger_tokens is not None and first.trigger_tokens >= first.pressure_line


def _reconciles(p) -> None:
    """Plan, candidate and commit on the untrimmed durable history; the commit's sent figures,
    the stage note, the trigger (when calibrated) and the step on this request as sent."""
    stage = stage_of(p, "compaction")
    plan = next(d for d in stage.decisions if isinstance(d, CompactionPlan))
    cand = [d for d in stage.decisions if isinstance(d, CompactionCandidate)][-1]
    commit = next(d for d in stage.decisions if isinstance(d, CompactionApplied))
    assert plan.request_tokens == commit.tokens_before and cand.tokens_after == commit.tokens_after
    assert commit.sent_tokens_after == p.whole_request_tokens
    assert commit.sent_tokens_before is not None
    assert commit.sent_tokens_before <= commit.tokens_before
    assert f"{commit.sent_tokens_before:,} → {commit.sent_tokens_after:,}" in stage.note
    assert f"{commit.sent_tokens_before:,} → {commit.sent_tokens_after:,}" in commit.reason
    if p.trigger_basis == "calibrated_local":
        assert p.trigger_tokens == commit.sent_tokens_before


def test_r_cmp_8_compaction_figures_reconcile_on_the_long_sample():
    """R-REAL-1: Every applied compaction of the generated long sample (96k budget, and cost-first)."""
    for config in (parse_config(BUDGET_96K), wb.resolve_config("cost-first")):
        r = replay(wb.load_session(LONG), config)
        applied = [p for p in r.preparations if p.compaction_applied]
        assert applied
        for p in applied:
            _reconciles(p)


def _real_session(tmp_path):
    if not REAL.is_file():
        pytest.skip("../shared/real-sessions is absent")
    target = tmp_path / "real.jsonl"
    target.write_bytes(gzip.decompress(REAL.read_bytes()))
    return wb.load_session(target)


def test_r_cmp_8_compaction_figures_reconcile_on_the_real_session(tmp_path):
    """R-REAL-1: The real Claude Code session under a 96k budget (it compacts with trimming on) and with
    a configuration that sends what the agent sent."""
    session = _real_session(tmp_path)
    for config in (BUDGET_96K, AGENT_LIKE):
        r = replay(session, parse_config(config))
        applied = [p for p in r.preparations if p.compaction_applied]
        assert applied, config
        for p in applied:
            _reconciles(p)


# ------------------------------------------------------------ redacted transcripts

CODEX = Path(__file__).resolve().parents[3] / "shared" / "real-sessions" / "codex_rollout"


def _line(kind: str, n: int, content, **extra) -> str:
    role = "assistant" if kind == "assistant" else "user"
    return json.dumps({"type": kind, "uuid": f"m{n}", "parentUuid": f"m{n - 1}" if n else None,
                       "sessionId": "s-red", "timestamp": f"2026-01-01T00:00:{n:02d}Z",
                       "message": {"role": role, "content": content, **extra}})


def _redacted_transcript(path: Path, *, redacted: bool) -> Path:
    """Three turns whose user text is (or is not) a redaction placeholder of 20,000 characters."""
    lines = []
    for n in range(3):
        text = ("[REDACTED_TEXT len=20000 sha=0123abcd]" if redacted
                else f"please look at the build log number {n}")
        usage = {"input_tokens": 30_000 + 6_000 * n, "output_tokens": 50}
        lines += [_line("user", 2 * n, text),
                  _line("assistant", 2 * n + 1, [{"type": "text", "text": f"looked at {n}"}],
                        model="claude-opus-4-6", usage=usage)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_redaction_placeholders_are_counted_from_their_len_figures(tmp_path):
    from workbench.analysis.redaction import redaction_of

    red = redaction_of(wb.load_session(_redacted_transcript(tmp_path / "r.jsonl", redacted=True)))
    assert red is not None and red.placeholders == 3 and red.messages == 3
    assert red.hidden_chars == 60_000 and not red.meaningful
    assert "not meaningful" in red.note() and "60,000 characters" in red.note()
    plain = wb.load_session(_redacted_transcript(tmp_path / "p.jsonl", redacted=False))
    assert redaction_of(plain) is None


def test_summary_json_says_when_the_estimate_error_is_not_meaningful(tmp_path):
    """The summary's estimate_error carries meaningful/text_redacted/note (docs/cli.md)."""
    from workbench.cli import main

    for redacted in (True, False):
        path = _redacted_transcript(tmp_path / f"{redacted}.jsonl", redacted=redacted)
        out = tmp_path / f"{redacted}.json"
        assert main(["replay", str(path), "--summary-json", str(out)]) == 0
        error = json.loads(out.read_text(encoding="utf-8"))["estimate_error"]
        assert error["meaningful"] is (not redacted)
        assert (error["text_redacted"] is None) is (not redacted)
        assert ("not meaningful" in error["note"]) is redacted


def test_usage_page_warns_about_a_redacted_session(tmp_path):
    from streamlit.testing.v1 import AppTest

    from workbench.storage.store import open_store

    with open_store() as store:
        store.import_file(_redacted_transcript(tmp_path / "r.jsonl", redacted=True))
    root = Path(__file__).resolve().parents[2]
    at = AppTest.from_file(str(root / "workbench" / "ui" / "app.py"), default_timeout=90).run()
    at.switch_page("../pages/usage.py").run()
    assert not at.exception, at.exception
    assert any("not meaningful" in w.value for w in at.warning)


def test_real_codex_rollout_error_is_marked_not_meaningful():
    """The shared Codex rollout is redacted throughout: its large p90 is flagged, not shown bare."""
    files = sorted(CODEX.glob("*.jsonl")) if CODEX.is_dir() else []
    if not files:
        pytest.skip("../shared/real-sessions is absent")
    from workbench.analysis.replay_report import error_meaning

    meaning = error_meaning(wb.load_session(files[0]))
    assert meaning.meaningful is False
    assert meaning.text_redacted is not None and meaning.text_redacted.share_pct > 90


def test_cli_md_documents_every_summary_json_key(tmp_path):
    """docs/cli.md names every key `--summary-json` writes, nested ones included, and the cost
    row links to docs/pricing.md."""
    from workbench.cli import main

    out = tmp_path / "s.json"
    path = _redacted_transcript(tmp_path / "r.jsonl", redacted=True)
    assert main(["replay", str(path), "--summary-json", str(out),
                 "--config", "cost-first"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    keys = set(data) | set(data["estimate_error"]) | set(data["cost"])
    keys |= set(data["estimate_error"]["text_redacted"])
    keys |= {"step", "tokens_before", "tokens_after", "trigger_value", "trigger_basis"}
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("- `--summary-json OUT`", 1)[1].split("- `--baseline recorded`", 1)[0]
    missing = sorted(k for k in keys if f"`{k}`" not in section)
    assert not missing, missing
    cost_row = next(line for line in section.splitlines() if line.startswith("  | `cost` |"))
    assert "](pricing.md)" in cost_row


def test_r_ui_9_report_says_when_the_estimate_error_is_not_meaningful(tmp_path):
    html = wb.build_report(_redacted_transcript(tmp_path / "r.jsonl", redacted=True))
    section = html.split(">Estimate error (as-recorded estimate vs provider)</h3>", 1)[1]
    assert "the estimate error is not meaningful for this session" in section.split("<h2>", 1)[0]
    plain = wb.build_report(_redacted_transcript(tmp_path / "p.jsonl", redacted=False))
    assert "not meaningful" not in plain
