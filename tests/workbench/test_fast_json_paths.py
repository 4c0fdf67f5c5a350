"""The store import's fast JSON paths give the values and text of the standard library's.

Lines are decoded by orjson where its value is provably ``json.loads``'s (``fast_object``), and the
stored form of each message is written by orjson where its text is provably ``canonical``'s
(``canonical_dump``); everywhere else the standard library does it as before. These tests hold the
two paths to each other on generated JSON, on the edge cases where orjson differs, and on every
line and message of the real sessions and samples."""

from __future__ import annotations

import gzip
import json
import math
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iris.errors import SessionFormatError
from iris.session import Message, TextBlock, ToolCallBlock, Usage

from workbench.importers import load_session
from workbench.importers._common import fast_object, parse_time
from workbench.storage._fast_json import canonical_dump, may_hold_float
from workbench.storage._sql import canonical
from workbench.storage.store import Store

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
REAL = ROOT.parent / "shared" / "real-sessions"


def _same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down, dict keys in the same order, -0.0 apart from
    0.0 and NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


_FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                    st.floats(min_value=-1e-3, max_value=1e-3),  # where orjson spells floats its own way
                    st.sampled_from([1e-5, 9.5e-5, 1.5e-6, 1e-10, 1e16, 1e22, 5e-324, -0.0]))
_INTS = st.one_of(st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
                  st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**18, 10**19]))
_TEXT = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["null", "1e-05", "0.00001", "é\u2028\x7f", "\x00\x1f\"\\", "😀", "\ud800", "NaN"])
_JSON = st.recursive(st.none() | st.booleans() | _INTS | _FLOATS | _TEXT,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=12)


def _decoded_by_json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_TEXT, _JSON, max_size=5))
def test_r_ses_4_fast_decode_is_json_loads_or_declines(value):
    """R-SES-4: for any JSON object line (big integers, NaN, infinities, lone surrogates, tiny
    floats included), the fast decoder gives exactly ``json.loads``'s value or declines."""
    raw = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"
    fast = fast_object(raw)
    if fast is not None:
        assert _same(fast, json.loads(raw.decode("utf-8")))


@pytest.mark.parametrize("raw", [
    b'{"a": 123456789012345678901}', b'{"a": -9223372036854775809}', b'{"a": NaN}', b'{"a": Infinity}',
    b'{"a": 1e400}', b'{"a": "\\ud800"}', b'{"\\udc00": 1}', b'\xef\xbb\xbf{"a": 1}', b'{"a": "\xed\xa0\x80"}',
    b'{"a": "\xff"}', b'[1]', b'{"a": 1} x', b"[" * 2000 + b"]" * 2000,
])
def test_r_ses_5_fast_decode_declines_what_it_would_read_otherwise(raw):
    """R-SES-5: lines orjson would read differently (a big integer as a float) or refuse (NaN,
    lone surrogates, a byte order mark, bad UTF-8, deep nesting, trailing junk) go to the exact
    decoder, which keeps the value or names the line's error as before."""
    assert fast_object(raw) is None


def _lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return [line for line in data.splitlines(keepends=True) if line.strip()]


def _real_files() -> list[Path]:
    files = sorted(SAMPLES.glob("*.jsonl"))
    if REAL.is_dir():
        files += sorted(p for p in REAL.rglob("*") if p.suffix in {".jsonl", ".gz"})
    return files


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name[:24])
def test_r_ses_4_fast_decode_equals_json_loads_on_real_lines(path):
    """R-SES-4: on every line of the real sessions and samples, the fast decoder's value is
    ``json.loads``'s (or it declines)."""
    taken = 0
    for raw in _lines(path):
        fast = fast_object(raw)
        if fast is not None:
            taken += 1
            assert _same(fast, _decoded_by_json(raw))
    assert taken > 0


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_TEXT, _JSON, max_size=5), st.one_of(st.none(), _FLOATS))
def test_r_ses_4_stored_message_text_is_canonical(arguments, cost):
    """R-SES-4: the stored text of a message is ``canonical`` of its JSON dump, byte for byte,
    whichever writer makes it (tiny floats, NaN, big integers and nulls included)."""
    usage = Usage(input_tokens=3, output_tokens=2, raw={"x": arguments}, cost_usd=cost)
    message = Message(role="assistant", usage=usage, content=(
        TextBlock(text=str(cost)), ToolCallBlock(id="c1", name="Run", arguments=arguments)))
    try:
        expected = canonical(message.model_dump(mode="json", exclude_none=True))
    except (ValueError, TypeError) as exc:  # a lone surrogate is refused: by both writers
        with pytest.raises(type(exc)):
            canonical_dump(message)
        return
    assert canonical_dump(message) == expected


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name[:24])
def test_r_ses_4_stored_rows_of_real_sessions_are_canonical(path, tmp_path):
    """R-SES-4: every message row a store import writes is the canonical JSON of the imported
    message, as it was before the fast writer (the live update compares these texts)."""
    session = load_session(path).session
    with Store(tmp_path / "s.db") as store:
        sid = store.import_file(path).session_id
        rows = [r[0] for r in store.db.execute(
            "SELECT json FROM messages WHERE session_id = ? ORDER BY idx", [sid])]
    assert rows == [canonical(m.model_dump(mode="json", exclude_none=True)) for m in session.messages]


