"""Bad input for every format (R-SES-5): strict mode raises one SessionFormatError naming file,
line and problem; lenient mode imports what is valid and reports every skipped line; nothing but
SessionFormatError ever escapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from iris.errors import SessionFormatError

from workbench.importers import detect_format, load_session

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

FIX = Path(__file__).parents[1] / "fixtures" / "importers"


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


# --- Regression cases found by fuzzing (scripts/fuzz_campaign.py, docs/robustness.md) ----------
# Each one is a mutation of a repository fixture or sample that used to end in a traceback
# (OverflowError, UnicodeEncodeError, a bare ValueError) or was silently accepted by a strict import.

def _mutated(tmp_path: Path, name: str, line: int, mutate=None, raw: bytes | None = None) -> Path:
    """A JSON Lines fixture (or sample) with line ``line`` changed by ``mutate`` or replaced."""
    source = FIX / name if (FIX / name).exists() else Path(__file__).parents[2] / "sample_sessions" / name
    rows = [json.loads(x) for x in source.read_text().splitlines()]
    if mutate:
        mutate(rows[line - 1])
    return _write_jsonl(tmp_path / f"mutated-{name}", rows, {line: raw} if raw is not None else None)


def _set_path(keys: tuple, value: Any):
    def mutate(row: dict[str, Any]) -> None:
        node = row
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value
    return mutate


def _refused(path: Path, fmt: str, line: int, field: str, words: str) -> None:
    """Strict: one error naming line and field; lenient: that line listed as skipped."""
    err = _strict_error(path, fmt)
    assert (err.line, err.field) == (line, field), str(err)
    assert words in err.problem, str(err)
    result = load_session(path, format=fmt, lenient=True)
    assert line in [s.line for s in result.skipped]
    assert any(field in s.problem for s in result.skipped if s.line == line)


BAD_TIMESTAMPS = [
    ("claude_parallel.jsonl", CC, 5, ("timestamp",), 1e20, "timestamp"),
    ("claude_parallel.jsonl", CC, 2, ("timestamp",), "9999-12-31T23:59:59-23:59", "timestamp"),
    ("claude_parallel.jsonl", CC, 2, ("timestamp",), "99999999999999999999", "timestamp"),
    ("codex_basic.jsonl", CX, 10, ("timestamp",), float("nan"), "timestamp"),
    ("codex_basic.jsonl", CX, 10, ("timestamp",), float("inf"), "timestamp"),
    ("codex_basic.jsonl", CX, 1, ("payload", "timestamp"), "-1e300", "payload.timestamp"),
    ("codex_basic.jsonl", CX, 5, ("timestamp",), "0001-01-01T00:00:00+23:59", "timestamp"),
]


@pytest.mark.parametrize(("name", "fmt", "line", "keys", "value", "field"), BAD_TIMESTAMPS)
def test_r_ses_5_out_of_range_timestamp_is_a_field_error(tmp_path, name, fmt, line, keys, value, field):
    """R-SES-5: a timestamp outside years 1-9999 (or non-finite) is that line's error, not an
    OverflowError."""
    _refused(_mutated(tmp_path, name, line, _set_path(keys, value)), fmt, line, field, "timestamp")


def test_r_ses_5_chat_out_of_range_timestamp(tmp_path):
    """R-SES-5: mini-swe-agent's ``extra.timestamp`` out of range names the message's line."""
    doc = json.loads((FIX / "mini_swe.traj.json").read_text())
    index = next(i for i, m in enumerate(doc["messages"]) if "timestamp" in m.get("extra", {}))
    doc["messages"][index]["extra"]["timestamp"] = -1e300
    path = tmp_path / "traj.json"
    path.write_text(json.dumps(doc, indent=2))
    err = _strict_error(path, OA)
    assert err.field == "extra.timestamp" and "timestamp" in err.problem
    assert err.line is not None and err.line > 1
    assert [s.line for s in load_session(path, format=OA, lenient=True).skipped] == [err.line]


HUGE_COUNTS = [
    ("claude_parallel.jsonl", CC, 13, ("message", "usage", "input_tokens"), 2**64,
     "message.usage.input_tokens"),
    ("claude_parallel.jsonl", CC, 13, ("message", "usage", "output_tokens"), -1, "message.usage.output_tokens"),
    ("codex_basic.jsonl", CX, 13, ("payload", "info", "last_token_usage", "input_tokens"), 10**30,
     "payload.info.last_token_usage.input_tokens"),
    ("codex_basic.jsonl", CX, 4, ("payload", "model_context_window"), 2**63, "payload.model_context_window"),
    ("bugfix.jsonl", "native", 1, ("limits", "context"), 2**70, "limits.context"),
]


@pytest.mark.parametrize(("name", "fmt", "line", "keys", "value", "field"), HUGE_COUNTS)
def test_r_ses_5_counts_beyond_64_bits_are_refused_at_import(tmp_path, name, fmt, line, keys, value, field):
    """R-SES-5: token counts and windows out of range are that line's error (they used to reach
    SQLite and fail the replay's save with OverflowError)."""
    path = _mutated(tmp_path, name, line, _set_path(keys, value))
    err = _strict_error(path, fmt)
    assert (err.line, err.field) == (line, field), str(err)
    if fmt != "native" or line != 1:  # a native header is required even in lenient mode
        assert line in [s.line for s in load_session(path, format=fmt, lenient=True).skipped]


