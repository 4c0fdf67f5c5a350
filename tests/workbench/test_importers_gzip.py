"""Gzip-compressed session files import like their uncompressed content (R-SES-4, R-SES-5)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from iris.errors import SessionFormatError

from workbench.importers import detect_format, load_session

FIXTURES = Path(__file__).parents[1] / "fixtures" / "importers"


@pytest.mark.parametrize("name", ["claude_compact.jsonl", "codex_basic.jsonl", "chat_array.json",
                                  "mini_swe.traj.json"])
def test_r_ses_4_gz_imports_same_session_and_hash(tmp_path, name):
    """R-SES-4: ``X.gz`` gives the same format, session and content hash as ``X``."""
    plain = FIXTURES / name
    packed = tmp_path / f"{name}.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = load_session(plain), load_session(packed)
    assert b.format == a.format == detect_format(packed)
    assert b.session == a.session
    assert b.content_hash == a.content_hash
    assert b.path == str(packed)


def test_r_ses_5_gz_line_numbers_name_the_uncompressed_line(tmp_path):
    """R-SES-5: a bad line inside a .jsonl.gz is reported with its line in the decompressed text."""
    lines = (FIXTURES / "codex_basic.jsonl").read_text().splitlines()
    lines.insert(2, "{not json")
    packed = tmp_path / "broken.jsonl.gz"
    packed.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    with pytest.raises(SessionFormatError) as err:
        load_session(packed)
    assert err.value.line == 3 and "broken.jsonl.gz" in str(err.value)
    result = load_session(packed, lenient=True)
    assert [s.line for s in result.skipped] == [3]


def test_r_ses_5_truncated_gz_is_one_clear_error(tmp_path):
    """R-SES-5: a cut or damaged gzip stream is a SessionFormatError naming the file."""
    data = gzip.compress((FIXTURES / "claude_compact.jsonl").read_bytes())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(SessionFormatError, match="gzip") as err:
        load_session(cut)
    assert "cut.jsonl.gz" in str(err.value)
    junk = tmp_path / "junk.json.gz"
    junk.write_bytes(b"\x1f\x8b" + b"\x00" * 40)
    with pytest.raises(SessionFormatError, match="gzip"):
        load_session(junk)


def test_r_ses_4_real_gz_sessions_import(real_sessions):
    """R-SES-4: the shared gzip-compressed Claude Code sessions import with all their messages."""
    packed = sorted(real_sessions.rglob("*.jsonl.gz"))
    if not packed:
        pytest.skip("no .jsonl.gz in the shared real sessions")
    for path in packed:
        result = load_session(path)
        assert result.format == "claude_code"
        assert len(result.session.messages) > 100
        assert any(m.usage is not None for m in result.session.messages)
