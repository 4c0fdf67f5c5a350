"""The native import builds each message from its validated event without validating it again and
notes long integers as the decoder reads them (R-SES-4); it gives the same sessions as validating
every message from its line, and still refuses an out-of-range count naming line and field (R-SES-5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.errors import SessionFormatError
from iris.session import Message, Session

import workbench as wb
from workbench.importers import load_session
from workbench.importers.native import dump_session


def _validated_messages(path: Path) -> list[Message]:
    """Every message line validated as a Message from its JSON (the slow, reference way)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Message.model_validate({k: v for k, v in row.items() if k != "type"})
            for row in rows if row.get("type") == "message"]


def _sessions(real_sessions: Path) -> list[Session]:
    real = [p for p in sorted(real_sessions.rglob("*")) if p.is_file() and p.suffix in (".jsonl", ".gz", ".json")]
    names = ("long_session", "bugfix", "unanswered")
    return [load_session(p).session for p in [*real, *(wb.sample_path(n) for n in names)]]


def test_r_ses_4_native_import_equals_validated_messages(real_sessions, tmp_path):
    """R-SES-4: every real transcript and sample, written as native JSONL and read back, gives the
    messages (values, fields set, repr and dump) that validating each line gives, and the session."""
    sessions = _sessions(real_sessions)
    assert len(sessions) >= 6
    for n, session in enumerate(sessions):
        path = dump_session(session, tmp_path / f"s{n}.jsonl")
        loaded = load_session(path, format="native").session
        reference = _validated_messages(path)
        assert loaded.messages == tuple(reference) == session.messages
        for fast, slow in zip(loaded.messages, reference, strict=True):
            assert fast.model_fields_set == slow.model_fields_set
            assert repr(fast) == repr(slow)
            assert fast.model_dump_json(exclude_none=True) == slow.model_dump_json(exclude_none=True)


@pytest.mark.parametrize("number", [10**16, -(10**16), 10**30])
def test_r_ses_5_native_long_integer_names_line_and_field(tmp_path, number):
    """R-SES-5: a count beyond the 64-bit range the store holds is refused with its line and
    field, wherever it is (noted by the decoder, not by searching the text)."""
    session = load_session(wb.sample_path("bugfix")).session
    path = dump_session(session, tmp_path / "s.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    row["usage"] = {"input_tokens": number, "output_tokens": 1}
    lines[2] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SessionFormatError) as err:
        load_session(path, format="native")
    assert err.value.line == 3 and err.value.field == "usage.input_tokens"
    assert "out of range" in str(err.value)


def test_r_ses_5_native_long_digits_in_text_are_not_numbers(tmp_path):
    """R-SES-5: sixteen digits inside a string or a float are text and a fraction, not counts."""
    session = load_session(wb.sample_path("bugfix")).session
    path = dump_session(session, tmp_path / "s.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["content"] = [{"type": "text", "text": "id 12345678901234567890"}]
    lines[1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded = load_session(path, format="native").session
    assert "12345678901234567890" in json.dumps(loaded.messages[0].model_dump(mode="json"))
