"""The SQLite store (R-UI-1 persistence, R-SES-5 all-or-nothing and no duplicates): exact round-trip,
idempotent imports by content hash, failed imports that leave the store unchanged, WAL mode, and a
clear error on a file that is not a database."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from iris.errors import SessionFormatError, StorageError
from iris.session import (
    ImageBlock,
    Message,
    ModelLimits,
    ModelSwitch,
    RecordedCompaction,
    RecordedContribution,
    Session,
    SessionHeader,
    StepSnapshot,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)

from workbench.importers import load_session
from workbench.importers.native import dump_session
from workbench.storage import store as store_module
from workbench.storage.store import DB_NAME, Store, default_db_path, open_store

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
FIXED = datetime(2025, 5, 1, 12, 0, 0, tzinfo=UTC)


def rich_session(session_id: str = "rich") -> Session:
    """Every kind of block and event the model has."""
    ts = datetime(2025, 4, 1, 10, 0, 0, 123000, tzinfo=UTC)
    usage = Usage(input_tokens=12, output_tokens=40, cache_read_tokens=9000, cache_write_tokens=310,
                  model="claude-x", raw={"input_tokens": 12, "nested": {"a": [1, 2]}})
    return Session(
        header=SessionHeader(session_id=session_id, title="Rich — ünïcode", model="claude-x",
                             limits=ModelLimits(context=200000, output=64000), workspace_root="/w",
                             created_at=ts),
        messages=(
            Message(role="system", content=(TextBlock(text="sys"),), synthetic=True),
            Message(role="user", content=(TextBlock(text="hi"), ImageBlock(name="a.png", original_ref="o",
                                                                           model_ref="m")), timestamp=ts),
            Message(role="assistant", id="msg_1", model="claude-x", usage=usage, content=(
                ThinkingBlock(text="hmm", signature="sig"),
                ToolCallBlock(id="c1", name="Read", arguments={"file_path": "/w/x.py", "n": [1, {"b": None}]}),
                ToolCallBlock(id="c2", name="Bash", arguments={"_raw": "not json"}))),
            Message(role="tool", content=(ToolResultBlock(call_id="c1", text="     1\tx = 1", image_refs=("i",),
                                                          artifact_path="tool-outputs/1.txt"),)),
            Message(role="tool", content=(ToolResultBlock(call_id="c2", text="boom", is_error=True,
                                                          reducible=False),)),
            Message(role="user", content=(TextBlock(text="summary"),), is_compaction_summary=True),
        ),
        model_switches=(ModelSwitch(at_message=2, model="claude-y", limits=ModelLimits(input=100)),),
        compactions=(RecordedCompaction(at_message=5, trigger="manual", pre_tokens=1234, summary="s",
                                        source="claude_code:compact_boundary"),),
        context_snapshots=(StepSnapshot(step_index=0, contributions=(
            RecordedContribution(key="k", text="t", required=False, priority=5),)),),
    )


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    with Store(tmp_path / "store.db", clock=lambda: FIXED) as s:
        yield s


def test_r_ui_1_default_location_follows_workbench_home(workbench_home):
    assert store_module.workbench_home() == workbench_home
    assert default_db_path() == workbench_home / DB_NAME
    with open_store() as s:
        assert s.path == workbench_home / DB_NAME and s.path.is_file()


def test_r_ui_1_default_home_without_env(monkeypatch):
    monkeypatch.delenv("WORKBENCH_HOME")
    assert store_module.workbench_home() == Path("~/.local/share/context-workbench").expanduser()


def test_r_ui_1_wal_mode_is_on(store):
    assert store.db.journal_mode == "wal"
    assert sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_r_ses_3_round_trip_is_exact(store):
    session = rich_session()
    sid, created = store.save_session(session, format="native", content_hash="sha256:rich", source_path=None)
    assert (sid, created) == ("rich", True)
    back = store.session(sid)
    assert back == session
    assert back.model_dump(mode="json") == session.model_dump(mode="json")


def test_r_ses_3_samples_round_trip_through_import(store):
    for name in ("bugfix", "long_session", "unanswered"):
        outcome = store.import_file(SAMPLES / f"{name}.jsonl")
        assert outcome.created and outcome.format == "native"
        assert store.session(outcome.session_id) == load_session(SAMPLES / f"{name}.jsonl").session


def test_r_ui_1_summary_counts(store):
    outcome = store.import_file(SAMPLES / "bugfix.jsonl")
    (summary,) = store.list_sessions()
    session = store.session(outcome.session_id)
    assert summary.id == outcome.session_id == session.header.session_id
    assert summary.title == session.header.title
    assert summary.message_count == len(session.messages) >= 80
    assert summary.response_count == len(session.index.batches)
    assert summary.tool_call_count == len(session.index.calls)
    assert summary.estimated_tokens is None  # not tokenised at import
    assert store.session_tokens(outcome.session_id) > 5000
    assert summary.imported_at == "2025-05-01T12:00:00+00:00"
    assert summary.content_hash.startswith("sha256:")


def test_r_ses_5_same_content_twice_is_not_duplicated(store, tmp_path):
    first = store.import_file(SAMPLES / "unanswered.jsonl")
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes((SAMPLES / "unanswered.jsonl").read_bytes())
    again = store.import_file(copy)
    assert first.created and not again.created
    assert again.session_id == first.session_id
    assert len(store.list_sessions()) == 1
    assert store.db["messages"].count == len(store.session(first.session_id).messages)


def test_r_ses_5_same_session_id_different_content_gets_its_own_id(store, tmp_path):
    a = dump_session(rich_session("dup"), tmp_path / "a.jsonl")
    b = dump_session(rich_session("dup").model_copy(update={"messages": rich_session().messages[:2]}),
                     tmp_path / "b.jsonl")
    first, second = store.import_file(a), store.import_file(b)
    assert first.session_id == "dup" and second.session_id.startswith("dup-")
    assert len(store.session(second.session_id).messages) == 2


def test_r_ses_5_strict_failure_leaves_store_unchanged(store, tmp_path):
    store.import_file(SAMPLES / "unanswered.jsonl")
    before = (store.list_sessions(), store.db["messages"].count)
    lines = (SAMPLES / "bugfix.jsonl").read_text().splitlines()
    lines[30] = lines[30][:40]  # a truncated line in the middle
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(SessionFormatError) as err:
        store.import_file(bad)
    assert err.value.line == 31 and "bad.jsonl" in str(err.value)
    assert (store.list_sessions(), store.db["messages"].count) == before
    lenient = store.import_file(bad, lenient=True)
    assert [s.line for s in lenient.skipped] == [31]
    assert store.row_of(lenient.session_id).message_count == 81


def test_r_ses_5_failure_while_writing_rolls_back_everything(store):
    store.import_file(SAMPLES / "unanswered.jsonl")
    before = (store.list_sessions(), store.db["messages"].count)
    # A real SQLite failure half-way through the message inserts.
    store.db.execute("CREATE TRIGGER fail_mid BEFORE INSERT ON messages WHEN NEW.idx = 40 "
                     "BEGIN SELECT RAISE(ABORT, 'disk trouble'); END")
    with pytest.raises(StorageError, match="disk trouble"):
        store.import_file(SAMPLES / "bugfix.jsonl")
    assert (store.list_sessions(), store.db["messages"].count) == before
    assert store.db.execute("SELECT count(*) FROM sessions WHERE id = 'bugfix-tally-march'").fetchone()[0] == 0
    store.db.execute("DROP TRIGGER fail_mid")
    assert store.import_file(SAMPLES / "bugfix.jsonl").created


def test_r_ui_1_delete_removes_session_and_messages(store):
    sid = store.import_file(SAMPLES / "bugfix.jsonl").session_id
    store.import_file(SAMPLES / "unanswered.jsonl")
    assert store.delete_session(sid) is True
    assert [s.id for s in store.list_sessions()] == ["unanswered-coverage"]
    assert store.db.execute("SELECT count(*) FROM messages WHERE session_id = ?", [sid]).fetchone()[0] == 0
    assert store.delete_session(sid) is False
    with pytest.raises(StorageError, match="no stored session 'bugfix-tally-march'"):
        store.session(sid)


def test_r_ui_1_reopening_shows_the_same_sessions(tmp_path):
    path = tmp_path / "persist.db"
    with Store(path) as s:
        sid = s.import_file(SAMPLES / "unanswered.jsonl").session_id
    with Store(path) as s:
        assert [x.id for x in s.list_sessions()] == [sid]
        assert len(s.session(sid).messages) == 5


def test_r_ses_5_corrupt_file_is_a_clear_storage_error(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database, just some text\n" * 200)
    with pytest.raises(StorageError) as err:
        Store(junk)
    message = str(err.value)
    assert str(junk) in message and "not a SQLite database" in message
    assert junk.read_bytes().startswith(b"this is not a database")  # never overwritten


def test_r_ui_1_progress_reports_reach_one(store):
    seen: list[tuple[float, str]] = []
    store.import_file(SAMPLES / "unanswered.jsonl", progress=lambda f, label: seen.append((f, label)))
    fractions = [f for f, _ in seen]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and fractions == sorted(fractions)


def test_r_tok_2_stored_estimate_equals_inspect(store):
    from workbench.analysis.session_counts import inspect_session

    outcome = store.import_file(SAMPLES / "bugfix.jsonl")
    expected = inspect_session(load_session(SAMPLES / "bugfix.jsonl"))["estimated_tokens"]
    assert store.session_tokens(outcome.session_id) == expected
    assert store.row_of(outcome.session_id).estimated_tokens == expected  # kept once counted


def test_r_tok_2_import_does_not_tokenise_and_the_replay_stores_the_estimate(tmp_path):
    """R-TOK-2: an import encodes no text (the session-wide estimate is not computed there); the
    first replay counts every message and stores the estimate from those counts, equal to inspect's."""
    from iris.tokens import TokenEstimator

    from workbench.analysis.session_counts import inspect_session
    from workbench.services.replay import replay_and_save

    estimator = TokenEstimator()
    with Store(tmp_path / "workbench.db", estimator=estimator) as st:
        outcome = st.import_file(SAMPLES / "bugfix.jsonl")
        assert estimator.encode_calls == 0
        assert st.row_of(outcome.session_id).estimated_tokens is None
        replay_and_save(st, outcome.session_id)
        expected = inspect_session(load_session(SAMPLES / "bugfix.jsonl"))["estimated_tokens"]
        assert st.row_of(outcome.session_id).estimated_tokens == expected
