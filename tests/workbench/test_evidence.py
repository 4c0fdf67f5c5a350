"""The evidence store: migrations, saving/reopening/deleting named replays (R-PREP-5, R-UI-1)."""

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

EVIDENCE_TABLES = ("configurations", "template_snapshots", "replays", "step_chunks",
                   "preparation_ids", "request_parts", "request_bodies", "archives")
#: Tables whose rows belong to one replay (by its integer key), and the archives (by its id).
REPLAY_ROWS = ("step_chunks", "preparation_ids", "request_parts")


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "wb.db") as s:
        s.save_session(Session(header=SessionHeader(session_id="s1", title="t"), messages=messages()),
                       format="native", content_hash="sha256:s1", source_path=None)
        yield s


def test_migrations_from_blank_database_create_evidence_tables(tmp_path):
    """R-PREP-5: a blank database gets every evidence table through m002."""
    db = Database(tmp_path / "blank.db")
    MIGRATIONS.apply(db)
    assert migration_names()[:2] == ("m001_initial", "m002_evidence")
    assert set(EVIDENCE_TABLES) <= set(db.table_names())


def test_migrations_from_m001_schema_keep_sessions(tmp_path):
    """A store created before the evidence tables is upgraded in place without losing sessions."""
    path = tmp_path / "old.db"
    db = Database(path)
    MIGRATIONS.apply(db, stop_before="m002_evidence")
    assert "replays" not in db.table_names()
    db.table("sessions").insert({"id": "old", "title": "Old", "format": "native", "source_path": None,
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
    """R-PREP-5: decisions are normalised enough to query by kind across a replay."""
    info = store.replays.save(bundle(), session_id="s1", name="default")
    found = store.replays.open(info.id).decisions_of_kind("compaction-applied", "compaction-rejected")
    assert [(step, stage, d.kind) for step, stage, d in found] == [
        (1, "compaction", "compaction-rejected"), (2, "compaction", "compaction-applied")]


def test_named_replays_list_replace_and_delete(store):
    """R-PREP-5: a replay is saved under a name; same name replaces; delete removes every row."""
    first = store.replays.save(bundle(), session_id="s1", name="default")
    store.replays.save(bundle(steps=2, failed_at=None, applied_at=None, rejected_at=None),
                session_id="s1", name="default")
    other = store.replays.save(bundle(steps=3), session_id="s1", name="tight budget")
    assert [r.name for r in store.replays.list("s1")] == ["default", "tight budget"]
    assert store.replays.find("s1", "default").step_count == 2
    assert first.id == replay_id_for("s1", "default") != other.id
    assert store.replays.delete(first.id) is True
    assert store.replays.delete(first.id) is False
    for table in REPLAY_ROWS:  # every row left belongs to the replay still stored
        assert store.db.execute(f"SELECT count(*) FROM {table} WHERE replay_n NOT IN "
                                "(SELECT n FROM replays)").fetchone()[0] == 0, table
    assert store.db.execute("SELECT count(*) FROM archives WHERE replay_id = ?",
                            [first.id]).fetchone()[0] == 0
    assert [r.name for r in store.replays.list()] == ["tight budget"]


def test_deleting_a_session_deletes_its_replays(store):
    """R-PREP-5: replays belong to a session; the store's delete_session needs no change."""
    store.replays.save(bundle(), session_id="s1", name="default")
    assert store.delete_session("s1") is True
    assert store.replays.list() == ()
    for table in (*REPLAY_ROWS, "request_bodies", "archives"):
        assert store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table


def test_unknown_replay_is_a_clear_storage_error(store):
    """Errors name what was missing."""
    with pytest.raises(StorageError, match="no stored replay 'replay-x'"):
        store.replays.open("replay-x")
    with pytest.raises(StorageError, match="no stored preparation"):
        store.replays.preparation_by_id("sha256:none")


def test_reopening_a_2000_step_replay_takes_under_a_second(store):
    """R-PREP-5: reopening a 2,000-step replay is ≤ 1 s (scalars only; steps parse lazily)."""
    one = preparation(0)
    preps = tuple(one.model_copy(update={"step_index": i, "preparation_id": f"sha256:{i}"})
                  for i in range(2000))
    store.replays.save(EvidenceBundle(preparations=preps, requests={request().ref: request()}),
                session_id="s1", name="big")
    started = time.process_time()  # CPU time: other processes' load does not count
    replay = store.replays.open(replay_id_for("s1", "big"))
    last = replay.preparation(1999)
    elapsed = time.process_time() - started
    assert len(replay) == 2000 and last.step_index == 1999
    assert elapsed <= 1.0, f"reopening took {elapsed:.2f} s"


def test_r_prep_5_store_sink_saves_each_published_preparation_readable_by_id(store, tmp_path):
    """R-PREP-5: the engine's publisher hands each snapshot to the store, which reads it by id;
    the streamed replay holds the same rows as one saved in a piece."""
    from iris.config import default_config
    from iris.prompts import PromptSnapshot
    from iris.replay import ReplayObservers, replay

    from workbench.importers import load_session
    from workbench.services.replay import bundle_from_replay

    sample = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"
    session_id = store.import_file(sample).session_id
    sink = store.replays.sink(session_id=session_id, name="streamed")
    result = replay(load_session(sample).session, observers=ReplayObservers(sink=sink))
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


def test_r_ui_1_m003_converts_replays_saved_under_the_previous_schema(tmp_path):
    """STYLE 9: a store written before m003 (uncompressed records and bodies) upgrades in place
    and every record reads back exactly as it was saved."""
    import json as _json

    from workbench.storage import migrations

    path = tmp_path / "m002.db"
    db = Database(path)
    MIGRATIONS.apply(db, stop_before="m003_compact_evidence")
    db.table("sessions").insert({"id": "s1", "title": "t", "format": "native", "source_path": None,
                           "content_hash": "sha256:s1", "message_count": 0, "response_count": 0,
                           "tool_call_count": 0, "estimated_tokens": 0, "imported_at": "2026-01-01",
                           "header_json": '{"session_id":"s1"}',
                           "extras_json": '{"model_switches":[],"compactions":[],"context_snapshots":[]}'})
    original = bundle()
    _write_m002_replay(db, original)
    db.close()
    with Store(path) as s:
        assert "m003_compact_evidence" in {m.name for m in MIGRATIONS.applied(Database(s.db.conn))}
        replay = s.replays.open(replay_id_for("s1", "old"))
        for prep in original.preparations:
            assert replay.preparation(prep.step_index) == prep
        assert replay.request(request().ref) == request()
        assert replay.archives() == original.archives
        figures = replay.step_figures(("whole_request_tokens",))
        assert set(figures) == {p.step_index for p in original.preparations}
    assert migrations.unpack(migrations.pack("é" * 3)) == "é" * 3
    assert _json.loads(migrations.record_without_decisions(
        original.preparations[2].model_dump_json()))["stages"][3]["decisions"] == []


def _write_m002_replay(db, original) -> None:
    """Rows as the m002 schema held them (the writer of that time, in SQL)."""
    import hashlib
    import json as _json
    import zlib

    rid = replay_id_for("s1", "old")
    db.table("replays").insert({"id": rid, "name": "old", "session_id": "s1", "configuration_hash": None,
                          "template_snapshot_id": None, "configuration_snapshot_id": "sha256:cfg",
                          "summariser": "extractive", "created_at": "2026-01-01", "step_count": 5,
                          "ready_count": 4, "failed_count": 1, "cancelled_count": 0,
                          "compactions_applied": 1, "final_tokens": 1, "record_schema_version": 1,
                          "extras_json": "{}"})
    for p in original.preparations:
        db.table("preparations").insert({
            "replay_id": rid, "step_index": p.step_index, "preparation_id": p.preparation_id,
            "phase": p.phase, "response_message_index": p.response_message_index,
            "final_input_tokens": p.final_input_tokens, "provider_prompt_tokens": None,
            "provider_usage_kind": p.provider_usage_kind, "input_budget": p.input_budget,
            "pressure_line": p.pressure_line, "reminder_line": None, "compaction_applied": 0,
            "message_count": p.message_count, "final_request_ref": p.final_request_ref,
            "json": p.model_dump_json()})
        for stage in p.stages:
            for i, d in enumerate(stage.decisions):
                db.table("decisions").insert({"replay_id": rid, "step_index": p.step_index,
                                        "stage": stage.name, "position": i, "kind": d.kind,
                                        "message_index": d.message_index, "ref": d.ref,
                                        "reason": d.reason, "json": d.model_dump_json()})
    req, ids = request(), {}
    bodies_of = [m.model_dump_json() for m in req.messages] + [
        _json.dumps(t, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for t in req.tools]
    for body in bodies_of:
        digest = hashlib.sha256(body.encode()).hexdigest()
        if digest not in ids:
            ids[digest] = len(ids)
            db.table("request_messages").insert({"replay_id": rid, "id": ids[digest], "hash": digest,
                                           "json": body})
    bodies = list(ids.values())
    skeleton = {"m": bodies[:len(req.messages)], "t": bodies[len(req.messages):],
                "k": [[k.origin, k.history_index, k.key, list(k.marks)] for k in req.marks],
                "d": list(req.dropped)}
    db.table("requests").insert({"replay_id": rid, "ref": req.ref,
                           "skeleton": zlib.compress(_json.dumps(skeleton).encode())})
    for a in original.archives:
        db.table("archives").insert({"replay_id": rid, **a.model_dump()})


def test_replays_of_a_session_share_request_bodies_until_the_last_is_deleted(store):
    """R-PREP-5 / store size: a message body sent by several replays is stored once; deleting one
    replay keeps it for the other, deleting the last removes it (the schema cascades, then the
    unused bodies go)."""
    first = store.replays.save(bundle(), session_id="s1", name="a")
    second = store.replays.save(bundle(), session_id="s1", name="b")
    count = lambda: store.db.execute("SELECT count(*) FROM request_bodies").fetchone()[0]
    assert count() == len(request().messages) + len(request().tools)  # once, not once per replay
    assert store.replays.delete(first.id) and count() > 0
    assert store.replays.open(second.id).request(request().ref) == request()
    assert store.replays.delete(second.id) and count() == 0


def test_replay_facts_are_typed_and_tolerate_parts_written_by_older_code(store):
    """R-PREP-5: replay-wide figures read back as typed models; a part that no longer validates
    reads as its default instead of failing the replay."""
    from iris.compaction.usage import RunUsage

    from workbench.records import CompactionFacts, ReplayFacts

    facts = ReplayFacts(run_usage=RunUsage.model_validate({"compaction": {"calls": 2}}),
                        compactions=(CompactionFacts(n=1, step_index=2, cut_index=2),),
                        warnings=("w",), baseline="recorded")
    info = store.replays.save(bundle().model_copy(update={"facts": facts}), session_id="s1",
                              name="typed")
    reopened = store.replays.open(info.id)
    assert reopened.facts == facts and reopened.checkpoints[0].step == 2
    assert reopened.thresholds is None
    old = ReplayFacts.from_json('{"thresholds": {"input_budget": 1}, "baseline": "recorded", '
                                '"run_usage": {"main": {"calls": 3}}}')
    assert old.thresholds is None and old.baseline == "recorded" and old.run_usage.main.calls == 3
    said = "stored replay facts: 'thresholds' no longer validates and reads as its default"
    assert old.warnings == (said,)  # said, not silently reset


def test_an_open_replay_is_cached_until_it_is_saved_again_by_any_process(store, tmp_path):
    """R-PREP-5: one cache inside the store; a save through another connection (another process)
    makes the next open read the new rows."""
    info = store.replays.save(bundle(), session_id="s1", name="cached")
    assert store.replays.open(info.id) is store.replays.open(info.id)
    with Store(store.path) as other:
        other.replays.save(bundle(steps=2, failed_at=None, applied_at=None, rejected_at=None),
                           session_id="s1", name="cached")
    assert len(store.replays.open(info.id)) == 2
