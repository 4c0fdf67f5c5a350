"""A replay never fails silently (R-TWIN-9): failed steps are counted in ``--summary-json``
(``failed_steps`` and each step's stage and reason in ``failures``), ``workbench replay`` exits 2
unless ``--allow-failed`` is given, and the recorded summariser falls back to the offline one, with
a note, at a compaction whose recorded summary is encrypted or redacted."""

from __future__ import annotations

import json
from pathlib import Path

from iris.compaction import RecordedSummariser, SummaryRequest, validate_summary
from iris.session import Message, RecordedCompaction, Session, SessionHeader, TextBlock, Usage

from workbench.cli import main
from workbench.importers import load_session
from workbench.importers.native import dumps_session

ROOT = Path(__file__).resolve().parents[2]
CODEX_ENCRYPTED = ROOT / "tests" / "fixtures" / "importers" / "codex_replacement_history.jsonl"


def _user(text: str, **kw) -> Message:
    return Message(role="user", content=(TextBlock(text=text),), **kw)


def _answer(text: str, prompt: int) -> Message:
    return Message(role="assistant", content=(TextBlock(text=text),),
                   usage=Usage(input_tokens=prompt, output_tokens=10))


def _failing_session(tmp_path: Path) -> tuple[Path, Path]:
    """A session whose compaction keeps a current message too large for a 60,000 budget (its
    later steps fail), written in the native format, with that configuration."""
    s = Session(header=SessionHeader(session_id="fails"), messages=(
        _user("hello"), _answer("hi", 3000), _user("please " + "y " * 8000), _answer("ok", 30000),
        _user("now"), _answer("fine", 100000), _user("now " + "x " * 30000),
        _answer("fine", 100000)))
    path, config = tmp_path / "fails.jsonl", tmp_path / "budget.yaml"
    path.write_text(dumps_session(s), "utf-8")
    config.write_text("compaction:\n  input_budget_tokens: 60000\n", "utf-8")
    return path, config


def test_r_twin_9_failed_steps_exit_2_and_are_listed_in_the_summary(tmp_path, capsys):
    """Exit 2, the "ready N · failed M" line on stdout, the first failure named; the summary has
    failed_steps and each failed step with its stage and reason."""
    path, config = _failing_session(tmp_path)
    out = tmp_path / "s.json"
    assert main(["replay", str(path), "--config", str(config), "--summary-json", str(out)]) == 2
    printed = capsys.readouterr().out
    data = json.loads(out.read_text("utf-8"))
    assert data["failed_steps"] >= 1 and len(data["failures"]) == data["failed_steps"]
    first = data["failures"][0]
    assert first["stage"] == "compaction" and first["reason"]
    assert f"failed {data['failed_steps']} ·" in printed
    assert f"first: step {first['step']}" in printed and "exit code 2" in printed


def test_r_twin_9_allow_failed_exits_0(tmp_path, capsys):
    path, config = _failing_session(tmp_path)
    assert main(["replay", str(path), "--config", str(config), "--allow-failed"]) == 0
    assert "--allow-failed: exit code 0" in capsys.readouterr().out


def _request(head: tuple[Message, ...], step: int) -> SummaryRequest:
    return SummaryRequest(system_prompt="", input_text="", head=head, max_tokens=2000,
                          step_index=step)


def test_r_twin_9_encrypted_codex_summary_falls_back_offline_with_a_note():
    """A Codex compaction whose summary is the encrypted item: at the agent's step the checkpoint
    is the offline one and the note says the agent's summary is not readable."""
    session = load_session(CODEX_ENCRYPTED).session
    (compaction,) = session.compactions
    summariser = RecordedSummariser(session)
    step = summariser.written_step(compaction.at_message)
    assert step is not None
    result = summariser.summarise(_request(session.messages[:compaction.at_message], step),
                                  timeout_seconds=1)
    assert result.kind == "extractive" and "not readable" in result.note
    validate_summary(result.text)


def test_r_twin_9_redacted_summary_is_no_summary():
    """A summary redacted to a placeholder is not offered as the agent's summary anywhere."""
    messages = (_user("Go."), _answer("ok", 100), _user("continue"), _answer("ok", 120),
                _user("[REDACTED_TEXT len=640 sha=7d538904]", is_compaction_summary=True),
                _user("next"), _answer("done", 90))
    session = Session(header=SessionHeader(session_id="r"), messages=messages,
                      compactions=(RecordedCompaction(at_message=4, summary=messages[4].text),))
    summariser = RecordedSummariser(session)
    assert not summariser.available
    own = summariser.summarise(_request(messages[:4], 2), timeout_seconds=1)
    later = summariser.summarise(_request(messages[:6], 3), timeout_seconds=1)
    assert own.kind == later.kind == "extractive"
    assert "not readable" in own.note and "REDACTED" not in own.text
