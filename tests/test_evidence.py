"""The evidence store: migrations, saving/reopening/deleting named replays (issue 6 item 5,
R-PREP-5, R-UI-1)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from evidence_builders import bundle, messages, preparation, request
from iris.errors import StorageError
from iris.session import Session, SessionHeader
from sqlite_utils import Database

from workbench.records import EvidenceBundle
from workbench.storage.migrations import MIGRATIONS, migration_names
from workbench.storage.replays import replay_id_for
from workbench.storage.store import Store

EVIDENCE_TABLES = ("configurations", "template_snapshots", "replays", "preparations", "stages",
                   "decisions", "request_messages", "requests", "archives")


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "wb.db") as s:
        s.save_session(Session(header=SessionHeader(session_id="s1", title="t"), messages=messages()),
                       format="native", content_hash="sha256:s1", source_path=None)
        yield s


def test_migrations_from_blank_database_create_evidence_tables(tmp_path):
    """Item 5: a blank database gets every evidence table through m002."""
    db = Database(tmp_path / "blank.db")
    MIGRATIONS.apply(db)
    assert migration_names()[:2] == ("m001_initial", "m002_evidence")
    assert set(EVIDENCE_TABLES) <= set(db.table_names())


def test_migrations_from_m001_schema_keep_sessions(tmp_path):
    """Item 5: a store created before issue 6 is upgraded in place without losing sessions."""
    path = tmp_path / "old.db"
    db = Database(path)
    MIGRATIONS.apply(db, stop_before="m002_evidence")
    assert "replays" not in db.table_names()
    db["sessions"].insert({"id": "old", "title": "Old", "format": "native", "source_path": None,
                           "content_hash": "sha256:old", "message_count": 0, "response_count": 0,
                           "tool_call_count": 0, "estimated_tokens": 0, "imported_at": "2026-01-01",
                           "header_json": '{"session_id":"old"}',
                           "extras_json": '{"model_switches":[],"compactions":[],"context_snapshots":[]}'})
    db.close()
    with Store(path) as s:
        assert [x.id for x in s.list_sessions()] == ["old"]
        info = s.replays.save(bundle(), session_id="old", name="default")
        assert s.replays.list("old") == (info,)


def test_save_and_reopen_round_trips_every_record(store):
    """R-PREP-5: preparations, requests, archives and snapshots read back exactly as saved."""
    original = bundle()
    info = store.replays.save(original, session_id="s1", name="default")
    assert (info.step_count, info.ready_count, info.failed_count, info.compactions_applied) == (5, 4, 1, 1)
    replay = store.replays.open(info.id)
    assert len(replay) == 5 and replay.info == info
    for prep in original.preparations:
        assert replay.preparation(prep.step_index) == prep
    assert replay.steps[3].phase == "failed" and replay.steps[3].error_stage == "compaction"
    assert replay.request(request().ref) == request()
    assert replay.request("sha256:nope") is None
    assert replay.archives() == original.archives
    assert replay.configuration_yaml() == original.configuration_yaml
    assert store.replays.preparation_by_id(original.preparations[2].preparation_id) == \
        original.preparations[2]


def test_decisions_are_queryable_by_kind(store):
    """Item 5: decisions are normalised enough to query by kind across a replay."""
    info = store.replays.save(bundle(), session_id="s1", name="default")
    found = store.replays.open(info.id).decisions_of_kind("compaction-applied", "compaction-rejected")
    assert [(step, stage, d.kind) for step, stage, d in found] == [
        (1, "compaction", "compaction-rejected"), (2, "compaction", "compaction-applied")]


def test_named_replays_list_replace_and_delete(store):
    """Item 5: a replay is saved under a name; same name replaces; delete removes every row."""
    first = store.replays.save(bundle(), session_id="s1", name="default")
    store.replays.save(bundle(steps=2, failed_at=None, applied_at=None, rejected_at=None),
                session_id="s1", name="default")
    other = store.replays.save(bundle(steps=3), session_id="s1", name="tight budget")
    assert [r.name for r in store.replays.list("s1")] == ["default", "tight budget"]
    assert store.replays.find("s1", "default").step_count == 2
    assert first.id == replay_id_for("s1", "default") != other.id
    assert store.replays.delete(first.id) is True
    assert store.replays.delete(first.id) is False
    for table in EVIDENCE_TABLES[3:]:
        assert store.db.execute(f"SELECT count(*) FROM {table} WHERE replay_id = ?",
                                [first.id]).fetchone()[0] == 0
    assert [r.name for r in store.replays.list()] == ["tight budget"]


def test_deleting_a_session_deletes_its_replays(store):
    """Item 5: replays belong to a session; the store's delete_session needs no change."""
    store.replays.save(bundle(), session_id="s1", name="default")
    assert store.delete_session("s1") is True
    assert store.replays.list() == ()
    assert store.db.execute("SELECT count(*) FROM preparations").fetchone()[0] == 0


def test_unknown_replay_is_a_clear_storage_error(store):
    """Errors name what was missing."""
    with pytest.raises(StorageError, match="no stored replay 'replay-x'"):
        store.replays.open("replay-x")
    with pytest.raises(StorageError, match="no stored preparation"):
        store.replays.preparation_by_id("sha256:none")


def test_reopening_a_2000_step_replay_takes_under_a_second(store):
    """Item 5: reopening a 2,000-step replay is ≤ 1 s (scalars only; steps parse lazily)."""
    one = preparation(0)
    preps = tuple(one.model_copy(update={"step_index": i, "preparation_id": f"sha256:{i}"})
                  for i in range(2000))
    store.replays.save(EvidenceBundle(preparations=preps, requests={request().ref: request()}),
                session_id="s1", name="big")
    started = time.perf_counter()
    replay = store.replays.open(replay_id_for("s1", "big"))
    last = replay.preparation(1999)
    elapsed = time.perf_counter() - started
    assert len(replay) == 2000 and last.step_index == 1999
    assert elapsed <= 1.0, f"reopening took {elapsed:.2f} s"


def test_r_prep_5_store_sink_saves_each_published_preparation_readable_by_id(store, tmp_path):
    """R-PREP-5: the engine's publisher hands each snapshot to the store, which reads it by id;
    the streamed replay holds the same rows as one saved in a piece."""
    from iris.config import default_config
    from iris.prompts import PromptSnapshot
    from iris.replay import replay

    from workbench.importers import load_session
    from workbench.replay_service import bundle_from_replay

    sample = Path(__file__).resolve().parents[1] / "sample_sessions" / "bugfix.jsonl"
    session_id = store.import_file(sample).session_id
    sink = store.replays.sink(session_id=session_id, name="streamed")
    result = replay(load_session(sample).session, sink=sink)
    info = sink.finish()
    assert info.step_count == len(result.preparations) and info.ready_count == info.step_count
    for prep in result.preparations[::7]:
        assert store.replays.preparation_by_id(prep.preparation_id) == prep
    whole = store.replays.save(bundle_from_replay(result, config=default_config(),
                                                     prompts=PromptSnapshot.defaults()),
                        session_id=session_id, name="whole")
    streamed, saved = store.replays.open(info.id), store.replays.open(whole.id)
    assert streamed.steps == saved.steps
    last = result.preparations[-1]
    assert streamed.request(last.final_request_ref) == result.request(last)
