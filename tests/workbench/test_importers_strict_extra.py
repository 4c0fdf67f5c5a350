"""Strict imports refuse what they used to accept quietly (R-SES-5, R-SES-2): text after a JSON
document (trailing garbage, the document twice), a huge float or non-ASCII digits in an OTel token
count, an OTel span start that is empty, negative or past the year 9999, an empty-string
timestamp, and a tool-call id used by two calls (a file appended to itself, a duplicated span or
line) in OpenAI chat, mini-swe-agent, Codex and OTel. Strict: an error naming the file, the line
and the field; lenient: the import goes on and lists it."""

from __future__ import annotations

import copy
import json
import random
import zlib
from pathlib import Path
from typing import Any

import pytest
from fuzz_mutations import FILE_CLASSES, mutate_whole
from iris.errors import SessionFormatError

from workbench.importers import load_session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def _strict_error(path: Path, fmt: str | None = None) -> SessionFormatError:
    with pytest.raises(SessionFormatError) as info:
        load_session(path, format=fmt)
    assert info.value.path is not None and Path(info.value.path).name == path.name
    return info.value


# ------------------------------------------------------------------ text after the document


@pytest.mark.parametrize("tail", ["garbage\n", "SELF", "{}", "  ]\n\n"])
@pytest.mark.parametrize("fixture", ["mini_swe.traj.json", "chat_array.json"])
def test_text_after_the_document_is_an_error_naming_its_line(tmp_path, fixture, tail):
    """R-SES-5: a mini-swe-agent or chat document followed by anything but white space (garbage,
    the same document again) is refused in strict mode at the line where the extra text starts;
    lenient keeps the document and lists that line."""
    text = (FIXTURES / fixture).read_text("utf-8")
    bad = _write(tmp_path, fixture, text + (text if tail == "SELF" else tail))
    err = _strict_error(bad)
    assert err.line == text.count("\n") + 1 and "after the end of the JSON document" in err.problem
    result = load_session(bad, lenient=True)
    assert len(result.session.messages) == len(load_session(FIXTURES / fixture).session.messages)
    assert [s.line for s in result.skipped] == [err.line]


def test_an_unclosed_top_level_object_is_an_error(tmp_path):
    """R-SES-5: a trajectory cut after its messages (the object never closed) is refused."""
    text = (FIXTURES / "mini_swe.traj.json").read_text("utf-8").rstrip()
    assert text.endswith("}")
    err = _strict_error(_write(tmp_path, "cut.traj.json", text[:-1]))
    assert "not closed" in err.problem


# ------------------------------------------------------------------ OTel numbers and times


def _otlp() -> dict[str, Any]:
    return json.loads((FIXTURES / "otel_otlp.json").read_text("utf-8"))


def _spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["resourceSpans"][0]["scopeSpans"][0]["spans"]


def _set_attr(span: dict[str, Any], key: str, value: dict[str, Any]) -> None:
    attr = next(a for a in span["attributes"] if a["key"] == key)
    attr["value"] = value


def _first_call(doc: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in _spans(doc) if any(a["key"] == "gen_ai.usage.input_tokens"
                                               for a in s["attributes"]))


@pytest.mark.parametrize("value", [{"doubleValue": 1e308}, {"stringValue": "²"},
                                   {"stringValue": "9" * 5000}, {"doubleValue": -3.0},
                                   {"doubleValue": 2.0**53}])
def test_otel_token_counts_beyond_the_limit_are_refused(tmp_path, value):
    """R-SES-2: a token count must be an integer from 0 to 2**53 - 1 also when written as a float
    or a string (1e308 used to be stored as a 309-digit integer; "²" and 5,000 digits crashed)."""
    doc = _otlp()
    _set_attr(_first_call(doc), "gen_ai.usage.input_tokens", value)
    err = _strict_error(_write(tmp_path, "otel.json", json.dumps(doc)))
    assert err.field is not None and err.field.endswith("attributes.gen_ai.usage.input_tokens")
    assert "count" in err.problem or "integer" in err.problem


def test_otel_whole_floats_and_digit_strings_still_count(tmp_path):
    """R-SES-2: 269.0 and "269" are the count 269."""
    for value in ({"doubleValue": 269.0}, {"stringValue": "269"}):
        doc = _otlp()
        _set_attr(_first_call(doc), "gen_ai.usage.input_tokens", value)
        session = load_session(_write(tmp_path, "otel.json", json.dumps(doc))).session
        assert next(m.usage.input_tokens for m in session.messages if m.usage) == 269


