"""Claude Code import keeps every model response: missing parents, rewinds, branches, unplaced
lines (R-TWIN-1; FORMATS.md §1). Transcripts are built here, line by line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from claude_builders import asst, boundary, call, line, result, user, with_loop, write
from iris.errors import SessionFormatError

from workbench.importers import load_session

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions" / "claude_code"
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "claude_code"


def _history_with_rewind() -> list[dict]:
    """Two responses, a rewind (u3/a3 abandoned, u4 re-sent from a2) and a parallel call whose
    two results fork off the assistant lines holding the calls."""
    return [
        line("progress", "p0", None, data={"type": "hook_progress"}),
        user("u1", "p0", "Migrate the schema"),
        asst("a1", "u1", "msg_1", call("toolu_1")),
        asst("a1b", "a1", "msg_1", call("toolu_2")),
        result("r1", "a1", "toolu_1"),
        result("r2", "a1b", "toolu_2"),
        asst("a2", "r2", "msg_2", "Both tables listed."),
        user("u3", "a2", "drop them (abandoned)"),
        asst("a3", "u3", "msg_dead", "Dropping."),
        user("u4", "a2", "keep them, add an index"),
        asst("a4", "u4", "msg_4", "Index added."),
    ]


def _afterboundary(logical: str | None) -> list[dict]:
    return [
        boundary("b1", logical),
        user("s1", "b1", "This session is being continued from a previous conversation. Summary: …",
              isCompactSummary=True, isVisibleInTranscriptOnly=True),
        user("u5", "s1", "Now the migration test"),
        asst("a5", "u5", "msg_5", "Test written.", read=30000),
    ]


def test_r_twin_1_boundary_with_absent_logical_parent_keeps_the_history(tmp_path):
    """R-TWIN-1: a compact boundary whose logicalParentUuid is not in the file continues at the
    preceding line: the four responses before it stay, the compaction sits after them, and the
    import says which line was re-chained."""
    path = write(tmp_path / "s.jsonl", _history_with_rewind() + _afterboundary("gone-uuid"))
    result = load_session(path)  # strict: nothing is left out, so no error
    session = result.session
    responses = [m.id for m in session.messages if m.role == "assistant"]
    assert responses == ["msg_1", "msg_2", "msg_4", "msg_5"]
    assert session.messages[0].text == "Migrate the schema"
    (comp,) = session.compactions
    assert session.messages[comp.at_message].is_compaction_summary
    assert comp.at_message == 7 and comp.pre_tokens == 170251
    assert result.unplaced == ()
    moved = [w for w in result.warnings if "gone-uuid" in w.problem]
    assert len(moved) == 1 and moved[0].line == 12
    assert "continued at the preceding line 11" in moved[0].problem


def test_r_twin_1_rewind_branch_is_reported_not_silently_dropped(tmp_path):
    """R-TWIN-1: the rewind still picks the branch that leads to the last line; the abandoned
    branch (1 response) is named in a warning with the line it forks from."""
    path = write(tmp_path / "s.jsonl", _history_with_rewind() + _afterboundary("gone-uuid"))
    result = load_session(path)
    texts = [m.text for m in result.session.messages]
    assert "drop them (abandoned)" not in texts and "keep them, add an index" in texts
    branch = [w for w in result.warnings if "abandoned by a rewind" in w.problem]
    assert len(branch) == 1
    assert branch[0].problem.startswith("2 line(s) (1 response(s))") and "at line 7" in branch[0].problem
    assert branch[0].line == 8


def test_r_twin_1_missing_parent_mid_conversation_continues_at_previousline(tmp_path):
    """R-TWIN-1: a user line whose parentUuid is absent does not start the conversation over."""
    rows = [user("u1", None, "First request"), asst("a1", "u1", "msg_1", "First answer"),
            user("u2", "not-here", "Second request"), asst("a2", "u2", "msg_2", "Second answer")]
    result = load_session(write(tmp_path / "s.jsonl", rows))
    assert [m.id for m in result.session.messages if m.role == "assistant"] == ["msg_1", "msg_2"]
    assert any("'not-here'" in w.problem and w.line == 3 for w in result.warnings)


def test_r_twin_1_boundary_without_logical_parent_continues_at_previousline(tmp_path):
    """R-TWIN-1: a boundary with neither parentUuid nor logicalParentUuid is no new root."""
    rows = [user("u1", None, "First request"), asst("a1", "u1", "msg_1", "First answer"),
            *_afterboundary(None)]
    result = load_session(write(tmp_path / "s.jsonl", rows))
    assert [m.id for m in result.session.messages if m.role == "assistant"] == ["msg_1", "msg_5"]


def test_r_twin_1_strict_import_refuses_to_leave_a_response_out(tmp_path):
    """R-TWIN-1: a response that cannot be placed (a parentUuid loop) is a strict error naming
    the file, the line and the field; nothing is stored."""
    path = write(tmp_path / "loop.jsonl", with_loop())
    with pytest.raises(SessionFormatError) as err:
        load_session(path)
    assert err.value.line == 3 and err.value.field == "parentUuid"
    assert str(path) in str(err.value) and "1 model response(s) cannot be placed" in str(err.value)


def test_r_twin_1_lenient_import_lists_the_unplaced_lines_with_why(tmp_path):
    """R-TWIN-1: lenient mode imports the placed lines and lists each unplaced one with its reason."""
    result = load_session(write(tmp_path / "loop.jsonl", with_loop()), lenient=True)
    assert [m.id for m in result.session.messages if m.role == "assistant"] == ["msg_1", "msg_2"]
    assert [u.line for u in result.unplaced] == [3, 4]
    assert all("loops" in u.problem for u in result.unplaced)
    assert not any("loops" in w.problem for w in result.warnings)  # counted once, apart


def _responses_in_file(path: Path) -> set[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return {r["message"]["id"] for r in rows if r.get("type") == "assistant" and not r.get("isSidechain")
            and isinstance(r.get("message"), dict) and r["message"].get("id")}


@pytest.mark.skipif(not REAL.is_dir(), reason="real transcripts in ../shared are not available")
@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("*.jsonl*")) if REAL.is_dir() else [])
def test_r_twin_1_real_transcripts_import_every_response(name):
    """R-TWIN-1: on the real Claude Code transcripts every distinct message.id of the main chain
    is an assistant message of the imported session, and no line is unplaced."""
    path = REAL / name
    result = load_session(path)
    imported = {m.id for m in result.session.messages if m.role == "assistant"}
    assert _responses_in_file(path) <= imported
    assert result.unplaced == ()


def _cut_off_then_resumed() -> list[dict]:
    """A response cut off while streaming (only its thinking line was written, placeholder
    usage), the process exiting (lines below it, one naming a parent never written), and a resume
    that goes on from the request the cut-off response answered."""
    thinking = {"type": "thinking", "thinking": "Checking the call sites.", "signature": "sig"}
    resumed = asst("a3", "r1", "resume-1", "No response requested.")
    resumed["message"]["model"] = "<synthetic>"
    return [
        user("u1", None, "Is the filter applied to explain too?"),
        asst("a1", "u1", "msg_1", call("toolu_1")),
        result("r1", "a1", "toolu_1", "explain.go:490 calls the filter"),
        asst("a2", "r1", "msg_cut", thinking, read=148834, output=1),
        line("progress", "p1", "never-written", data={"type": "hook_progress"}),
        user("x1", "p1", "<command-name>/exit</command-name>"),
        resumed,
        user("u4", "a3", "Go on"),
        asst("a4", "u4", "msg_4", "Yes, explain uses it."),
    ]


def test_r_twin_1_cut_off_response_is_imported_at_its_request(tmp_path):
    """R-TWIN-1 / R-TWIN-8: a response cut off and left behind by a resume that went on from its
    request is imported (strict) at that request with its recorded usage, so every billed
    response is in the session; the lines below it stay off the conversation and are reported."""
    result = load_session(write(tmp_path / "cut.jsonl", _cut_off_then_resumed()))
    messages = result.session.messages
    assert [m.id for m in messages if m.role == "assistant"] == ["msg_1", "msg_cut", "resume-1", "msg_4"]
    cut = next(i for i, m in enumerate(messages) if m.id == "msg_cut")
    assert messages[cut - 1].role == "tool"
    usage = messages[cut].usage
    assert usage is not None and usage.cache_read_tokens == 148834
    assert "<command-name>/exit</command-name>" not in [m.text for m in messages]
    notes = [w for w in result.warnings if "cut off" in w.problem]
    assert len(notes) == 1 and notes[0].line == 4
    assert any("abandoned" in w.problem for w in result.warnings)


def test_r_twin_1_rewind_branch_response_is_not_taken_for_a_cut_off_one(tmp_path):
    """R-TWIN-1: a rewind's abandoned branch starts with the user message it re-sent; its response
    answers that message, not a line of the conversation, and stays off the conversation."""
    result = load_session(write(tmp_path / "s.jsonl", _history_with_rewind()))
    assert "msg_dead" not in {m.id for m in result.session.messages}
    assert not any("cut off" in w.problem for w in result.warnings)


_REAL_FILES = sorted([*REAL.glob("*.jsonl*"), *CORPUS.glob("*.jsonl*")])


@pytest.mark.skipif(not _REAL_FILES, reason="real transcripts in ../shared are not available")
@pytest.mark.parametrize("path", _REAL_FILES, ids=lambda p: p.name[:13])
def test_r_twin_8_real_files_import_every_billed_response_strictly(path):
    """R-TWIN-8: every response with usage of the main conversation (the distinct message.id
    that are not <synthetic>, counted from the raw file) is an imported response with that usage,
    in strict mode, on the real transcripts and the development corpus."""
    from workbench.corpus.twin_raw import file_facts

    session = load_session(path).session
    imported = {m.id for m in session.messages
                if m.role == "assistant" and m.usage is not None and m.model != "<synthetic>"}
    assert len(imported) == file_facts(path).responses


def test_r_twin_8_an_unknown_line_kind_is_noted_not_dropped_silently(tmp_path):
    """R-TWIN-8 / R-TWIN-1: a line of a kind the importer does not know (here a future system
    subtype and a new top-level type) is left out with one note per kind naming how many lines
    and the first; strict import still succeeds, and the conversation chains through the unknown
    system line. The kinds Claude Code writes that hold no message (file history, a PR link,
    progress, turn duration, stop-hook summary) are left out without a note."""
    rows = [
        user("u1", None, "Start"),
        asst("a1", "u1", "msg_1", "Started."),
        line("system", "s1", "a1", subtype="api_retry", content="Retrying in 2 s"),
        line("system", "s2", "s1", subtype="api_retry", content="Retrying in 4 s"),
        line("system", "s3", "s2", subtype="turn_duration", durationMs=1200),
        {"type": "pr-link", "sessionId": "sess-1", "prNumber": 1, "prUrl": "https://x/pr/1"},
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}},
        {"type": "workspace-note", "sessionId": "sess-1", "text": "a new kind of line"},
        user("u2", "s3", "Go on"),
        asst("a2", "u2", "msg_2", "Done."),
    ]
    result = load_session(write(tmp_path / "s.jsonl", rows))
    assert [m.id for m in result.session.messages if m.role == "assistant"] == ["msg_1", "msg_2"]
    notes = sorted((w.line, w.problem) for w in result.warnings if "not a kind" in w.problem)
    assert len(notes) == 2
    assert notes[0][0] == 3 and notes[0][1].startswith("2 line(s) of type 'system/api_retry'")
    assert notes[1][0] == 8 and notes[1][1].startswith("1 line(s) of type 'workspace-note'")
    assert not any("rechained" in w.problem or "not in the file" in w.problem for w in result.warnings)
