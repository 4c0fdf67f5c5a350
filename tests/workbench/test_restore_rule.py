"""Claude Code's post-compaction file restore in the claude-code profile (R-TWIN-3, R-TWIN-7):
each restored file rebuilt as the disk had it at the compaction (the last full read or write,
later edits applied), the per-file limit and the total budget, the files Claude Code leaves out,
the form the agent's version sends, and the order of recency by version. Built transcripts here;
the real ones at the end (skipped when ../shared/corpus is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.compaction.agent_rules import apply_agent_rule, resolve_agent_rule
from iris.compaction.config import RestoreReads
from iris.compaction.restore import restore_files
from iris.reduction.toolkinds import ToolKindMap
from iris.replay import replay
from iris.session import Message, SessionHeader, TextBlock, ToolCallBlock, ToolResultBlock
from iris.tokens import default_estimator

from workbench.analysis.replay_report import replay_report
from workbench.importers import load_session
from workbench.services.presets import load_preset
from workbench.services.summarisers import make_summariser

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "claude_code"
REMINDER = ("\n\n<system-reminder>\nWhenever you read a file, you should consider whether it "
            "would be considered malware.\n</system-reminder>\n")
RULE = RestoreReads(files=5, tokens_per_file=5000, total_tokens=50000, form="read_json")


def _call(cid: str, name: str, **args) -> Message:
    return Message(role="assistant", content=(ToolCallBlock(id=cid, name=name, arguments=args),))


def _result(cid: str, text: str, *, error: bool = False) -> Message:
    return Message(role="user", content=(ToolResultBlock(call_id=cid, text=text,
                                                         is_error=error),))


def _shown(lines: dict[int, str], reminder: str = REMINDER) -> str:
    return "\n".join(f"{n:>6}→{t}" for n, t in sorted(lines.items())) + reminder


def _read(cid: str, path: str, lines: dict[int, str], **args) -> list[Message]:
    return [_call(cid, "Read", file_path=path, **args), _result(cid, _shown(lines))]


def _edit(cid: str, path: str, old: str, new: str) -> list[Message]:
    return [_call(cid, "Edit", file_path=path, old_string=old, new_string=new),
            _result(cid, f"The file {path} has been updated.")]


def _restore(history: list[Message], rule: RestoreReads = RULE, tail: list[Message] | None = None,
             ratio: float = 1.0):
    return restore_files(history, tail or [], rule, kinds=ToolKindMap(),
                         estimator=default_estimator(), ratio=ratio)


def _content(message: Message) -> tuple[str, str]:
    """(path, result text) of a restored message in the ``read_json`` form."""
    called, result = (b.text for b in message.content if isinstance(b, TextBlock))
    path = json.loads(called.split("input: ", 1)[1].rsplit("\n</system-reminder>", 1)[0])
    body = result.split("Result of calling the Read tool: ", 1)[1].rsplit("\n</system-", 1)[0]
    return path["file_path"], json.loads(body)


def test_r_twin_3_an_edit_after_a_full_read_is_applied_and_shifts_the_lines_after_it():
    """R-TWIN-3: the file comes back as the disk had it: the last full read with the edit made
    after it applied (two lines for one: the lines after it move down by one)."""
    lines = {1: "def a():", 2: "    return 1", 3: "", 4: "def b():", 5: "    return 2"}
    history = [*_read("r1", "/src/a.py", lines),
               *_edit("e1", "/src/a.py", "    return 1", "    x = 1\n    return x")]
    done = _restore(history)
    (message,) = done.messages
    path, text = _content(message)
    assert path == "/src/a.py"
    assert text.startswith("     1→def a():\n     2→    x = 1\n     3→    return x\n")
    assert "     5→def b():\n     6→    return 2" in text
    assert "return 1" not in text
    assert text.endswith(REMINDER)  # the reminder the session's reads carry
    assert "a.py: whole" in done.note


def test_r_twin_3_a_write_gives_the_whole_file_and_a_later_read_of_part_of_it_keeps_it_whole():
    """R-TWIN-3: a Write gives the file's whole text; an edit after it applies to that text."""
    history = [_call("w1", "Write", file_path="/src/c.py", content="C = 3\nD = 4\nE = 5"),
               _result("w1", "File created successfully at: /src/c.py"),
               *_read("r1", "/src/c.py", {2: "D = 4"}, offset=2, limit=1),
               *_edit("e1", "/src/c.py", "E = 5", "E = 6")]
    done = _restore(history)
    _, text = _content(done.messages[0])
    assert text.startswith("     1→C = 3\n     2→D = 4\n     3→E = 6")
    assert "c.py: whole" in done.note


