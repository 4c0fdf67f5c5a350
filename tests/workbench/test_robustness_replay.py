"""Replays of hostile but importable content (R-SES-5): numbers a Python ``int()`` cannot convert
and text that makes a backtracking regular expression slow end in success, in bounded time."""

from __future__ import annotations

import json
import time
from pathlib import Path

from iris.compaction.checkpoint import parse_sections

from workbench.services.replay import replay_and_save
from workbench.storage.store import Store

FIX = Path(__file__).parents[1] / "fixtures" / "importers"
TOO_MANY_DIGITS = "9" * 5000


def _hostile_reads(tmp_path: Path) -> Path:
    """claude_parallel.jsonl with a Read whose arguments and numbered output hold numbers beyond
    what ``int()`` converts (5,000 digits, infinity)."""
    rows = [json.loads(line) for line in (FIX / "claude_parallel.jsonl").read_text().splitlines()]
    rows[5]["message"]["content"][0]["input"] = {"file_path": "a.py", "offset": float("inf"),
                                                 "limit": TOO_MANY_DIGITS, "view_range": [TOO_MANY_DIGITS, 2]}
    result = rows[9]["message"]["content"][0]
    result["is_error"] = False
    result["content"] = (f"READ_RESULT lines={TOO_MANY_DIGITS}-1\n     1→x = 1\n"
                         f"{TOO_MANY_DIGITS}→y = 2\n<returncode>-{TOO_MANY_DIGITS}</returncode>")
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")  # inf is written as Infinity
    return path


def test_r_ses_5_replay_of_unconvertible_numbers_in_tool_content(tmp_path):
    """R-SES-5: tool arguments and outputs are free-form; huge or infinite line numbers in them are
    not line numbers (they used to raise OverflowError/ValueError inside the replay)."""
    with Store(tmp_path / "store.db") as store:
        outcome = store.import_file(_hostile_reads(tmp_path), format="claude_code")
        info, result = replay_and_save(store, outcome.session_id)
        requests = store.replays.open(info.id).request_parts()
    assert info.step_count == len(result.preparations) == 3 and len(requests) == 3


def test_r_ses_5_checkpoint_headings_parse_in_linear_time():
    """R-SES-5: a heading followed by a long run of spaces parses at once (it used to backtrack
    quadratically: 40,000 spaces took 12 s)."""
    text = "## Goal\nfix it\n## a" + " " * 200_000 + "b\nbody\n## Next Steps  \nrun the tests"
    started = time.perf_counter()
    before, sections = parse_sections(text)
    assert time.perf_counter() - started < 2.0
    assert before == "" and [s.title for s in sections][::2] == ["Goal", "Next Steps"]
    assert sections[1].title.endswith("b") and sections[1].body == "body"
    assert sections[2].body == "run the tests"


def test_r_ses_5_store_refuses_a_built_session_with_a_lone_surrogate(tmp_path):
    """R-SES-5: a session built in code (not imported, so not repaired) whose id or text holds a
    lone surrogate is a StorageError naming the store, and nothing is stored."""
    from iris.errors import StorageError
    from iris.session import Message, Session, SessionHeader, TextBlock

    with Store(tmp_path / "store.db") as store:
        for sid, text in (("demo\ud800", "hi"), ("demo", "hi\udfff")):
            session = Session(header=SessionHeader(session_id=sid),
                              messages=(Message(role="user", content=(TextBlock(text=text),)),))
            try:
                store.save_session(session, format="native", content_hash=f"sha256:{len(sid)}",
                                   source_path=None)
            except StorageError as err:
                assert str(tmp_path / "store.db") in str(err) and "lone UTF-16 surrogate" in str(err)
            else:
                raise AssertionError("stored a session holding a lone surrogate")
        assert store.list_sessions() == []
