"""The fast Claude Code import builds the same sessions as the validating one (R-SES-4),
and bad input still fails with the file, line and field (R-SES-5).

``workbench.importers._fast.validating()`` switches every record the importer builds back to the
pydantic constructors; each test imports the same file both ways and compares everything."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import pytest
from iris.errors import SessionFormatError
from pydantic import BaseModel

from workbench.importers import load_session
from workbench.importers._fast import validating

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "importers"
sys.path.insert(0, str(ROOT / "bench"))
from synth import write_claude_code_transcript

ENV = {"sessionId": "s-rare", "cwd": "/w", "isSidechain": False}


def _models(value: object):
    """Every pydantic model inside ``value`` (depth first), to compare fields-sets too."""
    if isinstance(value, BaseModel):
        yield value
        for name in type(value).model_fields:
            yield from _models(getattr(value, name))
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _models(item)


def _assert_same_import(path: Path, *, lenient: bool = False) -> None:
    fast = load_session(path, format="claude_code", lenient=lenient)
    with validating():
        slow = load_session(path, format="claude_code", lenient=lenient)
    assert fast.session == slow.session
    assert fast.session.model_dump(mode="json") == slow.session.model_dump(mode="json")
    assert repr(fast.session) == repr(slow.session)  # field order too
    assert (fast.skipped, fast.warnings) == (slow.skipped, slow.warnings)
    pairs = zip(_models(fast.session.messages), _models(slow.session.messages), strict=True)
    assert all(a.model_fields_set == b.model_fields_set and type(a) is type(b) for a, b in pairs)


def _rare_blocks(path: Path) -> Path:
    """Blocks the synthetic transcript never has: thinking, redacted thinking, images, server
    tools, list-shaped tool results, string content, missing usage counts."""
    lines = [
        {**ENV, "type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-01T10:00:00Z",
         "message": {"role": "user", "content": "Look at <this> picture"}},
        {**ENV, "type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-01T10:00:01.5+02:00",
         "message": {"id": "m1", "role": "assistant", "model": "claude-x", "usage": {"input_tokens": 3},
                     "content": [{"type": "thinking", "thinking": "hm", "signature": "sig"},
                                 {"type": "redacted_thinking", "data": "zz"},
                                 {"type": "server_tool_use", "input": {"q": "x"}},
                                 {"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": 1}}]}},
        {**ENV, "type": "user", "uuid": "u2", "parentUuid": "a1", "timestamp": 1767261602,
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": [
                 {"type": "text", "text": "out"}, {"type": "other", "k": 1},
                 {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]},
             {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}},
             {"type": "text", "text": "<system-reminder>r</system-reminder>"}]}},
        {**ENV, "type": "assistant", "uuid": "a2", "parentUuid": "u2", "timestamp": "2026-01-01T10:00:03",
         "message": {"id": "m2", "role": "assistant", "model": "<synthetic>", "content": "done"}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["claude_compact.jsonl", "claude_parallel.jsonl", "claude_rewind.jsonl"])
def test_r_ses_4_fast_import_equals_validated_import_on_fixtures(name):
    """R-SES-4: the fixtures (compaction, parallel calls, a rewind) import identically both ways."""
    _assert_same_import(FIXTURES / name)


def test_r_ses_4_fast_import_equals_validated_import_on_real_sessions(real_sessions):
    """R-SES-4: every real Claude Code transcript imports identically both ways."""
    files = sorted((real_sessions / "claude_code").glob("*.jsonl"))
    assert files
    for path in files:
        _assert_same_import(path)


def test_r_ses_4_fast_import_equals_validated_import_on_synthetic_and_rare_blocks(tmp_path):
    """R-SES-4: the benchmark's transcript shape and every rarer block shape import identically."""
    synth = tmp_path / "synth.jsonl"
    write_claude_code_transcript(synth, megabytes=0.3, seed=5)
    _assert_same_import(synth)
    _assert_same_import(_rare_blocks(tmp_path / "rare.jsonl"))


def test_r_ses_5_lenient_import_skips_the_same_bad_lines_both_ways(tmp_path):
    """R-SES-5: bad lines (bad JSON, bad UTF-8, a non-object, a wrong field type, blank lines) are
    skipped with the same line numbers and problems by the fast and the validating import."""
    good = _rare_blocks(tmp_path / "rare.jsonl").read_bytes().splitlines(keepends=True)
    bad = [b'{"type": "user", "uuid": \n', b"\xff\xfe not utf-8\n", b"[1, 2]\n", b"  \n",
           json.dumps({**ENV, "type": "assistant", "uuid": "x", "parentUuid": "u1",
                       "message": {"id": "m9", "role": "assistant", "usage": {"output_tokens": True},
                                   "content": []}}).encode() + b"\n"]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"".join([good[0], *bad, *good[1:]]))
    _assert_same_import(path, lenient=True)
    skipped = load_session(path, format="claude_code", lenient=True).skipped
    assert [s.line for s in skipped] == [2, 3, 4, 6]


@pytest.mark.parametrize(("block", "field"), [
    ({"type": "tool_use", "id": 7, "name": "Read", "input": {}}, "message.content[0].id"),
    ({"type": "tool_use", "id": "t", "name": "Read", "input": [1]}, "message.content[0].input"),
    ({"type": "text", "text": None}, "message.content[0].text"),
    ({"type": "tool_result", "tool_use_id": None, "content": "x"}, "message.content[0].tool_use_id"),
])
def test_r_ses_5_bad_block_names_file_line_and_field(tmp_path, block, field):
    """R-SES-5: the fast path still checks every field: a wrong type names file, line and field."""
    role = "user" if block["type"] == "tool_result" else "assistant"
    line = {**ENV, "type": role, "uuid": "a", "parentUuid": None,
            "message": {"id": "m", "role": role, "content": [block]}}
    path = tmp_path / "bad.jsonl"
    path.write_text("\n" + json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(SessionFormatError) as err:
        load_session(path, format="claude_code")
    assert (str(err.value.path), err.value.line, err.value.field) == (str(path), 2, field)


def test_import_restores_garbage_collection(tmp_path):
    """The import pauses the cycle collector and restores it, on success and on failure, and
    leaves it off when the caller had switched it off."""
    path = _rare_blocks(tmp_path / "rare.jsonl")
    assert gc.isenabled()
    load_session(path)
    assert gc.isenabled()
    (tmp_path / "bad.jsonl").write_text('{"type": 1}\n', encoding="utf-8")
    with pytest.raises(SessionFormatError):
        load_session(tmp_path / "bad.jsonl", format="claude_code")
    assert gc.isenabled()
    gc.disable()
    try:
        load_session(path)
        assert not gc.isenabled()
    finally:
        gc.enable()
