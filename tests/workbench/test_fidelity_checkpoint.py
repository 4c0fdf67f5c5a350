"""A checkpoint that forgets less (R-FID-3): the extractive checkpoint's Files and Evidence section
carries the head's paths, commands and other facts within the summary allowance, on built
transcripts and on the real Claude Code sessions replayed with the agent profile."""

from __future__ import annotations

import re
from pathlib import Path

from iris.compaction.evidence import evidence_section
from iris.compaction.extract import EDIT_TOOL
from iris.compaction.summarisers import ExtractiveSummariser, SummaryRequest
from iris.fidelity import applied_loss_record, recorded_loss_records
from iris.preparation.records import CompactionCandidate
from iris.replay import replay
from iris.session import Message, ToolCallBlock, ToolResultBlock

from workbench.analysis.fidelity import replay_losses
from workbench.services.presets import resolve_config


def _bash(i: int, command: str, output: str = "ok", error: bool = False) -> tuple[Message, ...]:
    return (Message(role="assistant", content=(ToolCallBlock(id=f"c{i}", name="Bash",
                                                             arguments={"command": command}),)),
            Message(role="tool", content=(ToolResultBlock(call_id=f"c{i}", text=output,
                                                          is_error=error),)))


def test_r_fid_3_evidence_lists_every_fact_with_outcomes():
    """R-FID-3: every simple command is listed verbatim with the outcome of its last run, files
    are split into edited and read, identifiers and errors follow."""
    head = (*_bash(1, "cd /w && pytest tests/test_a.py -q 2>&1 | tail -3", "1 failed", True),
            Message(role="assistant", content=(ToolCallBlock(
                id="e1", name="Edit", arguments={"file_path": "/w/src/a.py",
                                                 "new_string": "def load_config():"}),)),
            Message(role="tool", content=(ToolResultBlock(call_id="e1", text="ok"),)),
            *_bash(2, "pytest tests/test_a.py -q", "1 passed"))
    text = evidence_section(head, edit_tool=EDIT_TOOL)
    assert "- Edited: `/w/src/a.py`" in text
    assert "  - `pytest tests/test_a.py -q` → ok: 1 passed" in text  # the last run's outcome
    assert "`tests/test_a.py`" in text and "`load_config`" in text
    assert "cd /w" not in text and "tail -3" not in text


def test_r_fid_3_evidence_keeps_the_most_recent_facts_within_its_allowance():
    """R-FID-3: over the allowance, the least recently used facts are left out and counted; a
    fact used again late counts as recent."""
    head: tuple[Message, ...] = ()
    for i in range(40):
        head += _bash(i, f"make target_{i:02d}")
    head += _bash(99, "make target_00")  # used again: now the most recent
    text = evidence_section(head, edit_tool=EDIT_TOOL, max_chars=300)
    assert len(text) < 600
    assert "`make target_00`" in text and "`make target_39`" in text
    assert "`make target_01`" not in text
    found = re.search(r"\(\+(\d+) less recent facts in the archive\)", text)
    assert found is not None and int(found.group(1)) > 0


def test_r_fid_3_built_session_engine_keeps_what_the_agent_dropped():
    """R-FID-3: on a built session whose agent summary dropped the test command, a replay that
    compacts with the offline summariser keeps every needed-later path and command."""
    from test_fidelity import SUMMARY, _session

    session = _session(SUMMARY)
    (agent,) = recorded_loss_records(session)
    assert agent.recall_of("paths", "commands") == 1 / 3
    head = session.messages[:9]
    summary = ExtractiveSummariser().summarise(
        SummaryRequest(system_prompt="", input_text="", head=head, max_tokens=2000),
        timeout_seconds=1)
    record = applied_loss_record(session, n=1, step=4, archived=range(9), first_kept=None,
                                 checkpoint=summary.text)
    assert record.recall_of("paths", "commands") == 1.0 and record.lost() == ()


def test_r_fid_3_real_sessions_engine_recall_at_the_agent_point(real_sessions: Path):
    """R-FID-3 on the real Claude Code sessions, replayed with the claude-code profile and the
    offline summariser: the replay compacts at the agent's step, and its checkpoint keeps at least
    90 % of the needed-later paths and commands within the summary allowance, more than the
    agent's own summary kept."""
    from workbench.importers import load_session

    files = sorted((real_sessions / "claude_code").glob("*.jsonl.gz"))
    assert files
    for path in files:
        session = load_session(path).session
        result = replay(session, resolve_config("claude-code"))
        losses = replay_losses(session, result)
        for agent in losses.recorded:
            mine = next(r for r in losses.replay if abs(r.step - agent.step) <= 1)
            engine_pc, agent_pc = mine.recall_of("paths", "commands"), agent.recall_of("paths", "commands")
            assert engine_pc is not None and agent_pc is not None
            assert engine_pc >= 0.9 and engine_pc > agent_pc, (path.name, engine_pc, agent_pc)
            prep = next(p for p in result.preparations if p.step_index == mine.step)
            stage = prep.stage("compaction")
            assert stage is not None
            used = max(d.summary_tokens for d in stage.decisions
                       if isinstance(d, CompactionCandidate))
            assert 0 < used <= result.thresholds.summary_max_tokens
