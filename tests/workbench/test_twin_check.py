"""``workbench twin-check`` (R-TWIN-3, R-TWIN-8, R-TWIN-9): one row per recorded compaction, the
file's own response count and usage bill next to the import's, the summary's shares. The corpus
check with the issue's thresholds is in test_twin_check_corpus.py (slow)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.corpus.twin_check import _pair, transcript_files, twin_check
from workbench.corpus.twin_raw import file_facts

ROOT = Path(__file__).resolve().parents[2]
IMPORTERS = ROOT / "tests" / "fixtures" / "importers"
PROJECT = ROOT / "tests" / "fixtures" / "claude_project"


def test_r_twin_8_folders_give_their_transcripts_without_subagent_files():
    """Folders are searched for .jsonl and .jsonl.gz; a sub-agent's file is billed with its parent,
    not checked on its own; a path that does not exist is an error naming it."""
    found = transcript_files([IMPORTERS, PROJECT])
    names = [p.name for p in found]
    assert "claude_compact.jsonl" in names and "sess-proj.jsonl" in names
    assert "chat_array.json" not in names and not any(n.startswith("agent-") for n in names)
    with pytest.raises(Exception, match="nope"):
        transcript_files([IMPORTERS / "nope"])


def test_r_twin_8_file_facts_count_responses_and_bill_their_usage():
    """The file's own figures, read without the importer: Claude Code groups the lines of one
    response by message.id; Codex counts one call per changed token_count."""
    claude = file_facts(IMPORTERS / "claude_compact.jsonl")
    assert (claude.agent, claude.responses) == ("claude_code", 3)
    assert claude.billed_usd is not None and claude.billed_usd > 0
    codex = file_facts(IMPORTERS / "codex_basic.jsonl")
    assert (codex.agent, codex.responses) == ("codex", 3)


def test_r_twin_3_pairing_uses_each_profile_compaction_once_with_the_agents_tolerance():
    """Each recorded compaction takes the nearest profile compaction not yet paired; Claude Code
    counts ±1 step as at the agent's step, Codex ±3; Δ % compares the first request after."""
    rows = _pair([(10, 160_000, 40_000, "auto"), (50, 160_000, 40_000, "auto")],
                 [(12, 161_000, 45_000)], "claude_code", "f")
    assert [(r.profile_step, r.at_step) for r in rows] == [(12, False), (None, False)]
    assert rows[0].after_delta_pct == 12.5 and rows[0].within_after
    (codex,) = _pair([(10, 200_000, 20_000, "auto")], [(13, 200_000, 30_000)], "codex", "f")
    assert codex.at_step and codex.after_delta_pct == 50.0 and not codex.within_after


def test_r_twin_9_twin_check_prints_rows_files_and_summary_and_writes_json(tmp_path, capsys):
    """One row per recorded compaction and one per file, with the responses in the file and
    imported and the two bills; --json writes the same; another agent's file is skipped."""
    out = tmp_path / "twin.json"
    assert main(["twin-check", str(IMPORTERS), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "AGENT STEP" in printed and "RESPONSES IN FILE" in printed
    assert printed.rstrip().splitlines()[-1].startswith("twin-check: ")
    data = json.loads(out.read_text("utf-8"))
    by_name = {Path(f["file"]).name: f for f in data["files"]}
    compact = by_name["claude_compact.jsonl"]
    assert compact["responses_in_file"] == compact["responses_imported"] == 3
    assert compact["usage_billed_usd"] == compact["recorded_billed_usd"]
    (row,) = compact["compactions"]
    assert (row["agent_step"], row["trigger"]) == (2, "auto")
    assert by_name["otel_legacy.jsonl"]["skipped"] and not by_name["otel_legacy.jsonl"]["error"]
    assert data["summary"]["compactions"] == sum(len(f["compactions"]) for f in data["files"])


def test_r_twin_9_a_file_strict_import_refuses_is_reported_and_exits_1(tmp_path, capsys):
    """A transcript the strict import refuses is named with the reason; the others are still
    checked and the command exits 1."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "sessionId": "s", "uuid": 5}\n', "utf-8")
    good = tmp_path / "good.jsonl"
    good.write_text((IMPORTERS / "codex_basic.jsonl").read_text("utf-8"), "utf-8")
    report = twin_check([tmp_path])
    assert report.summary.files == 2 and report.summary.files_failed == 1
    assert main(["twin-check", str(tmp_path)]) == 1
    assert "strict import refused it" in capsys.readouterr().out


def test_r_twin_3_bench_report_keeps_the_twin_table():
    """The bench case's section of bench/RESULTS.md: the shares against the targets, one row per
    recorded compaction and per file; a missing corpus is said to be skipped."""
    sys.path.insert(0, str(ROOT / "bench"))  # bench/ is not a package
    from report_twin import twin_lines

    result = {"wall": 1.0, "cpu": 1.0, **twin_check([IMPORTERS]).model_dump(mode="json")}
    text = "\n".join(twin_lines(result))
    assert "Targets not met" in text and "target ≥ 90%" in text and "{" not in text
    assert "| claude_c | 1 | auto | 2 |" in text and "| codex_ba | codex |" in text
    assert twin_lines({"skipped": "../shared/corpus absent"})[2] == "Skipped: ../shared/corpus absent."


CORPUS_70D = ROOT.parent / "shared" / "corpus" / "claude_code" / "70d782f7-b303-4e48-9512-6bec16c37abd.jsonl.gz"


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS_70D.is_file(), reason="../shared/corpus is not beside the project")
def test_r_twin_4_profile_before_is_what_its_trigger_compared_as_the_agents_pretokens():
    """Claude Code 2.1.20 cleared old tool results (a recorded microcompaction) in the step it
    compacted: the request it sent was about 38,500 tokens smaller than the count it compared.
    The row's two "before" figures are the counts the two triggers compared, so they agree."""
    from workbench.corpus.twin_check import check_file

    checked = check_file(CORPUS_70D)
    first = checked.compactions[0]
    assert first.at_step
    assert first.agent_before is not None and first.profile_before is not None
    assert abs(first.profile_before - first.agent_before) <= 0.01 * first.agent_before
