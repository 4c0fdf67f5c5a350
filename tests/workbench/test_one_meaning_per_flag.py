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