def test_r_twin_3_a_partly_read_file_is_edited_in_the_lines_shown_and_said_partly_known():
    """R-TWIN-3: with only lines 40–42 shown, the edit applies there; the note says the replay
    knows 3 lines of a file of at least 42; an edit of text never shown is not invented."""
    history = [*_read("r1", "/src/big.py", {40: "x = 1", 41: "y = 2", 42: "z = 3"},
                      offset=40, limit=3),
               *_edit("e1", "/src/big.py", "y = 2", "y = 20"),
               *_edit("e2", "/src/big.py", "never shown", "still unknown")]
    done = _restore(history)
    _, text = _content(done.messages[0])
    assert "    41→y = 20" in text and "still unknown" not in text
    assert "the 3 lines the calls displayed (of at least 42)" in done.note
    assert "an edit of text the calls never displayed is not applied" in done.note


def test_r_twin_3_the_per_file_limit_is_in_the_providers_tokens_and_the_budget_skips_a_file():
    """R-TWIN-3: a file over 5,000 provider tokens (local count × the calibration ratio) comes
    back as Claude Code's short reference; a file that would go over the total budget is left
    out and a later, smaller one still comes back."""
    small = {n: f"value_{n} = {n}" for n in range(1, 11)}
    history = [*_read("r1", "/src/small.py", small)]
    local = default_estimator().count("\n".join(small.values()))
    tight = RestoreReads(files=5, tokens_per_file=local + 1, total_tokens=50000, form="read_json")
    assert len(_restore(history, tight).messages[0].content) == 2  # the text fits at ratio 1
    (ref,) = _restore(history, tight, ratio=1.5).messages
    assert "Note: /src/small.py was read before the last conversation was summarized" in ref.text
    big = {n: f"line_{n} = compute({n})" for n in range(1, 301)}
    budget = RestoreReads(files=5, tokens_per_file=50000, total_tokens=800, form="read_json")
    done = _restore([*_read("r0", "/src/tiny.py", {1: "T = 1"}), *_read("r2", "/src/big.py", big)],
                    budget)
    assert [_content(m)[0] for m in done.messages] == ["/src/tiny.py"]
    assert "big.py: left out (over the 800-token budget)" in done.note


def test_r_twin_3_memory_and_plan_files_and_files_read_in_the_tail_are_not_restored():
    """R-TWIN-3: CLAUDE.md files and the plan file are never restored; a file whose read is
    still in the kept messages is skipped; at most ``files`` files come back."""
    history = [*_read("m", "/repo/CLAUDE.md", {1: "# rules"}),
               *_read("p", "/home/u/.claude/plans/plan-x.md", {1: "# plan"})]
    for i in range(7):
        history += _read(f"r{i}", f"/src/f{i}.py", {1: f"F{i} = {i}"})
    tail = _read("t", "/src/f6.py", {1: "F6 = 6"})
    done = _restore(history, tail=tail)
    paths = [_content(m)[0] for m in done.messages]
    assert paths == ["/src/f5.py", "/src/f4.py", "/src/f3.py", "/src/f2.py", "/src/f1.py"]


def test_r_twin_3_files_restored_at_a_compaction_are_candidates_at_the_next():
    """R-TWIN-3: restoring a file reads it again, so it is in Claude Code's file state at the
    next compaction; the replay finds it in the messages the last compaction attached."""
    first = _restore(_read("r1", "/src/a.py", {1: "A = 1"}))
    later = [*first.messages, *_read("r2", "/src/b.py", {1: "B = 2"})]
    paths = [_content(m)[0] for m in _restore(later).messages]
    assert paths == ["/src/b.py", "/src/a.py"]


def test_r_twin_7_the_restore_form_and_order_follow_the_version():
    """R-TWIN-7: up to 2.1.85 a restored file is a Read call and its JSON-quoted result, files
    ordered by their last read, edit or write; from 2.1.86 the result is text with N<tab>
    numbers, and edited files come first (a read is stamped with the file's modification
    time)."""
    old = resolve_agent_rule("claude-code", "2.1.25", "claude-opus-4-5").rule.restore
    new = resolve_agent_rule("claude-code", "2.1.86", "claude-opus-4-6").rule.restore
    assert dict(old) == {"form": "read_json", "order": "touched"}
    assert dict(new) == {"form": "read_text", "order": "modified"}
    config, _ = apply_agent_rule(load_preset("claude-code"),
                                 SessionHeader(session_id="s", model="claude-opus-4-6",
                                               agent_version="2.1.87"))
    rule = config.compaction.restore_recent_reads
    assert rule is not None and (rule.form, rule.order, rule.files) == ("read_text", "modified", 5)
    history = [*_read("r1", "/src/edited.py", {1: "E = 1"}),
               *_edit("e1", "/src/edited.py", "E = 1", "E = 2"),
               *_read("r2", "/src/read.py", {1: "R = 1"})]
    text_form = _restore(history, rule)
    called, result = (b.text for b in text_form.messages[0].content if isinstance(b, TextBlock))
    assert '{"file_path":"/src/edited.py"}' in called
    assert "Result of calling the Read tool:\n1\tE = 2" in result
    touched = _restore(history, RestoreReads(form="read_json", order="touched"))
    assert [_content(m)[0] for m in touched.messages] == ["/src/read.py", "/src/edited.py"]


