"""Strict native import refuses what docs/formats.md and docs/robustness.md refuse (R-SES-5):
negative token counts (they moved the recorded bill), a timestamp outside years 1–9999 once in UTC
(the docs' own example, ``9999-12-31T23:59:59-23:59``), a tool result whose call id no earlier call
has, negative limits and compaction counts; each an error naming the file, line and field. A
lenient import keeps the line without the bad value and notes it by line and field. Files are the
native sample with one value changed, written into ``tmp_path``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from iris.errors import SessionFormatError

from workbench.importers import load_session

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"

Rows = list[dict[str, Any]]


def _first(rows: Rows, test: Callable[[dict[str, Any]], bool]) -> tuple[int, dict[str, Any]]:
    return next((i + 1, row) for i, row in enumerate(rows) if test(row))


def _with(tmp_path: Path, change: Callable[[Rows], int]) -> tuple[Path, int]:
    """The sample with ``change`` applied (it returns the 1-based line it changed)."""
    rows = [json.loads(line) for line in SAMPLE.read_text("utf-8").splitlines()]
    line = change(rows)
    path = tmp_path / "changed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path, line


def _usage(name: str, value: int) -> Callable[[Rows], int]:
    def change(rows: Rows) -> int:
        line, row = _first(rows, lambda r: bool(r.get("usage")))
        row["usage"][name] = value
        return line
    return change


def _timestamp(rows: Rows) -> int:
    line, row = _first(rows, lambda r: bool(r.get("timestamp")))
    row["timestamp"] = "9999-12-31T23:59:59-23:59"
    return line


def _orphan(rows: Rows) -> int:
    line, row = _first(rows, lambda r: r.get("role") == "tool")
    row["content"][0]["call_id"] = "call-nobody-made"
    return line


#: (change, field, words of the error)
CASES = {
    "negative input_tokens": (_usage("input_tokens", -5), "usage.input_tokens",
                              "must be a count from 0 to 9,007,199,254,740,991, got -5"),
    "negative cache_write_tokens": (_usage("cache_write_tokens", -2**40), "usage.cache_write_tokens",
                                    "got -1,099,511,627,776"),
    "timestamp outside the years": (_timestamp, "timestamp",
                                    "not a timestamp in range: '9999-12-31T23:59:59-23:59'"),
    "orphan result": (_orphan, "content.0.call_id",
                      ("tool result for call 'call-nobody-made', which no earlier assistant "
                      "message made")),
}


@pytest.mark.parametrize(("change", "field", "words"), CASES.values(), ids=CASES.keys())
def test_r_ses_5_strict_native_import_refuses_by_file_line_and_field(tmp_path, change, field, words):
    """R-SES-5: strict import raises one SessionFormatError naming the file, line and field."""
    path, line = _with(tmp_path, change)
    with pytest.raises(SessionFormatError) as err:
        load_session(path)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), line, field)
    assert words in err.value.problem


@pytest.mark.parametrize(("change", "field", "words"), CASES.values(), ids=CASES.keys())
def test_r_ses_5_lenient_native_import_keeps_the_line_with_a_note(tmp_path, change, field, words):
    """R-SES-5: lenient import keeps every line (same message count as the sample) and notes the
    problem with its line and field; nothing is skipped."""
    path, line = _with(tmp_path, change)
    result = load_session(path, lenient=True)
    sample = load_session(SAMPLE)
    assert len(result.session.messages) == len(sample.session.messages) and not result.skipped
    notes = [w for w in result.warnings if w.line == line]
    assert len(notes) == 1 and field in notes[0].problem and words in notes[0].problem


def test_r_ses_5_lenient_import_drops_a_negative_count_so_the_bill_does_not_move(tmp_path):
    """R-SES-5: the message with a negative count keeps its content but not its usage: recorded
    token totals never go below what the other responses recorded."""
    path, line = _with(tmp_path, _usage("cache_write_tokens", -2**40))
    kept = load_session(path, lenient=True).session.messages
    sample = load_session(SAMPLE).session.messages
    index = sum(1 for raw in SAMPLE.read_text("utf-8").splitlines()[:line]
                if json.loads(raw).get("type") == "message") - 1
    recorded = sample[index].usage
    assert recorded is not None
    assert kept[index].usage is None and kept[index].content == sample[index].content
    total = sum(m.usage.cache_write_tokens for m in kept if m.usage is not None)
    assert total == sum(m.usage.cache_write_tokens for m in sample if m.usage is not None) - \
        recorded.cache_write_tokens >= 0


@pytest.mark.parametrize(("field", "edit"), [
    ("limits.context", lambda rows: rows[0].setdefault("limits", {}).update(context=-1)),
    ("created_at", lambda rows: rows[0].update(created_at="9999-12-31T23:59:59-23:59")),
])
def test_r_ses_5_a_bad_header_value_is_refused_in_both_modes(tmp_path, field, edit):
    """R-SES-5: a negative limit or an out-of-range creation time in the header names line 1 and
    the field, strict or lenient (a session needs its header)."""
    def change(rows: Rows) -> int:
        edit(rows)
        return 1

    path, _ = _with(tmp_path, change)
    for lenient in (False, True):
        with pytest.raises(SessionFormatError) as err:
            load_session(path, lenient=lenient)
        assert (err.value.line, err.value.field) == (1, field)


def test_r_ses_5_a_negative_compaction_count_is_a_bad_line(tmp_path):
    """R-SES-5: a compaction event with negative ``pre_tokens`` is refused by line and field;
    a lenient import skips and lists that line."""
    def change(rows: Rows) -> int:
        rows.insert(3, {"type": "compaction", "at_message": 2, "trigger": "auto",
                        "pre_tokens": -7, "summary": "s", "source": "recorded"})
        return 4

    path, line = _with(tmp_path, change)
    with pytest.raises(SessionFormatError) as err:
        load_session(path)
    assert (err.value.line, err.value.field) == (line, "pre_tokens")
    assert [s.line for s in load_session(path, lenient=True).skipped] == [line]


def test_r_ses_5_the_native_samples_still_import_strictly_without_notes():
    """R-SES-5: the shipped native samples pass the new checks untouched."""
    for name in ("bugfix.jsonl", "long_session.jsonl", "unanswered.jsonl"):
        result = load_session(SAMPLE.parent / name)
        assert result.format == "native" and not result.warnings and not result.skipped
