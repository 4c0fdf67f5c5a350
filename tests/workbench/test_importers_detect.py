"""Format detection, the ``load_session`` entry point and ``inspect_session`` (R-SES-4, R-SES-5)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from iris.errors import SessionFormatError
from iris.session import Message, Session, SessionHeader, TextBlock
from pydantic import ValidationError

from workbench.analysis.session_counts import inspect_session
from workbench.importers import FORMATS, ImportResult, detect_format, load_session
from workbench.importers.native import dump_session

FIX = Path(__file__).parents[1] / "fixtures" / "importers"


@pytest.mark.parametrize("name,fmt", [
    ("claude_parallel.jsonl", "claude_code"), ("claude_compact.jsonl", "claude_code"),
    ("codex_basic.jsonl", "codex"), ("codex_compacted.jsonl", "codex"),
    ("chat_array.json", "openai_chat"), ("mini_swe.traj.json", "openai_chat")])
def test_r_ses_4_detects_each_fixture(name, fmt):
    assert detect_format(FIX / name) == fmt
    assert load_session(FIX / name).format == fmt


def test_r_ses_4_detects_native(tmp_path):
    session = Session(header=SessionHeader(session_id="n1", title="native"),
                      messages=(Message(role="user", content=(TextBlock(text="hi"),)),))
    path = dump_session(session, tmp_path / "s.jsonl")
    result = load_session(path)
    assert result.format == "native" and result.session == session


def test_r_ses_4_detects_past_broken_first_lines(tmp_path):
    """A truncated first line does not hide the format (the next lines decide)."""
    lines = (FIX / "codex_basic.jsonl").read_text().splitlines()
    path = tmp_path / "r.jsonl"
    path.write_text(lines[0][:30] + "\n" + "\n".join(lines[1:]) + "\n")
    assert detect_format(path) == "codex"


def test_r_ses_4_detects_single_line_messages_object(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "x"}]}))
    assert detect_format(path) == "openai_chat"


@pytest.mark.parametrize("content", [b'{"foo": 1}\n{"bar": 2}\n', b"hello world\n", b"42\n"])
def test_r_ses_4_unknown_format_is_a_clear_error(tmp_path, content):
    path = tmp_path / "mystery.jsonl"
    path.write_bytes(content)
    with pytest.raises(SessionFormatError) as info:
        load_session(path)
    assert info.value.path == str(path) and "unknown session format" in info.value.problem


def test_r_ses_4_unknown_format_name_and_missing_file(tmp_path):
    with pytest.raises(SessionFormatError, match="unknown format 'yaml'"):
        load_session(FIX / "chat_array.json", format="yaml")
    with pytest.raises(SessionFormatError, match="no such file"):
        load_session(tmp_path / "nope.jsonl")
    assert set(FORMATS) == {"native", "claude_code", "codex", "openai_chat", "swe_agent", "otel"}


def test_r_ses_4_builtin_importers_are_one_list():
    """A built-in importer is declared once (``registry.BUILTIN``): ``FORMATS`` is made from it,
    and the package's entry points (pyproject.toml, what an installed copy registers) name
    exactly those importers, each by its registry constant."""
    import tomllib

    from workbench.importers import registry

    assert FORMATS == tuple(imp.name for imp in registry.BUILTIN)
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text("utf-8"))
    entries = project["project"]["entry-points"]["context_workbench.importers"]
    assert set(entries) == set(FORMATS)
    for name, target in entries.items():
        module, constant = target.split(":")
        assert module == "workbench.importers.registry"
        assert getattr(registry, constant).name == name


def test_r_ses_5_import_result_is_frozen_with_content_hash():
    path = FIX / "codex_basic.jsonl"
    result = load_session(path)
    assert isinstance(result, ImportResult)
    assert result.content_hash == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    assert result.path == str(path) and result.skipped == ()
    with pytest.raises(ValidationError):
        result.format = "x"  # frozen


def test_r_ses_4_inspect_reports_every_count():
    """The keys `workbench inspect --json` reports, with the codex_basic fixture's numbers."""
    report = inspect_session(load_session(FIX / "codex_basic.jsonl"))
    assert {k: report[k] for k in ("format", "messages", "responses", "tool_calls", "tool_results",
                                   "unanswered_calls", "compactions", "responses_with_usage",
                                   "max_prompt_tokens", "skipped_lines", "title", "session_id")} == {
        "format": "codex", "messages": 10, "responses": 3, "tool_calls": 4, "tool_results": 3,
        "unanswered_calls": 1, "compactions": 0, "responses_with_usage": 3,
        "max_prompt_tokens": 13000, "skipped_lines": 0,
        "title": "Add a --verbose flag to the CLI", "session_id": "cx-fixture"}
    assert report["estimated_tokens"] > 0
    json.dumps(report)  # JSON-serialisable for `workbench inspect --json`


def test_r_ses_4_inspect_counts_compactions_and_skips(tmp_path):
    report = inspect_session(load_session(FIX / "claude_compact.jsonl"))
    assert (report["compactions"], report["unanswered_calls"], report["max_prompt_tokens"]) == (1, 1, 166053)
    lines = (FIX / "claude_rewind.jsonl").read_text().splitlines()
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join(lines + ["{broken"]) + "\n")
    assert inspect_session(load_session(path, lenient=True))["skipped_lines"] == 1


def test_r_ses_2_a_gemini_cli_session_is_named_not_misread(tmp_path):
    """A Gemini CLI saved session (one JSON document, messages of type user/gemini, no role) is
    named as what it is, not misread as an OpenAI chat document ("unknown role None"); twin-check
    lists it as not an agent transcript instead of a refused file."""
    import json

    from iris.errors import SessionFormatError

    from workbench.corpus.twin_check import check_file
    from workbench.importers import load_session

    doc = {"sessionId": "faff42ab", "projectHash": "7e89", "startTime": "2026-01-10T02:08:26Z",
           "messages": [{"id": "m1", "type": "user", "content": "add new text"},
                        {"id": "m2", "type": "gemini", "content": "Which text?",
                         "tokens": {"input": 9, "output": 3, "total": 12}}]}
    path = tmp_path / "gemini.jsonl"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    with pytest.raises(SessionFormatError, match="a Gemini CLI session") as err:
        load_session(path)
    assert err.value.line == 1 and str(path) in str(err.value)
    row = check_file(path)
    assert not row.error and row.skipped.startswith("not an agent transcript: a Gemini CLI session")


def test_r_ses_2_a_copilot_cli_session_is_named(tmp_path):
    """A GitHub Copilot CLI event log (``session.start`` from ``copilot-agent`` first) is named
    as what it is, not "unknown session format"."""
    from workbench.importers import load_session

    start = {"type": "session.start", "data": {"sessionId": "10fb", "producer": "copilot-agent",
                                               "copilotVersion": "1.0.64"}}
    path = tmp_path / "events.jsonl"
    path.write_text("\n" + json.dumps(start) + "\n" + json.dumps({"type": "user.message"}) + "\n",
                    encoding="utf-8")
    with pytest.raises(SessionFormatError, match="a GitHub Copilot CLI session") as err:
        load_session(path)
    assert err.value.line == 2
