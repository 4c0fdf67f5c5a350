"""Bad input for every format (R-SES-5): strict mode raises one SessionFormatError naming file,
line and problem; lenient mode imports what is valid and reports every skipped line; nothing but
SessionFormatError ever escapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from iris.errors import SessionFormatError

from workbench.importers import load_session

FIX = Path(__file__).parent / "fixtures" / "importers"


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIX / name).read_text().splitlines()]


def _write_jsonl(path: Path, rows: list[Any], raw: dict[int, bytes] | None = None) -> Path:
    """Rows as JSON lines; ``raw`` replaces line n (1-based) by the given bytes."""
    lines = [json.dumps(r).encode() for r in rows]
    for n, data in (raw or {}).items():
        lines[n - 1] = data
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _write_chat(path: Path, messages: list[Any], cut: int | None = None) -> Path:
    """One message per line: message i is on line i + 2; ``cut`` truncates the file there."""
    text = "[\n" + ",\n".join(json.dumps(m) for m in messages) + "\n]\n"
    path.write_text(text[:cut] if cut else text)
    return path


def _strict_error(path: Path, fmt: str) -> SessionFormatError:
    with pytest.raises(SessionFormatError) as info:
        load_session(path, format=fmt)
    err = info.value
    assert err.path == str(path)
    assert str(path) in str(err)
    return err


# --- Claude Code (claude_parallel.jsonl: u1 is line 2 … u12 is line 13) -------------------------

CC = "claude_code"


def _cc(tmp_path: Path, line: int, mutate=None, raw: bytes | None = None) -> Path:
    rows = _rows("claude_parallel.jsonl")
    if mutate:
        mutate(rows[line - 1])
    return _write_jsonl(tmp_path / "cc.jsonl", rows, {line: raw} if raw is not None else None)


def test_r_ses_5_claude_truncated_line(tmp_path):
    path = _cc(tmp_path, 5, raw=(FIX / "claude_parallel.jsonl").read_bytes().splitlines()[4][:60])
    err = _strict_error(path, CC)
    assert err.line == 5 and "not valid JSON" in err.problem
    result = load_session(path, format=CC, lenient=True)
    assert [s.line for s in result.skipped] == [5]
    # the gap is bridged: the first prompt and every call/result are still there
    assert result.session.messages[0].text == "Fix the failing parser test please"
    assert set(result.session.index.results) == {"toolu_1", "toolu_2", "toolu_3"}


def test_r_ses_5_claude_content_is_a_number(tmp_path):
    path = _cc(tmp_path, 2, lambda r: r["message"].__setitem__("content", 42))
    err = _strict_error(path, CC)
    assert (err.line, err.field) == (2, "message.content")
    result = load_session(path, format=CC, lenient=True)
    assert [s.line for s in result.skipped] == [2]
    assert "message.content" in result.skipped[0].problem
    assert len(result.session.index.batches) == 3


def test_r_ses_5_claude_unknown_role(tmp_path):
    path = _cc(tmp_path, 13, lambda r: r["message"].__setitem__("role", "wizard"))
    err = _strict_error(path, CC)
    assert err.line == 13 and "unknown role 'wizard'" in err.problem
    result = load_session(path, format=CC, lenient=True)
    assert [s.line for s in result.skipped] == [13]
    assert "All green." not in [m.text for m in result.session.messages]


def test_r_ses_5_claude_result_without_call(tmp_path):
    path = _cc(tmp_path, 12, lambda r: r["message"]["content"][0].__setitem__("tool_use_id", "toolu_nope"))
    err = _strict_error(path, CC)
    assert err.line == 12 and "toolu_nope" in err.problem
    result = load_session(path, format=CC, lenient=True)
    assert result.skipped == ()
    assert len(result.session.index.orphan_results) == 1
    assert result.session.index.unanswered_calls == ("toolu_3",)
    assert any("toolu_nope" in w.problem and w.line == 12 for w in result.warnings)


# --- Codex (codex_basic.jsonl: line 5 typed user, 10 assistant text, 14 first output) -----------

CX = "codex"


def _cx(tmp_path: Path, line: int, mutate=None, raw: bytes | None = None) -> Path:
    rows = _rows("codex_basic.jsonl")
    if mutate:
        mutate(rows[line - 1])
    return _write_jsonl(tmp_path / "rollout.jsonl", rows, {line: raw} if raw is not None else None)


def test_r_ses_5_codex_truncated_line(tmp_path):
    path = _cx(tmp_path, 10, raw=b'{"timestamp":"2026-02-01T10:00:04.000Z","type":"response_item","payl')
    err = _strict_error(path, CX)
    assert err.line == 10 and "not valid JSON" in err.problem
    result = load_session(path, format=CX, lenient=True)
    assert [s.line for s in result.skipped] == [10]
    assert [b.type for b in result.session.messages[4].content] == ["thinking", "tool_call", "tool_call"]


def test_r_ses_5_codex_content_is_a_number(tmp_path):
    path = _cx(tmp_path, 10, lambda r: r["payload"].__setitem__("content", 42))
    err = _strict_error(path, CX)
    assert (err.line, err.field) == (10, "payload.content")
    assert [s.line for s in load_session(path, format=CX, lenient=True).skipped] == [10]


def test_r_ses_5_codex_unknown_role(tmp_path):
    path = _cx(tmp_path, 5, lambda r: r["payload"].__setitem__("role", "wizard"))
    err = _strict_error(path, CX)
    assert err.line == 5 and "unknown role 'wizard'" in err.problem
    result = load_session(path, format=CX, lenient=True)
    assert [s.line for s in result.skipped] == [5]


def test_r_ses_5_codex_result_without_call(tmp_path):
    path = _cx(tmp_path, 14, lambda r: r["payload"].__setitem__("call_id", "nope"))
    err = _strict_error(path, CX)
    assert err.line == 14 and "'nope'" in err.problem
    result = load_session(path, format=CX, lenient=True)
    assert len(result.session.index.orphan_results) == 1
    assert set(result.session.index.unanswered_calls) == {"call_1", "call_4"}


# --- OpenAI chat (chat_array.json written one message per line: message i on line i + 2) --------

OA = "openai_chat"


def _oa(tmp_path: Path, index: int | None = None, mutate=None, cut: int | None = None) -> Path:
    msgs = json.loads((FIX / "chat_array.json").read_text())
    if mutate:
        mutate(msgs[index])
    return _write_chat(tmp_path / "chat.json", msgs, cut)


def test_r_ses_5_chat_truncated_file(tmp_path):
    full = _oa(tmp_path).read_text()
    cut = full.index('"tool_call_id": "call_b"')
    path = _oa(tmp_path, cut=cut)
    err = _strict_error(path, OA)
    assert err.line == 6 and "truncated" in err.problem
    result = load_session(path, format=OA, lenient=True)
    assert [s.line for s in result.skipped] == [6]
    assert len(result.session.messages) == 4
    assert result.session.index.unanswered_calls == ("call_b",)


def test_r_ses_5_chat_content_is_a_number(tmp_path):
    path = _oa(tmp_path, 1, lambda m: m.__setitem__("content", 42))
    err = _strict_error(path, OA)
    assert (err.line, err.field) == (3, "content")
    result = load_session(path, format=OA, lenient=True)
    assert [s.line for s in result.skipped] == [3] and len(result.session.messages) == 5


def test_r_ses_5_chat_unknown_role(tmp_path):
    path = _oa(tmp_path, 0, lambda m: m.__setitem__("role", "wizard"))
    err = _strict_error(path, OA)
    assert err.line == 2 and "unknown role 'wizard'" in err.problem
    assert [s.line for s in load_session(path, format=OA, lenient=True).skipped] == [2]


def test_r_ses_5_chat_result_without_call(tmp_path):
    path = _oa(tmp_path, 3, lambda m: m.__setitem__("tool_call_id", "nope"))
    err = _strict_error(path, OA)
    assert err.line == 5 and "'nope'" in err.problem
    result = load_session(path, format=OA, lenient=True)
    assert len(result.session.index.orphan_results) == 1


# --- Every format: empty files and binary junk ---------------------------------------------------

JUNK = bytes(range(256)) * 4


@pytest.mark.parametrize("fmt", [CC, CX, OA, None])
@pytest.mark.parametrize("lenient", [False, True])
def test_r_ses_5_empty_file(tmp_path, fmt, lenient):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"\n  \n")
    with pytest.raises(SessionFormatError) as info:
        load_session(path, format=fmt, lenient=lenient)
    assert info.value.path == str(path)
    assert info.value.problem.startswith("empty file")


@pytest.mark.parametrize("fmt", [CC, CX, OA, None])
def test_r_ses_5_binary_junk_file(tmp_path, fmt):
    path = tmp_path / "junk.bin"
    path.write_bytes(JUNK)
    with pytest.raises(SessionFormatError) as info:
        load_session(path, format=fmt)
    assert info.value.path == str(path)
    with pytest.raises(SessionFormatError):
        load_session(path, format=fmt, lenient=True)  # nothing valid to keep


@pytest.mark.parametrize("fmt,name,line", [(CC, "claude_parallel.jsonl", 13), (CX, "codex_basic.jsonl", 23)])
def test_r_ses_5_binary_junk_line(tmp_path, fmt, name, line):
    """Invalid UTF-8 inside one line: strict names that line; lenient skips just it."""
    path = _write_jsonl(tmp_path / "x.jsonl", _rows(name), {line: b"\xff\xfe\x00junk\x80"})
    err = _strict_error(path, fmt)
    assert err.line == line and "UTF-8" in err.problem
    assert [s.line for s in load_session(path, format=fmt, lenient=True).skipped] == [line]


def test_r_ses_5_chat_invalid_utf8_names_the_line(tmp_path):
    path = _oa(tmp_path)
    data = path.read_bytes().replace(b"debug = true", b"debug \xff true")
    path.write_bytes(data)
    err = _strict_error(path, OA)
    assert err.line == 5 and "UTF-8" in err.problem


# --- Nothing but SessionFormatError escapes (type confusion on every field) -----------------------

_VALUES = (42, None, "x", [])


def _paths(value: Any, prefix: tuple = (), depth: int = 0):
    """Every key/index path into a JSON value, up to depth 3."""
    if depth > 3:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield prefix + (key,)
        yield from _paths(child, prefix + (key,), depth + 1)


def _import_both(path: Path, fmt: str) -> None:
    """Strict import; when it refuses, the lenient one must still end in a session or a
    SessionFormatError (anything else escaping fails the test)."""
    try:
        load_session(path, format=fmt)
        return
    except SessionFormatError as exc:
        assert exc.path == str(path) and exc.problem
    try:
        load_session(path, format=fmt, lenient=True)
    except SessionFormatError as exc:
        assert exc.path == str(path)


def _set(value: Any, path: tuple, new: Any) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


@pytest.mark.parametrize("name,fmt", [("claude_parallel.jsonl", CC), ("claude_compact.jsonl", CC),
                                      ("codex_basic.jsonl", CX), ("codex_compacted.jsonl", CX)])
def test_r_ses_5_type_confusion_never_escapes_jsonl(tmp_path, name, fmt):
    rows = _rows(name)
    path = tmp_path / name
    tried = 0
    for i, row in enumerate(rows):
        for field_path in _paths(row):
            for new in _VALUES:
                mutated = json.loads(json.dumps(rows))
                _set(mutated[i], field_path, new)
                _write_jsonl(path, mutated)
                _import_both(path, fmt)
                tried += 1
    assert tried > 150


@pytest.mark.parametrize("name", ["chat_array.json", "mini_swe.traj.json"])
def test_r_ses_5_type_confusion_never_escapes_chat(tmp_path, name):
    doc = json.loads((FIX / name).read_text())
    path = tmp_path / name
    tried = 0
    for field_path in _paths(doc):
        for new in _VALUES:
            mutated = json.loads(json.dumps(doc))
            _set(mutated, field_path, new)
            path.write_text(json.dumps(mutated))
            _import_both(path, OA)
            tried += 1
    assert tried > 60


def test_r_ses_5_native_junk_line_names_the_line(tmp_path):
    """The native loader decodes line by line: junk on line 3 is that line's error."""
    from iris.session import Message, Session, SessionHeader, TextBlock

    from workbench.importers.native import dumps_session

    session = Session(header=SessionHeader(session_id="n"), messages=tuple(
        Message(role="user", content=(TextBlock(text=f"m{i}"),)) for i in range(3)))
    lines = dumps_session(session).encode().splitlines()
    lines[2] = b"\xff\xfe junk"
    path = tmp_path / "n.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    err = _strict_error(path, "native")
    assert err.line == 3 and "UTF-8" in err.problem
    result = load_session(path, format="native", lenient=True)
    assert [s.line for s in result.skipped] == [3] and len(result.session.messages) == 2


def test_r_ses_5_chat_truncated_after_the_messages(tmp_path):
    """mini-swe-agent puts trajectory_format/instance_id after messages: a cut there loses
    nothing in lenient mode, and strict mode still names the line."""
    text = (FIX / "mini_swe.traj.json").read_text()
    path = tmp_path / "cut.traj.json"
    path.write_text(text[: text.index('"trajectory_format"') + 25])
    err = _strict_error(path, OA)
    assert err.line is not None and "truncated" in err.problem
    result = load_session(path, format=OA, lenient=True)
    assert len(result.session.messages) == 7 and len(result.skipped) == 1
