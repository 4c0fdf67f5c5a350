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