@pytest.mark.parametrize("start", ["", "-5", "1e30", "99999999999999999999999", "abc", True])
def test_an_otel_span_start_that_is_no_time_is_an_error(tmp_path, start):
    """R-SES-5: an empty, negative, or beyond-9999 start (or not a time at all) names the span's
    start_time; it is no longer read as "no time" or a nonsense date."""
    doc = _otlp()
    _spans(doc)[0]["startTimeUnixNano"] = json.loads(start) if start in ("1e30",) else start
    err = _strict_error(_write(tmp_path, "otel.json", json.dumps(doc)))
    assert err.field == "resourceSpans[0].scopeSpans[0].spans[0].start_time"
    assert err.line == 1


def test_an_otel_start_without_a_zone_is_utc(tmp_path):
    doc = _otlp()
    for span in _spans(doc):
        span["startTimeUnixNano"] = "2026-01-01T00:00:0" + str(_spans(doc).index(span))
    session = load_session(_write(tmp_path, "otel.json", json.dumps(doc))).session
    stamps = [m.timestamp for m in session.messages if m.timestamp is not None]
    assert stamps and all(t.utcoffset() is not None and t.year == 2026 for t in stamps)


def test_an_empty_string_timestamp_is_an_error(tmp_path):
    """R-SES-5: "timestamp": "" is not "no time" (null says that): strict names line and field,
    lenient skips and lists the line."""
    lines = (FIXTURES / "codex_basic.jsonl").read_text("utf-8").splitlines()
    record = json.loads(lines[4])
    record["timestamp"] = ""
    lines[4] = json.dumps(record)
    bad = _write(tmp_path, "rollout.jsonl", "\n".join(lines) + "\n")
    err = _strict_error(bad)
    assert (err.line, err.field) == (5, "timestamp") and "empty timestamp" in err.problem
    assert [s.line for s in load_session(bad, lenient=True).skipped] == [5]
    chat = json.loads((FIXTURES / "chat_array.json").read_text("utf-8"))
    chat[1]["timestamp"] = " "
    err = _strict_error(_write(tmp_path, "chat.json", json.dumps(chat, indent=1)))
    assert err.field == "extra.timestamp" and err.line is not None


# ------------------------------------------------------------------ repeated tool-call ids


def _repeat_chat(tmp_path: Path, fixture: str) -> Path:
    doc = json.loads((FIXTURES / fixture).read_text("utf-8"))
    messages = doc if isinstance(doc, list) else doc["messages"]
    call_at = next(i for i, m in enumerate(messages) if m.get("tool_calls"))
    messages.insert(len(messages) - 1, copy.deepcopy(messages[call_at]))  # the call once more
    return _write(tmp_path, fixture, json.dumps(doc, indent=1))


@pytest.mark.parametrize("fixture", ["chat_array.json", "mini_swe.traj.json"])
def test_a_repeated_tool_call_id_in_a_chat_document_is_an_error(tmp_path, fixture):
    """R-SES-5: two calls with one id (OpenAI chat, mini-swe-agent): strict names the second
    call's line and tool_calls.id; lenient imports and warns."""
    bad = _repeat_chat(tmp_path, fixture)
    err = _strict_error(bad)
    assert err.field == "tool_calls.id" and err.line is not None and err.line > 1
    assert "is the id of an earlier call too" in err.problem
    result = load_session(bad, lenient=True)
    assert any("earlier call too" in w.problem for w in result.warnings)