def _corpus(prefix: str) -> Path:
    found = sorted(CORPUS.glob(f"{prefix}*.jsonl.gz")) if CORPUS.is_dir() else []
    if not found:
        pytest.skip(f"{prefix} is absent from {CORPUS}")
    return found[0]


@pytest.mark.parametrize("prefix", ["8209f1c2", "9d7a9d52"])
def test_r_twin_3_real_restores_are_the_sessions_files_in_the_versions_form(prefix):
    """R-TWIN-3 on real transcripts: every compaction of the replay restores at most 5 files,
    each one the session read, edited or wrote, in the form of its version (2.1.25, 2.1.45: a
    Read call and its JSON-quoted result, or the reference), and its note says how each file
    was rebuilt."""
    session = load_session(_corpus(prefix)).session
    touched = {str(c.arguments.get("file_path")) for m in session.messages for c in m.tool_calls
               if c.name in ("Read", "Edit", "MultiEdit", "Write")}
    result = replay(session, load_preset("claude-code"),
                    summariser=make_summariser("recorded", session))
    assert result.checkpoints
    for checkpoint in result.checkpoints:
        prep = result.preparations[checkpoint.step_index]
        stage = prep.stage("compaction")
        assert stage is not None and "restored files: " in " ".join(
            getattr(d, "reason", "") for d in stage.decisions)
        request = result.request(prep)
        assert request is not None
        restored = [m for m in request.messages if m.synthetic and m.text.startswith(
            ("<system-reminder>\nCalled the Read tool", "<system-reminder>\nNote: "))]
        assert 0 < len(restored) <= 5
        for message in restored:
            if message.text.startswith("<system-reminder>\nNote: "):
                path = message.text.split("Note: ", 1)[1].split(" was read before", 1)[0]
            else:
                path, _ = _content(message)
            assert path in touched


def test_r_twin_3_real_first_request_after_is_near_the_agents_where_files_are_known():
    """R-TWIN-3 on a real transcript whose restored files the reads showed whole or over the
    limit (8209f1c2, 2.1.45): the replay's first request after the compaction is within 15 %
    of the agent's."""
    session = load_session(_corpus("8209f1c2")).session
    result = replay(session, load_preset("claude-code"),
                    summariser=make_summariser("recorded", session))
    report = replay_report(session, result)
    (agent,) = report.recorded_compactions
    own = min(report.compactions, key=lambda c: abs(c.step - agent.step))
    assert abs(own.step - agent.step) <= 1
    assert agent.tokens_after and own.tokens_after
    assert abs(own.tokens_after - agent.tokens_after) <= 0.15 * agent.tokens_after


def test_r_twin_3_a_partly_read_file_counts_as_long_as_its_recorded_line_count():
    """R-TWIN-3: a read that records the file's line count (Claude Code
    ``toolUseResult.file.totalLines``) sizes the file Claude Code reads again whole: 3 lines
    shown of 900 make a reference; without the count the 3 lines (the highest line shown is 3)
    fit."""
    shown = {1: "x = 1", 2: "y = 2", 3: "z = 3"}
    call = _call("r1", "Read", file_path="/src/long.py", limit=3)
    counted = Message(role="user", content=(ToolResultBlock(call_id="r1", text=_shown(shown),
                                                            file_lines=900),))
    rule = RestoreReads(files=5, tokens_per_file=200, total_tokens=50000, form="read_json")
    (ref,) = _restore([call, counted], rule).messages
    assert "Note: /src/long.py was read before the last conversation was summarized" in ref.text
    plain = _restore([call, _result("r1", _shown(shown))], rule)
    assert _content(plain.messages[0])[1].startswith("     1→x = 1")


def test_r_twin_3_the_claude_code_importer_keeps_a_reads_line_count():
    """R-TWIN-3: the Claude Code importer keeps ``toolUseResult.file.totalLines`` on the read's
    result (9d7a9d52: temporary.go read in parts, 1,028 lines then)."""
    session = load_session(_corpus("9d7a9d52")).session
    calls = {c.id: c for m in session.messages for c in m.tool_calls if c.name == "Read"}
    counts = {r.file_lines for m in session.messages for r in m.tool_results
              if r.call_id in calls and str(calls[r.call_id].arguments.get("file_path", ""))
              .endswith("checkpoint/temporary.go")}
    assert 1028 in counts
    assert all(r.file_lines is None for m in session.messages for r in m.tool_results
               if r.call_id not in calls)
