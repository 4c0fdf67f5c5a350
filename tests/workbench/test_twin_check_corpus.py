"""The corpus check the project runs on itself (R-TWIN-3, R-TWIN-8, R-TWIN-9): ``workbench
twin-check`` on ../shared/corpus (11 Claude Code sessions 2.1.1–2.1.45, 3 Codex rollouts
0.141–0.142.5, 23 recorded compactions; see its SOURCE.txt). Skipped when the corpus is absent.

Thresholds: every file imports in strict mode; ≥ 90 % of the recorded compactions at the agent's
step (±1, Codex ±3) and ≥ 80 % within 15 % on the first request after; no failed step in any
profile replay; every file's bill (``recorded_billed_usd``) within 2 % of its usage fields'."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.corpus.twin_check import BILL_TOLERANCE, twin_check

pytestmark = pytest.mark.slow  # replays 14 real transcripts (about 20 s)

SHARED = Path(__file__).resolve().parents[3] / "shared"
CORPUS = SHARED / "corpus"


@pytest.fixture(scope="module")
def report():
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} absent")
    return twin_check([CORPUS])


def test_r_twin_8_every_corpus_file_imports_strictly_and_replays_without_a_failed_step(report):
    s = report.summary
    refused = [f"{Path(f.file).name}: {f.error}" for f in report.files if f.error]
    assert s.files == 14 and not refused, refused
    failed = [f"{Path(f.file).name}: {f.failed_steps} ({f.first_failure})"
              for f in report.files if f.failed_steps]
    assert s.failed_steps == 0, failed


def test_r_twin_8_real_sessions_import_strictly_with_every_response_and_bill():
    """../shared/real-sessions (Claude Code and Codex): strict, every response in the file
    imported, no failed step, the bill equal to the usage fields' within 2 %."""
    folder = SHARED / "real-sessions"
    if not folder.is_dir():
        pytest.skip(f"{folder} absent")
    report = twin_check([folder])
    checked = [f for f in report.files if not f.skipped]
    assert len(checked) == 4 and not any(f.error for f in checked)
    assert [(f.responses_in_file, f.failed_steps) for f in checked] == [
        (f.responses_imported, 0) for f in checked]
    assert all(f.bill_delta_pct is not None and abs(f.bill_delta_pct) <= 100 * BILL_TOLERANCE
               for f in checked)


def _off(report) -> list[tuple[str, int, int, int | None, float | None]]:
    return [(Path(c.file).name[:13], c.n, c.agent_step, c.profile_step, c.after_delta_pct)
            for f in report.files for c in f.compactions if not (c.at_step and c.within_after)]


def test_r_twin_3_corpus_compactions_at_the_agents_step(report):
    """≥ 90 % of the recorded compactions at the agent's step (±1; Codex ±3)."""
    s = report.summary
    assert s.compactions == 23
    assert s.at_step_share is not None and s.at_step_share >= 0.90, (s.at_step_share, _off(report))


def test_r_twin_3_corpus_first_requests_after_within_15_percent(report):
    """≥ 80 % of the recorded compactions have the profile's first request after within 15 % of
    the agent's."""
    s = report.summary
    assert s.compactions == 23
    assert s.within_after_share is not None and s.within_after_share >= 0.80, (
        s.within_after_share, _off(report))


def test_r_twin_6_corpus_bills_within_2_percent_of_the_usage_fields(report):
    """The import's bill of every file is within 2 % of its usage fields' bill (a response the
    import dropped would show here)."""
    off = [(Path(f.file).name, f.bill_delta_pct) for f in report.files
           if f.bill_delta_pct is None or abs(f.bill_delta_pct) > 100 * BILL_TOLERANCE]
    assert report.summary.bills_off == 0 and not off, off