def test_r_ses_5_chat_negative_usage_is_refused(tmp_path):
    messages = json.loads((FIX / "chat_array.json").read_text())
    messages[2]["usage"]["prompt_tokens"] = -(2**63) - 1
    err = _strict_error(_write_chat(tmp_path / "chat.json", messages), OA)
    assert (err.line, err.field) == (4, "usage.prompt_tokens") and "count" in err.problem


TOO_MANY_DIGITS = b'{"type": "user", "uuid": "u9", "n": ' + b"7" * 5000 + b"}"


@pytest.mark.parametrize(("name", "fmt", "line"), [("claude_parallel.jsonl", CC, 5),
                                                     ("codex_basic.jsonl", CX, 10),
                                                     ("bugfix.jsonl", "native", 3)])
def test_r_ses_5_number_with_too_many_digits_names_the_line(tmp_path, name, fmt, line):
    """R-SES-5: Python's JSON decoder refuses integers of more than 4,300 digits with a bare
    ValueError; detection and import turn it into the line's format error."""
    path = _mutated(tmp_path, name, line, raw=TOO_MANY_DIGITS)
    assert detect_format(path) == fmt  # detection reads past the line
    err = _strict_error(path, fmt)
    assert err.line == line and "too many digits" in err.problem
    assert [s.line for s in load_session(path, format=fmt, lenient=True).skipped] == [line]


def test_r_ses_5_chat_number_with_too_many_digits(tmp_path):
    text = (FIX / "chat_array.json").read_text().replace('"completion_tokens": 40',
                                                         '"completion_tokens": ' + "4" * 5000)
    path = tmp_path / "chat.json"
    path.write_text(text)
    err = _strict_error(path, OA)
    assert err.line is not None and "too many digits" in err.problem


def _surrogate(text: str) -> str:
    return text[:3] + "\ud800" + text[3:]


SURROGATES = [
    ("claude_parallel.jsonl", CC, 2, ("message", "content"), "message.content"),
    ("codex_basic.jsonl", CX, 10, ("payload", "content", 0, "text"), "payload.content[0].text"),
    ("bugfix.jsonl", "native", 3, ("content", 0, "text"), None),
]


@pytest.mark.parametrize(("name", "fmt", "line", "keys", "field"), SURROGATES)
def test_r_ses_5_lone_surrogates_are_replaced_stored_and_replayed(tmp_path, name, fmt, line, keys, field):
    """R-SES-5: a ``\\ud800`` escape (half a UTF-16 pair) is replaced by U+FFFD at import, so the
    store and the replay see valid text (they used to fail with UnicodeEncodeError)."""
    from workbench.services.replay import replay_and_save
    from workbench.storage.store import Store

    def mutate(row):
        node = row
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = _surrogate(node[keys[-1]])

    path = _mutated(tmp_path, name, line, mutate)
    assert b"\\ud800" in path.read_bytes()
    result = load_session(path, format=fmt)  # strict: accepted, repaired
    assert any("\ufffd" in m.text for m in result.session.messages)
    if field is not None:
        assert [(w.line, field in w.problem) for w in result.warnings if "surrogate" in w.problem] == [(line, True)]
    with Store(tmp_path / "store.db") as store:
        outcome = store.import_file(path, format=fmt)
        session = store.session(outcome.session_id)
        assert any("\ufffd" in m.text for m in session.messages)
        info, _ = replay_and_save(store, outcome.session_id)
        assert info.step_count > 0


def test_r_ses_5_chat_lone_surrogate_in_a_key_and_a_value(tmp_path):
    messages = json.loads((FIX / "chat_array.json").read_text())
    messages[1]["content"][0]["text"] = "What\udfff is in config.toml?"
    messages[1]["\ud83d"] = "stray key"
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages, indent=2))  # ensure_ascii: written as \\udfff escapes
    result = load_session(path, format=OA)
    assert result.session.messages[1].text == "What\ufffd is in config.toml?"
    assert any("surrogate" in w.problem and w.line == 6 for w in result.warnings)


