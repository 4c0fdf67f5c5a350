"""A checkpoint that forgets less (R-FID-3): the extractive checkpoint's Files and Evidence section
carries the head's paths, commands and other facts within the summary allowance, on built
transcripts and on the real Claude Code sessions replayed with the agent profile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
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


def test_r_fid_3_evidence_lists_files_and_commands_with_outcomes():
    """R-FID-3: every simple command is listed verbatim with the outcome of its last run; the
    first output line only for a call that ran that command alone (a compound call's output is
    not one part's); files are split into edited and read, relative to the workspace."""
    head = (*_bash(1, "cd /home/u/p && pytest tests/test_a.py -q 2>&1 | tail -3", "1 failed", True),
            Message(role="assistant", content=(ToolCallBlock(
                id="e1", name="Edit", arguments={"file_path": "/home/u/p/src/a.py",
                                                 "new_string": "def load_config():"}),)),
            Message(role="tool", content=(ToolResultBlock(call_id="e1", text="ok"),)),
            Message(role="assistant", content=(ToolCallBlock(
                id="r1", name="Read", arguments={"file_path": "/home/u/p/lib/b.py"}),)),
            Message(role="tool", content=(ToolResultBlock(call_id="r1", text="x"),)),
            *_bash(2, "pytest tests/test_a.py -q", "1 passed"),
            *_bash(3, "git diff --stat && git log --oneline -5", " src/a.py | 2 +-"))
    text = evidence_section(head, edit_tool=EDIT_TOOL)
    assert text.startswith("Likeliest to be needed first; paths relative to `/home/u/p/`.")
    assert "- Edited:\n  - `src/a.py`" in text
    assert "- Read:\n  - `lib/b.py`" in text
    assert "  - `pytest tests/test_a.py -q` → ok: 1 passed" in text  # the last run's outcome
    assert "  - `git log --oneline -5` → ok\n" in text + "\n"  # not the diff's output line
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
    found = re.search(r"\(\+(\d+) less recently used files and commands in the archive\)", text)
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
    assert record.recall_of("paths", "commands") == 1.0
    assert [f for f in record.lost() if f.fact.kind in ("paths", "commands")] == []


def test_r_fid_3_evidence_ranks_by_use_and_listing_size():
    """R-FID-3: a Codex apply_patch file is edited; a non-zero exit line is a failure and not the
    output; with room for a few facts, the files of a short task description are kept before those
    of a long listing shown later, and a file next to the edited one before the rest of a listing."""
    listing = "\n".join(f"wiki/pages/page_{i:03d}.md" for i in range(120))
    patch = "*** Begin Patch\n*** Update File: src/app/main.py\n@@\n-a\n+b\n*** End Patch"
    head = (Message(role="assistant", content=(ToolCallBlock(id="p1", name="apply_patch",
                                                             arguments={"input": patch}),)),
            Message(role="tool", content=(ToolResultBlock(call_id="p1", text="Success"),)),
            *_bash(1, "bd show task-7", "Files to change:\n- src/app/cli.py\n- docs/guide/usage.md"),
            *_bash(2, "find wiki -type f", listing),
            *_bash(3, "make check", "Chunk ID: ab12\nWall time: 0.1 seconds\n"
                                     "Process exited with code 2\nOutput:\nlint: 3 problems"))
    text = evidence_section(head, edit_tool=EDIT_TOOL, max_chars=420)
    assert "- Edited:\n  - `src/app/main.py`" in text
    assert "`make check` → failed: lint: 3 problems" in text
    assert "cli.py" in text and "usage.md" in text  # the task's short list
    assert text.count("page_") < 10  # few of the long listing
    found = re.search(r"\(\+(\d+) less recently used files and commands in the archive\)", text)
    assert found is not None and int(found.group(1)) > 100
    near = evidence_section((*head, *_bash(4, "ls src/app", "src/app/util.py\n" + listing)),
                            edit_tool=EDIT_TOOL, max_chars=420)
    assert "util.py" in near  # listed beside the edited file


def test_r_fid_3_evidence_reads_bare_file_names_and_writes_home_paths_short():
    """R-FID-3: a file a command reads from the working folder (``nl -ba STRATEGY.md``) is a read
    file, kept before the longer commands when room is short; a file under the home folder the
    project is in is written from ``~/``; a path after a shell variable is not a file."""
    def ex(i: int, cmd: str) -> tuple[Message, ...]:
        return (Message(role="assistant", content=(ToolCallBlock(
                    id=f"x{i}", name="exec_command",
                    arguments={"cmd": cmd, "workdir": "/home/u/work/p"}),)),
                Message(role="tool", content=(ToolResultBlock(call_id=f"x{i}", text="ok"),)))

    head = (*ex(1, "sed -n '1,200p' /home/u/.codex/skills/beads/SKILL.md && nl -ba STRATEGY.md"),
            *ex(2, "git status --short --branch"),
            *ex(3, 'jq . "$ROOT/summary.json" ${HOME}/.pi/a/SKILL.md 2>/dev/null'),
            *ex(4, "git log --oneline a1b2c3d..HEAD"))
    wide = evidence_section(head, edit_tool=EDIT_TOOL, max_chars=2000)
    assert "`ROOT/summary.json`" not in wide and "`/.pi/a/SKILL.md`" not in wide
    assert "`/dev/null`" not in wide  # a shell variable's path and a device are no files
    assert "`a1b2c3d..HEAD`" not in wide  # nor a git range
    assert "paths relative to `/home/u/work/p/`" in wide
    assert "- Read:\n  - `STRATEGY.md`\n  - `~/.codex/skills/beads/SKILL.md`" in wide
    short = evidence_section(head, edit_tool=EDIT_TOOL, max_chars=200)
    assert "- Read:\n  - `STRATEGY.md`" in short and "`git status" not in short


def _evidence_share(text: str) -> float:
    found = re.search(r"^## Files and Evidence\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert found is not None, "no ## Files and Evidence section"
    return len(found.group(0)) / len(text)


@pytest.mark.slow
def test_r_fid_3_real_sessions_keep_80_percent_with_fact_list_bounded(real_sessions: Path):
    """R-FID-3 on the real sessions in ../shared (real-sessions and the corpus): the Claude Code
    sessions replayed with the claude-code profile, the Codex rollouts with the codex profile, both
    with the offline summariser. Every checkpoint's ``## Files and Evidence`` is at most 40 % of
    it, within the summary allowance; over all compactions the checkpoints keep at least 80 % of
    the needed-later paths and commands (scored by iris.fidelity, which does not build them), and
    more of them than the agents' own summaries did."""
    from workbench.importers import load_session

    corpus = real_sessions.parent / "corpus"
    files = [("claude-code", p) for p in sorted((real_sessions / "claude_code").glob("*.jsonl*"))]
    files += [("claude-code", p) for p in sorted((corpus / "claude_code").glob("*.jsonl.gz"))]
    files += [("codex", p) for p in sorted((real_sessions / "codex_rollout").glob("*.jsonl*"))]
    files += [("codex", p) for p in sorted((corpus / "codex_rollout").glob("*.jsonl.gz"))]
    assert {preset for preset, _ in files} == {"claude-code", "codex"}
    engine = [0, 0]
    agent = [0, 0]
    for preset, path in files:
        session = load_session(path).session
        result = replay(session, resolve_config(preset))
        losses = replay_losses(session, result)
        for record, checkpoint in zip(losses.replay, result.checkpoints, strict=True):
            assert _evidence_share(checkpoint.checkpoint_text) <= 0.40, (path.name, record.step)
            needed = [f for f in record.fates if f.needed_later and f.fact.kind in ("paths", "commands")]
            engine[0] += sum(f.kept for f in needed)
            engine[1] += len(needed)
            prep = next(p for p in result.preparations if p.step_index == record.step)
            stage = prep.stage("compaction")
            assert stage is not None
            used = max(d.summary_tokens for d in stage.decisions
                       if isinstance(d, CompactionCandidate))
            assert 0 < used <= result.thresholds.summary_max_tokens
        for record in losses.recorded:
            needed = [f for f in record.fates if f.needed_later and f.fact.kind in ("paths", "commands")]
            agent[0] += sum(f.kept for f in needed)
            agent[1] += len(needed)
    assert engine[1] >= 300 and agent[1]  # the sessions compact and need their facts again
    assert engine[0] / engine[1] >= 0.80, (engine, agent)
    assert engine[0] / engine[1] > agent[0] / agent[1], (engine, agent)


def test_r_fid_3_checkpoint_builder_and_scorer_share_no_code():
    """R-FID-3: the extractive checkpoint (iris.compaction's extract, evidence and progress
    modules) and the loss record that scores it (iris.fidelity) are separate: neither imports
    the other, and they import no common helper beyond the session records."""
    import ast

    root = Path(__file__).resolve().parents[2] / "core" / "iris"

    def imports(path: Path) -> set[str]:
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                found.add("." * node.level + (node.module or ""))
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        return found

    builder = {p: imports(p) for p in (root / "compaction").glob("*.py")
               if p.stem in ("extract", "evidence", "progress")}
    scorer = {p: imports(p) for p in (root / "fidelity").glob("*.py")}
    assert len(builder) == 3 and len(scorer) >= 4
    for path, names in builder.items():
        assert not any("fidelity" in n for n in names), (path.name, names)
    for path, names in scorer.items():
        assert not any("compaction" in n for n in names), (path.name, names)
    internal = lambda names: {n.lstrip(".").split(".")[0] for n in names if n.startswith("..")}
    shared = set().union(*map(internal, builder.values())) & set().union(*map(internal, scorer.values()))
    assert shared <= {"session", "frozen"}, shared


def _call(cid: str, name: str, text: str = "", **args: object) -> Message:
    from iris.session import TextBlock

    blocks: list[TextBlock | ToolCallBlock] = [TextBlock(text=text)] if text else []
    blocks.append(ToolCallBlock(id=cid, name=name, arguments=dict(args)))
    return Message(role="assistant", content=tuple(blocks))


def _said(cid: str, text: str, error: bool = False) -> Message:
    return Message(role="tool", content=(ToolResultBlock(call_id=cid, text=text, is_error=error),))


def test_r_fid_3_offline_checkpoint_is_a_summary_a_person_can_continue_from():
    """R-FID-3: the requests latest first (a queued one included), what is done with its
    evidence (a commit, a closed task, a passing test), a decision and not chatter, only the
    problem still open at the cut, the next step from the latest todo list, sub-agents in words."""
    from iris.compaction.extract import extractive_sections
    from iris.session import TextBlock

    def user(text: str) -> Message:
        return Message(role="user", content=(TextBlock(text=text),))

    todos = [{"content": "Fix the lexer", "status": "completed", "activeForm": "Fixing"},
             {"content": "Wire the CLI flag", "status": "in_progress", "activeForm": "Wiring"},
             {"content": "Write the docs", "status": "pending", "activeForm": "Writing"}]
    head = (user("Fix the lexer in src/lex.py."),
            _call("t1", "TodoWrite", todos=[{**t, "status": "pending"} for t in todos]),
            _said("t1", "ok"),
            _call("b1", "Bash", "Let me run the tests.", command="pytest tests/test_lex.py -q"),
            _said("b1", "E   AssertionError\n1 failed in 0.2s", error=True),
            _call("b2", "Bash", "The root cause is the tokenizer's lookahead, so I will switch "
                  "to a two-character window instead of peeking.", command="pytest tests/test_lex.py -q"),
            _said("b2", "..........\n10 passed in 0.3s"),
            _call("b3", "Bash", command="git commit -m 'Fix the lexer lookahead'"),
            _said("b3", "[main 1a2b3c4] Fix the lexer lookahead\n 1 file changed"),
            _call("b4", "Bash", command="bd close lex-1"),
            _said("b4", "✓ Closed lex-1: Fix the lexer"),
            _call("a1", "Task", description="Survey the CLI flags", subagent_type="Explore",
                  prompt="List the flags"),
            _said("a1", "The CLI has 12 flags; --fast is unused."),
            _call("b5", "Bash", command="make docs"),
            _said("b5", "make: *** No rule to make target 'docs'.", error=True),
            user("Also add a --fast flag to the CLI."),
            user("<system-reminder>The user sent the following message:\nKeep the old flag "
                 "working.\n\nPlease address this message and continue with your tasks."
                 "</system-reminder>"),
            _call("t2", "TodoWrite", todos=todos), _said("t2", "ok"))
    s = extractive_sections(head, current_request=None)
    assert s["Current User Request"].startswith("(queued) Keep the old flag working.")
    assert s["Background Goals"].splitlines()[:2] == ["Also add a --fast flag to the CLI.",
                                                      "Fix the lexer in src/lex.py."]
    progress = s["Progress"]
    assert "Committed: [main 1a2b3c4] Fix the lexer lookahead" in progress
    assert "Closed lex-1" in progress
    assert "Tests pass: `pytest tests/test_lex.py -q` → 10 passed in 0.3s" in progress
    assert "root cause is the tokenizer's lookahead" in s["Key Decisions"]
    assert "Let me run the tests" not in s["Key Decisions"]
    assert s["Open Problems"].startswith("- `make docs` failed: make: *** No rule")
    assert "pytest" not in s["Open Problems"]  # failed, then passed: not open
    assert s["Next Step"] == "Continue (in progress in the latest plan): Wire the CLI flag"
    assert "- [x] Fix the lexer" in s["Todo State"] and "Working on: Wire the CLI flag" in s[
        "Active Objective"]
    assert s["SubAgent State"] == ("- Explore: Survey the CLI flags — finished: The CLI has 12 "
                                   "flags; --fast is unused.")
    assert "{" not in s["SubAgent State"]  # no raw dicts


def test_r_fid_3_codex_shell_header_is_not_the_output():
    """R-FID-3: a Codex exec_command result starts with the tool's header (Chunk ID, Wall time,
    Process exited with code N, Output:): a non-zero exit is a failure even without the error flag,
    and Progress, Open Problems and the commands' outcomes quote the output, not the header."""
    from iris.compaction.extract import extractive_sections

    def ex(cid: str, cmd: str, code: int, output: str) -> tuple[Message, ...]:
        header = (f"Chunk ID: {cid}9f\nWall time: 0.2 seconds\nProcess exited with code {code}\n"
                  "Original token count: 9\nOutput:\n")
        return (_call(cid, "exec_command", cmd=cmd, workdir="/w/p"), _said(cid, header + output))

    head = (*ex("a", "bd close av-7", 0, "✓ Closed av-7: Wire the flag"),
            *ex("b", "bun test", 1, "tests/a.test.ts:\nerror: expected 2, got 3\n 1 fail"),
            *ex("c", "git status --short", 0, " M src/a.ts"))
    s = extractive_sections(head, current_request="Wire the flag.")
    assert "Closed av-7: `bd close av-7` → ✓ Closed av-7: Wire the flag" in s["Progress"]
    assert "Chunk ID" not in s["Progress"] + s["Open Problems"] + s["Files and Evidence"]
    assert s["Open Problems"].startswith("- `bun test` failed: error: expected 2, got 3")
    assert "`bun test` → failed: tests/a.test.ts:" in s["Files and Evidence"]
    assert "Tests pass" not in s["Progress"]
