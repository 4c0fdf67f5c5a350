"""One meaning per flag (R-UI-9, R-UI-8): ``-`` is standard output for every command that writes a
file (``replay --json``/``--summary-json``, ``report --out``, ``export --otlp``), never a file
named ``-``; the notebook's ``wb.replay`` takes the command line's summariser names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.errors import SummariserError

import workbench as wb
from workbench.cli import main

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "sample_sessions" / "bugfix.jsonl"
PROJECT = ROOT / "tests" / "fixtures" / "claude_project" / "sess-proj.jsonl"


def test_r_ui_9_report_out_dash_writes_the_html_to_standard_output(capsys, tmp_path,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(SMALL), "--out", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("<!DOCTYPE html>") and captured.out.rstrip().endswith("</html>")
    assert "wrote" not in captured.out and not (tmp_path / "-").exists()


def test_r_ui_9_export_otlp_dash_writes_the_spans_to_standard_output(capsys, tmp_path,
                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["export", str(SMALL), "--otlp", "-"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    spans = [s for rs in document["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert spans and "model-call spans to standard output" in captured.err
    assert not (tmp_path / "-").exists()


def test_r_ui_8_notebook_replay_takes_the_command_lines_summariser_names():
    recorded = wb.replay(PROJECT, "claude-code", summariser="recorded")
    assert recorded.summariser == "recorded"
    assert wb.replay(SMALL, summariser="offline").summariser == "extractive"
    with pytest.raises(SummariserError, match="unknown summariser 'nope'.*offline"):
        wb.replay(SMALL, summariser="nope")


def test_r_truth_2_a_saved_replay_read_back_exports_its_requests(workbench_home, tmp_path):
    """R-TRUTH-2: ``wb.saved_replay(id)`` states the saved replay (its steps and compactions) and
    its OTLP export carries each step's request, read from the store."""
    from workbench.storage.store import open_store

    assert main(["replay", str(SMALL), "--name", "kept"]) == 0
    with open_store() as store:
        (info,) = store.replays.list()
    r = wb.saved_replay(info.id)
    assert (r.label, r.saved_id, len(r)) == ("kept", info.id, info.step_count)
    document = json.loads(r.export_otlp(tmp_path / "trace.json").read_text(encoding="utf-8"))
    chats = [s for rs in document["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]
             if s["name"].startswith("chat")]
    assert len(chats) == info.step_count
    assert all(any(a["key"] == "gen_ai.input.messages" for a in s["attributes"]) for s in chats)