WRONG_TYPES = [
    ("claude_parallel.jsonl", CC, 2, ("isSidechain",), "no", "isSidechain"),
    ("claude_parallel.jsonl", CC, 3, ("isMeta",), 1, "isMeta"),
    ("claude_parallel.jsonl", CC, 13, ("message", "model"), 5, "message.model"),
    ("claude_parallel.jsonl", CC, 13, ("message", "id"), ["msg_C"], "message.id"),
    ("claude_parallel.jsonl", CC, 2, ("sessionId",), {"x": 1}, "sessionId"),
    ("claude_parallel.jsonl", CC, 10, ("message", "content", 0, "is_error"), "true", "message.content[0].is_error"),
    ("claude_parallel.jsonl", CC, 4, ("message", "content", 0, "signature"), 7, "message.content[0].signature"),
    ("claude_compact.jsonl", CC, 5, ("compactMetadata", "preTokens"), "many", "compactMetadata.preTokens"),
    ("claude_compact.jsonl", CC, 5, ("compactMetadata",), [1], "compactMetadata"),
    ("codex_basic.jsonl", CX, 7, ("payload", "model"), 5, "payload.model"),
    ("codex_basic.jsonl", CX, 7, ("payload", "cwd"), True, "payload.cwd"),
    ("codex_basic.jsonl", CX, 1, ("payload", "id"), 12, "payload.id"),
    ("codex_basic.jsonl", CX, 13, ("payload", "info"), "text", "payload.info"),
    ("codex_basic.jsonl", CX, 4, ("payload", "model_context_window"), "258400", "payload.model_context_window"),
    ("codex_basic.jsonl", CX, 9, ("payload", "summary", 0, "text"), [1, "a"], "payload.summary[0].text"),
    ("codex_basic.jsonl", CX, 8, ("payload", "type"), -1, "payload.type"),
]


@pytest.mark.parametrize(("name", "fmt", "line", "keys", "value", "field"), WRONG_TYPES)
def test_r_ses_5_strict_refuses_wrong_types_it_used_to_coerce(tmp_path, name, fmt, line, keys, value, field):
    """R-SES-5: strict means strict: a wrong type in a field the importer reads is that line's
    error (it used to be coerced with bool()/str() or silently dropped); lenient lists the line."""
    err = _strict_error(_mutated(tmp_path, name, line, _set_path(keys, value)), fmt)
    assert (err.line, err.field) == (line, field), str(err)
    assert "must be" in err.problem
    result = load_session(tmp_path / f"mutated-{name}", format=fmt, lenient=True)
    assert line in [s.line for s in result.skipped]


CHAT_WRONG_TYPES = [
    (4, ("is_error",), "yes", "is_error"),
    (2, ("reasoning_content",), 3, "reasoning_content"),
    (2, ("tool_calls",), 0, "tool_calls"),
    (5, ("usage",), 7, "usage"),
    (2, ("usage", "prompt_tokens_details"), "512", "usage.prompt_tokens_details"),
    (2, ("extra",), "meta", "extra"),
    (2, ("tool_calls", 0, "function", "arguments"), [], "tool_calls[0].function.arguments"),
]


@pytest.mark.parametrize(("index", "keys", "value", "field"), CHAT_WRONG_TYPES)
def test_r_ses_5_chat_strict_refuses_wrong_types(tmp_path, index, keys, value, field):
    messages = json.loads((FIX / "chat_array.json").read_text())
    _set_path(keys, value)(messages[index])
    path = _write_chat(tmp_path / "chat.json", messages)
    err = _strict_error(path, OA)
    assert (err.line, err.field) == (index + 2, field), str(err)
    assert index + 2 in [s.line for s in load_session(path, format=OA, lenient=True).skipped]


@pytest.mark.parametrize(("name", "fmt"), [("swe_agent_1x.traj", "swe_agent"), ("otel_otlp.json", "otel")])
def test_r_ses_5_document_formats_number_with_too_many_digits(tmp_path, name, fmt):
    """R-SES-5: the same over-long number in a whole-document format names its line."""
    text = (FIX / name).read_text()
    cut = text.index("\n") + 1  # the document's first member, on line 2
    path = tmp_path / name
    path.write_text(text[:cut] + '  "n": ' + "9" * 5000 + ",\n" + text[cut:])
    err = _strict_error(path, fmt)
    assert err.line == 2 and "too many digits" in err.problem


def test_r_ses_5_swe_agent_lone_surrogate_is_replaced_and_stored(tmp_path):
    """R-SES-5: a ``\\ud800`` escape in a SWE-agent trajectory is replaced by U+FFFD at import."""
    from workbench.storage.store import Store

    text = (FIX / "swe_agent_1x.traj").read_text()
    path = tmp_path / "t.traj"
    path.write_text(text.replace('"content": "You are', '"content": "\\ud800You are'))
    with Store(tmp_path / "store.db") as store:
        session = store.session(store.import_file(path, format="swe_agent").session_id)
    assert any(m.text.startswith("\ufffdYou are") for m in session.messages)


@pytest.mark.parametrize(("keys", "value", "field"), [
    (("instance_id",), 3.5, "instance_id"),
    (("info", "config"), "12", "info.config"),
    (("info", "config", "model", "model_name"), 7, "info.config.model.model_name"),
])
def test_r_ses_5_mini_swe_header_fields_are_checked(tmp_path, keys, value, field):
    """R-SES-5: the trajectory fields that make the title are type-checked too: strict names the
    field; lenient lists it (line 0: not one line) and imports the messages."""
    doc = json.loads((FIX / "mini_swe.traj.json").read_text())
    _set_path(keys, value)(doc)
    path = tmp_path / "traj.json"
    path.write_text(json.dumps(doc, indent=2))
    err = _strict_error(path, OA)
    assert err.field == field and "must be" in err.problem
    result = load_session(path, format=OA, lenient=True)
    assert [s.line for s in result.skipped] == [0] and field in result.skipped[0].problem
    assert result.session.messages