def test_r_ses_5_big_integers_and_bad_lines_keep_their_import(tmp_path):
    """R-SES-5 and lossless import: a Claude Code line with an integer beyond 64 bits keeps it
    exactly (orjson would read a float), NaN arguments are kept, and a broken line still names
    its file and line."""
    env = {"sessionId": "s-big", "cwd": "/w", "isSidechain": False}
    lines = [
        {**env, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-01T10:00:00Z",
         "message": {"role": "user", "content": "go"}},
        {**env, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-01T10:00:01Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-x", "usage": {"input_tokens": 3},
                     "content": [{"type": "tool_use", "id": "t1", "name": "Run",
                                  "input": {"n": 123456789012345678901234, "x": float("nan"), "t": 1e-7}}]}},
    ]
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with Store(tmp_path / "s.db") as store:
        sid = store.import_file(path).session_id
        (row,) = [r[0] for r in store.db.execute(
            "SELECT json FROM messages WHERE session_id = ? AND role = 'assistant'", [sid])]
    assert '"n":123456789012345678901234' in row and '"x":null' in row and '"t":1e-07' in row

    path.write_text(path.read_text(encoding="utf-8") + '{"type": "user", "uuid": \n', encoding="utf-8")
    with pytest.raises(SessionFormatError) as err:
        load_session(path)
    assert err.value.line == 3 and Path(str(err.value.path)) == path


def _floats_in(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_floats_in(v) for v in value.values())
    if isinstance(value, list):
        return any(_floats_in(v) for v in value)
    return False


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_TEXT, _JSON, max_size=5), st.one_of(st.none(), _FLOATS))
def test_r_ses_4_a_message_said_float_free_dumps_no_float(arguments, cost):
    """R-SES-4: the text search is skipped only for messages whose dump holds no float (the
    check reads the record's float-capable fields: tool arguments, raw usage, cost)."""
    usage = Usage(input_tokens=3, raw={"deep": [arguments]}, cost_usd=cost)
    message = Message(role="assistant", usage=usage, content=(
        TextBlock(text="1e-05 null 0.00001"), ToolCallBlock(id="c1", name="Run", arguments=arguments)))
    try:
        dumped = message.model_dump(mode="json", exclude_none=True)
    except ValueError:  # a lone surrogate: nothing is written
        return
    assert may_hold_float(message) or not _floats_in(dumped)
    assert may_hold_float(message) == (cost is not None or _floats_in(arguments))


@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name[:24])
def test_r_ses_4_real_messages_said_float_free_dump_no_float(path):
    """R-SES-4: on the real sessions and samples, no message the check calls float-free has a
    float in its dump, and most messages are float-free (the search is skipped for them)."""
    messages = load_session(path).session.messages
    free = [m for m in messages if not may_hold_float(m)]
    assert not any(_floats_in(m.model_dump(mode="json", exclude_none=True)) for m in free)
    assert len(free) > len(messages) / 2


@settings(max_examples=200, deadline=None)
@given(st.datetimes(), st.sampled_from(["Z", "+00:00", "-05:00", ""]))
def test_r_ses_4_utc_times_read_as_before(moment, zone):
    """R-SES-4: a ``…Z`` time (read on a shortcut) gives the same aware datetime as the same time
    written with ``+00:00``; other offsets and naive times are unchanged."""
    text = moment.isoformat() + zone
    try:
        parsed = parse_time(text)
    except SessionFormatError:  # -05:00 near the end of year 9999 is out of range in UTC
        assert zone == "-05:00"
        return
    assert parsed is not None
    if zone in ("Z", "+00:00", ""):
        assert parsed == moment.replace(tzinfo=UTC) and parsed.utcoffset() == timedelta(0)
    if zone == "Z":
        assert parsed.tzinfo is UTC and parsed == parse_time(moment.isoformat() + "+00:00")


@pytest.mark.parametrize("text", ["Z", " Z", "2026-13-01T10:00:00Z", "10:00Z", "2026-01-01T25:00:00Z"])
def test_r_ses_5_bad_utc_times_still_name_the_field(text):
    """R-SES-5: a ``…Z`` string that is no time is still the field's error."""
    with pytest.raises(SessionFormatError) as err:
        parse_time(text, "payload.timestamp")
    assert err.value.field == "payload.timestamp"


def _codex_files() -> list[Path]:
    files = sorted((ROOT / "tests" / "fixtures" / "importers").glob("codex_*.jsonl"))
    if REAL.is_dir():
        files += sorted((REAL / "codex_rollout").glob("*.jsonl"))
    return files


@pytest.mark.parametrize("path", _codex_files(), ids=lambda p: p.name[:24])
def test_r_ses_4_codex_records_built_unvalidated_equal_validated(path):
    """R-SES-4: a Codex rollout imports to the same session whether its blocks and usage are
    built directly (values checked by the importer) or through the validating constructors:
    values, fields set, field order (repr) and dump."""
    from workbench.importers._fast import validating

    fast = load_session(path, format="codex", lenient=True)
    with validating():
        slow = load_session(path, format="codex", lenient=True)
    assert fast.session == slow.session and repr(fast.session) == repr(slow.session)
    assert fast.session.model_dump(mode="json") == slow.session.model_dump(mode="json")
    assert (fast.skipped, fast.warnings) == (slow.skipped, slow.warnings)
    for a, b in zip(fast.session.messages, slow.session.messages, strict=True):
        for x, y in zip((a, a.usage, *a.content), (b, b.usage, *b.content), strict=True):
            assert type(x) is type(y) and getattr(x, "model_fields_set", None) == getattr(y, "model_fields_set", None)
