"""A Claude Code file with repeated ids (appended to itself, a copied tool_use id, a second result
for one call, a response id reused later) is a strict error naming file, line and field, and a
lenient import lists it as a warning (R-SES-5, R-TWIN-1)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from claude_builders import asst, call, result, user, write
from iris.errors import SessionFormatError

from workbench.importers import load_session

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions" / "claude_code"


def _rows() -> list[dict]:
    return [user("u1", None, "List the files"), asst("a1", "u1", "msg_1", call("toolu_1")),
            result("r1", "a1", "toolu_1", "a.py b.py"), asst("a2", "r1", "msg_2", "Two files.")]


def _strict_error(path: Path) -> SessionFormatError:
    with pytest.raises(SessionFormatError) as err:
        load_session(path)
    assert str(path) in str(err.value)
    return err.value


def test_r_ses_5_file_appended_to_itself_is_a_strict_error_and_a_lenient_warning(tmp_path):
    """The second copy's first line repeats a uuid: strict names line 5 and ``uuid``; lenient
    imports the conversation once (4 messages, 1 tool call) and lists each copied line."""
    path = write(tmp_path / "twice.jsonl", _rows() * 3)
    err = _strict_error(path)
    assert (err.line, err.field) == (5, "uuid") and "repeats line 1" in err.problem
    once = load_session(write(tmp_path / "once.jsonl", _rows())).session
    lenient = load_session(path, lenient=True)
    assert lenient.session.messages == once.messages
    assert len(lenient.session.index.calls) == 1
    copies = [w for w in lenient.warnings if "uuid" in w.problem and "left out" in w.problem]
    assert [w.line for w in copies] == list(range(5, 13))


def test_r_ses_5_repeated_tool_use_id_is_a_strict_error(tmp_path):
    """A later call reusing ``toolu_1`` names its line and the tool_use id field."""
    rows = [*_rows(), user("u3", "a2", "Again"), asst("a3", "u3", "msg_3", call("toolu_1"))]
    err = _strict_error(write(tmp_path / "s.jsonl", rows))
    assert (err.line, err.field) == (6, "message.content.id") and "'toolu_1'" in err.problem
    warned = load_session(tmp_path / "s.jsonl", lenient=True).warnings
    assert any(w.line == 6 and "tool_use id 'toolu_1'" in w.problem for w in warned)


def test_r_ses_5_second_result_for_one_call_is_a_strict_error(tmp_path):
    rows = [*_rows(), result("r2", "a2", "toolu_1", "again")]
    err = _strict_error(write(tmp_path / "s.jsonl", rows))
    assert (err.line, err.field) == (5, "message.content.tool_use_id")


def test_r_ses_5_response_id_reused_after_another_response_is_a_strict_error(tmp_path):
    """Lines of one response may be split by its tool results, never by another response."""
    rows = [*_rows(), user("u3", "a2", "More"), asst("a3", "u3", "msg_1", "Reused id.")]
    err = _strict_error(write(tmp_path / "s.jsonl", rows))
    assert (err.line, err.field) == (6, "message.id") and "repeats the response of line 2" in err.problem


def test_r_ses_5_split_response_around_its_results_is_not_a_repeat(tmp_path):
    """One response whose blocks are split by the results of its own calls imports strict."""
    rows = [user("u1", None, "Read both"), asst("a1", "u1", "msg_1", call("toolu_1")),
            result("r1", "a1", "toolu_1"), asst("a1b", "r1", "msg_1", call("toolu_2")),
            result("r2", "a1b", "toolu_2"), asst("a2", "r2", "msg_2", "Read.")]
    session = load_session(write(tmp_path / "s.jsonl", rows)).session
    assert [m.id for m in session.messages if m.role == "assistant"] == ["msg_1", "msg_2"]


@pytest.mark.skipif(not REAL.is_dir(), reason="real transcripts in ../shared are not available")
def test_r_ses_5_real_transcript_appended_to_itself_is_refused(tmp_path):
    """The real 8463c716 session twice over: strict names the first line of the copy."""
    source = REAL / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"
    data = gzip.decompress(source.read_bytes())
    path = tmp_path / "twice.jsonl"
    path.write_bytes(data + data)
    err = _strict_error(path)
    assert err.field == "uuid" and err.line is not None and err.line > data.count(b"\n")


def test_r_ses_5_a_line_written_again_by_a_resumed_run_is_a_copy_in_strict_mode_too(tmp_path):
    """R-SES-5, R-TWIN-1: a session resumed on another machine writes its last line again there
    (same uuid and content, another cwd and version) and goes on: strict imports it with one
    warning and the copy left out; the same line written again by the same run (a file appended
    to itself) stays an error."""
    rows = _rows()
    again = {**rows[-1], "cwd": "/Users/other/cli", "version": "2.1.12"}
    more = [user("u2", "a2", "and the tests?", cwd="/Users/other/cli"),
            asst("a3", "u2", "msg_3", "One test file.", cwd="/Users/other/cli")]
    resumed = load_session(write(tmp_path / "resumed.jsonl", [*rows, again, *more]))
    texts = [m.text for m in resumed.session.messages]
    assert texts.count("Two files.") == 1 and texts[-1] == "One test file."
    [copy] = [w for w in resumed.warnings if "repeats line 4" in w.problem]
    assert copy.line == 5 and "another run of the agent" in copy.problem
    err = _strict_error(write(tmp_path / "same.jsonl", [*rows, rows[-1], *more]))
    assert (err.line, err.field) == (5, "uuid") and "appended to itself" in err.problem


def test_r_ses_5_two_objects_on_one_line_are_read_as_two_lines(tmp_path):
    """R-SES-5, R-TWIN-1: a write that lost its newline leaves two JSON objects on one line, and
    the next line writes the second again: each object is read, the repeated progress line is
    a copy (a warning, strict too), and every response is imported."""
    import json

    rows = _rows()
    progress = {"type": "progress", "uuid": "p1", "parentUuid": "a2", "sessionId": "sess-1",
                "data": {"type": "hook_progress"}, "cwd": "/work/demo"}
    text = "".join(json.dumps(r) + "\n" for r in rows[:3])
    text += json.dumps(rows[3]) + json.dumps(progress) + "\n" + json.dumps(progress) + "\n"
    path = tmp_path / "joined.jsonl"
    path.write_text(text + json.dumps(user("u2", "p1", "thanks")) + "\n", encoding="utf-8")
    loaded = load_session(path)
    assert [m.text for m in loaded.session.messages][-2:] == ["Two files.", "thanks"]
    problems = {w.line: w.problem for w in loaded.warnings}
    assert "2 JSON objects with no line break" in problems[4]
    assert "progress line written again" in problems[5]
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[1]) + '{"type": "user"\n',
                      encoding="utf-8")
    err = _strict_error(broken)
    assert err.line == 2 and "not valid JSON" in err.problem