def test_a_repeated_codex_call_id_is_an_error(tmp_path):
    """R-SES-5: a Codex function_call line repeated (the rollout appended to itself) is refused
    at the repeated line; a compaction's replacement history repeating ids stays accepted."""
    lines = (FIXTURES / "codex_basic.jsonl").read_text("utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"function_call"' in line)
    bad = _write(tmp_path, "rollout.jsonl", "\n".join([*lines, lines[at]]) + "\n")
    err = _strict_error(bad)
    assert (err.line, err.field) == (len(lines) + 1, "payload.call_id")
    for fixture in ("codex_replacement_history.jsonl", "codex_compacted.jsonl"):
        load_session(FIXTURES / fixture)  # provided copies repeat ids by design


def test_a_duplicated_otel_span_is_an_error(tmp_path):
    """R-SES-5: a model-call span exported twice (same tool-call ids) is refused; lenient warns."""
    doc = _otlp()
    spans = _spans(doc)
    first = _first_call(doc)
    twin = copy.deepcopy(first)
    twin["spanId"] = "f" * 16
    twin["startTimeUnixNano"] = str(int(spans[-1]["startTimeUnixNano"]) + 1)
    spans.append(twin)
    bad = _write(tmp_path, "otel.json", json.dumps(doc))
    err = _strict_error(bad)
    assert err.field == "attributes.gen_ai.tool.call.id" and "earlier call too" in err.problem
    assert any("earlier call too" in w.problem for w in load_session(bad, lenient=True).warnings)


def test_a_second_result_for_one_call_is_an_error(tmp_path):
    """R-SES-5: a tool result repeated (two results for one call id) is refused in strict mode
    at the repeated result's line and field; lenient keeps it with a warning."""
    doc = json.loads((FIXTURES / "chat_array.json").read_text("utf-8"))
    result_at = next(i for i, m in enumerate(doc) if m["role"] == "tool")
    doc.insert(result_at + 1, copy.deepcopy(doc[result_at]))
    bad = _write(tmp_path, "chat.json", json.dumps(doc, indent=1))
    err = _strict_error(bad)
    assert err.field == "tool_call_id" and "a second result for tool call" in err.problem
    assert any("second result" in w.problem for w in load_session(bad, lenient=True).warnings)


def test_a_span_exported_twice_is_an_error(tmp_path):
    """R-SES-5: the same span id twice in one trace names the later span's spanId; lenient
    leaves the copy out and lists it."""
    doc = _otlp()
    spans = _spans(doc)
    spans.append(copy.deepcopy(spans[0]))
    bad = _write(tmp_path, "otel.json", json.dumps(doc))
    err = _strict_error(bad)
    assert err.field is not None and err.field.endswith(".spanId") and "appears twice" in err.problem
    lenient = load_session(bad, lenient=True)
    assert len(lenient.skipped) == 1
    assert len(lenient.session.messages) == len(load_session(FIXTURES / "otel_otlp.json").session.messages)


@pytest.mark.parametrize("kind", FILE_CLASSES)
@pytest.mark.parametrize("fixture", ["chat_array.json", "mini_swe.traj.json", "codex_compacted.jsonl",
                                     "otel_otlp.json", "otel_legacy.jsonl", "swe_agent_1x.traj"])
def test_whole_file_mutations_are_refused_or_change_nothing(tmp_path, kind, fixture):
    """R-SES-5: the fuzz campaign's whole-file classes (the file appended to itself, a record with
    an id repeated, text after the end) are refused by a strict import with a located error, or
    import exactly what the unmutated file imports."""
    raw = (FIXTURES / fixture).read_bytes()
    baseline = _comparable(load_session(FIXTURES / fixture).session)
    rng = random.Random(zlib.crc32(f"{fixture}/{kind}".encode()))
    for n in range(4):
        made = mutate_whole(rng, raw, kind, jsonl=fixture.endswith(".jsonl"), max_lines=400)
        if made is None:
            continue
        path = _write(tmp_path, f"{n}-{fixture}", made[0].decode("utf-8"))
        try:
            session = load_session(path).session
        except SessionFormatError as err:
            assert err.line is not None or err.field is not None, str(err)
            continue
        assert _comparable(session) == baseline, (kind, n)


def _comparable(session) -> dict[str, Any]:
    data = session.model_dump(mode="json")
    data["header"].pop("session_id", None)
    return data


def test_a_native_message_repeated_is_an_error(tmp_path):
    """R-SES-5: in the native format a line repeated (a tool call's id or a result's call id a
    second time) names the repeated line and the block's field; lenient skips and lists it."""
    lines = (SAMPLES / "bugfix.jsonl").read_text("utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"tool_call"' in line)
    bad = _write(tmp_path, "bugfix.jsonl", "\n".join([*lines, lines[at]]) + "\n")
    err = _strict_error(bad, "native")
    assert err.line == len(lines) + 1 and err.field is not None and err.field.endswith(".id")
    assert [s.line for s in load_session(bad, format="native", lenient=True).skipped] == [len(lines) + 1]


def test_a_codex_rollout_appended_to_itself_is_an_error(tmp_path):
    """R-SES-5: the rollout's session_meta once more (the file appended to itself) is refused at
    that line, also for a rollout without tool calls."""
    text = (FIXTURES / "codex_legacy_compacted.jsonl").read_text("utf-8")
    err = _strict_error(_write(tmp_path, "rollout.jsonl", text + text))
    assert err.line == text.count("\n") + 1 and err.field == "payload"
