"""A failed step states one set of figures (R-TWIN-5, R-REAL-1): its header (whole request vs the
budget, in the pressure colour), its Why panel (the trigger value against the threshold line)
and its error (the size check against the pressure line) all speak whole requests (calibrated
local estimate + unrecorded overhead), never the pressure line converted to raw local units.

One session is built in memory so that the provider counts about 12 tokens per local token
(a calibrated replay, like a transcript whose text is redacted); the compaction at step 3 keeps a
current message too large for the line, so its summary is rejected. The shared Codex rollout
at a 96,000 budget, which failed 19 steps because the raw tail's target was not converted to the
engine's local units, is checked to compact without failing when ../shared is present.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from iris.config import parse_config
from iris.preparation import ContextPreparation
from iris.preparation.records import CompactionRejected
from iris.replay import replay
from iris.session import Message, Session, SessionHeader, TextBlock, Usage
from record_access import stage_of

from workbench.views.step_page import header_text

CODEX = Path(__file__).resolve().parents[3] / "shared" / "real-sessions" / "codex_rollout"


def _user(text: str) -> Message:
    return Message(role="user", content=(TextBlock(text=text),))


def _answer(text: str, prompt: int) -> Message:
    return Message(role="assistant", content=(TextBlock(text=text),),
                   usage=Usage(input_tokens=prompt, output_tokens=10))


def _calibrated_failure() -> tuple[ContextPreparation, ...]:
    s = Session(header=SessionHeader(session_id="failed-figures"), messages=(
        _user("hello"), _answer("hi", 3000), _user("please " + "y " * 8000), _answer("ok", 30000),
        _user("now"), _answer("fine", 100000), _user("now " + "x " * 30000),
        _answer("fine", 100000)))
    return replay(s, parse_config({"compaction": {"input_budget_tokens": 60000}})).preparations


def _numbers(text: str) -> set[int]:
    return {int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", text)}


def _assert_one_basis(p: ContextPreparation) -> None:
    """Header, Why panel and error of the failed step ``p`` state the same figures."""
    assert p.phase == "failed" and p.error is not None and p.error.stage == "compaction"
    whole = p.whole_request_tokens
    assert whole is not None
    assert whole == round(p.calibration_ratio * p.final_input_tokens) + p.unrecorded_overhead_tokens
    stage = stage_of(p, "compaction")
    rejected = [d for d in stage.decisions if isinstance(d, CompactionRejected)][-1]
    # the error cites the pressure line and the whole request after the summary, nothing else
    assert _numbers(p.error.message) <= {p.pressure_line, rejected.tokens_after}
    assert rejected.tokens_after is not None and rejected.tokens_after > p.pressure_line
    assert "engine figures" not in p.error.message
    # the trigger value the Why panel shows is on the record, so the header shows it too
    assert p.trigger_tokens is not None and f"{p.trigger_tokens:,}" in stage.note
    head = header_text(p, 100, None)
    assert f"[{whole:,}] of {p.input_budget:,}" in head.cells[0]
    assert f"{p.trigger_tokens:,}" in head.cells[2]
    assert head.error is not None and p.error.message in head.error
    if whole >= p.pressure_line:
        assert head.cells[0].startswith("**Final input (whole request)** :red[")


def test_r_twin_5_failed_step_header_why_and_error_share_the_whole_request_basis():
    """R-TWIN-5/R-REAL-1: a compaction rejected at a calibrated step fails with an error in
    whole-request figures (the pressure line as configured, not in raw local units), and its
    record keeps the trigger value and the whole request the header colours."""
    preps = _calibrated_failure()
    failed = [p for p in preps if p.phase == "failed"]
    assert [p.step_index for p in failed] == [3]
    p = failed[0]
    assert p.calibration_ratio > 10 and p.unrecorded_overhead_tokens > 0  # a calibrated step
    assert p.trigger_basis == "provider" and p.trigger_tokens == 100_010
    rejected = stage_of(p, "compaction").decisions[-1]
    assert isinstance(rejected, CompactionRejected) and rejected.tokens_after is not None
    assert p.error is not None and p.error.message.startswith(
        f"whole request after the summary {rejected.tokens_after:,} > pressure line "
        f"{p.pressure_line:,}")
    _assert_one_basis(p)


@pytest.mark.skipif(not CODEX.is_dir(), reason="../shared real sessions not present")
def test_r_real_1_codex_rollout_at_96k_keeps_a_tail_sized_in_whole_requests():
    """R-REAL-1/R-TWIN-5: the real Codex rollout (its text redacted, about 13 provider tokens per
    local token) replayed at a 96,000 budget. The raw tail's target is a share of the whole
    request, so in the engine's local units it is divided by the calibration ratio; kept in
    whole-request tokens it exceeded the converted budget, every cut kept nearly the whole
    history and 19 steps in a row failed. Now no step fails and every compaction's request after
    it is under the pressure line, on the same basis the header states."""
    from workbench.analysis.figures import applied_compactions
    from workbench.importers import load_session

    session = load_session(next(CODEX.glob("*.jsonl"))).session
    preps = replay(session, parse_config({"compaction": {"input_budget_tokens": 96000}})).preparations
    assert [p.step_index for p in preps if p.phase == "failed"] == []
    compactions = applied_compactions(preps)
    assert compactions and compactions[0].step == 36
    for c in compactions:
        p = preps[c.step]
        assert p.calibration_ratio > 5  # the redacted text: a strongly calibrated replay
        assert c.tokens_after is not None and c.tokens_before is not None
        assert c.tokens_after == p.whole_request_tokens
        assert c.tokens_after <= p.pressure_line < c.tokens_before
