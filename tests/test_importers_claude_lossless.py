"""Claude Code import keeps every model response: missing parents, rewinds, branches, unplaced
lines (R-TWIN-1; FORMATS.md §1). Transcripts are built here, line by line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from iris.errors import SessionFormatError

from workbench.importers import load_session

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "real-sessions" / "claude_code"


def _line(kind: str, uuid: str, parent: str | None, message: dict | None = None, **extra) -> dict:
    row = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "sess-1",
           "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/work/demo", "isSidechain": False}
    if message is not None:
        row["message"] = message
    row.update(extra)
    return row


def _user(uuid: str, parent: str | None, text: str, **extra) -> dict:
    return _line("user", uuid, parent, {"role": "user", "content": text}, **extra)


def _asst(uuid: str, parent: str | None, msg_id: str, block: dict | str, read: int = 1000) -> dict:
    if isinstance(block, str):
        block = {"type": "text", "text": block}
    return _line("assistant", uuid, parent, {
        "id": msg_id, "model": "claude-opus-4-6", "role": "assistant", "type": "message",
        "content": [block], "usage": {"input_tokens": 3, "cache_read_input_tokens": read,
                                      "cache_creation_input_tokens": 10, "output_tokens": 5}})


def _call(call_id: str) -> dict:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls"}}


def _result(uuid: str, parent: str, call_id: str) -> dict:
    return _line("user", uuid, parent, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": "ok"}]})


def _boundary(uuid: str, logical: str | None) -> dict:
    return _line("system", uuid, None, subtype="compact_boundary", content="Conversation compacted",
                 logicalParentUuid=logical, compactMetadata={"trigger": "auto", "preTokens": 170251})


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _history_with_rewind() -> list[dict]:
    """Two responses, a rewind (u3/a3 abandoned, u4 re-sent from a2) and a parallel call whose
    two results fork off the assistant lines holding the calls."""
    return [
        _line("progress", "p0", None, data={"type": "hook_progress"}),
        _user("u1", "p0", "Migrate the schema"),
        _asst("a1", "u1", "msg_1", _call("toolu_1")),
        _asst("a1b", "a1", "msg_1", _call("toolu_2")),
        _result("r1", "a1", "toolu_1"),
        _result("r2", "a1b", "toolu_2"),
        _asst("a2", "r2", "msg_2", "Both tables listed."),
        _user("u3", "a2", "drop them (abandoned)"),
        _asst("a3", "u3", "msg_dead", "Dropping."),
        _user("u4", "a2", "keep them, add an index"),
        _asst("a4", "u4", "msg_4", "Index added."),
    ]


def _after_boundary(logical: str | None) -> list[dict]:
    return [
        _boundary("b1", logical),
        _user("s1", "b1", "This session is being continued from a previous conversation. Summary: …",
              isCompactSummary=True, isVisibleInTranscriptOnly=True),
        _user("u5", "s1", "Now the migration test"),
        _asst("a5", "u5", "msg_5", "Test written.", read=30000),
    ]


def test_r_twin_1_boundary_with_absent_logical_parent_keeps_the_history(tmp_path):
    """R-TWIN-1: a compact boundary whose logicalParentUuid is not in the file continues at the
    preceding line: the four responses before it stay, the compaction sits after them, and the
    import says which line was re-chained."""
    path = _write(tmp_path / "s.jsonl", _history_with_rewind() + _after_boundary("gone-uuid"))
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
    path = _write(tmp_path / "s.jsonl", _history_with_rewind() + _after_boundary("gone-uuid"))
    result = load_session(path)
    texts = [m.text for m in result.session.messages]
    assert "drop them (abandoned)" not in texts and "keep them, add an index" in texts
    branch = [w for w in result.warnings if "abandoned by a rewind" in w.problem]
    assert len(branch) == 1
    assert branch[0].problem.startswith("2 line(s) (1 response(s))") and "at line 7" in branch[0].problem
    assert branch[0].line == 8


def test_r_twin_1_missing_parent_mid_conversation_continues_at_previous_line(tmp_path):
    """R-TWIN-1: a user line whose parentUuid is absent does not start the conversation over."""
    rows = [_user("u1", None, "First request"), _asst("a1", "u1", "msg_1", "First answer"),
            _user("u2", "not-here", "Second request"), _asst("a2", "u2", "msg_2", "Second answer")]
    result = load_session(_write(tmp_path / "s.jsonl", rows))
    assert [m.id for m in result.session.messages if m.role == "assistant"] == ["msg_1", "msg_2"]
    assert any("'not-here'" in w.problem and w.line == 3 for w in result.warnings)


def test_r_twin_1_boundary_without_logical_parent_continues_at_previous_line(tmp_path):
    """R-TWIN-1: a boundary with neither parentUuid nor logicalParentUuid is no new root."""
    rows = [_user("u1", None, "First request"), _asst("a1", "u1", "msg_1", "First answer"),
            *_after_boundary(None)]
    result = load_session(_write(tmp_path / "s.jsonl", rows))
    assert [m.id for m in result.session.messages if m.role == "assistant"] == ["msg_1", "msg_5"]


def _with_loop() -> list[dict]:
    return [_user("u1", None, "Start"), _asst("a1", "u1", "msg_1", "Started."),
            _asst("x1", "x2", "msg_x", "A response in a loop"), _user("x2", "x1", "loop"),
            _user("u2", "a1", "Go on"), _asst("a2", "u2", "msg_2", "Done.")]


def test_r_twin_1_strict_import_refuses_to_leave_a_response_out(tmp_path):
    """R-TWIN-1: a response that cannot be placed (a parentUuid loop) is a strict error naming
    the file, the line and the field; nothing is stored."""
    path = _write(tmp_path / "loop.jsonl", _with_loop())
    with pytest.raises(SessionFormatError) as err:
        load_session(path)
    assert err.value.line == 3 and err.value.field == "parentUuid"
    assert str(path) in str(err.value) and "1 model response(s) cannot be placed" in str(err.value)


def test_r_twin_1_lenient_import_lists_the_unplaced_lines_with_why(tmp_path):
    """R-TWIN-1: lenient mode imports the placed lines and lists each unplaced one with its reason."""
    result = load_session(_write(tmp_path / "loop.jsonl", _with_loop()), lenient=True)
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
