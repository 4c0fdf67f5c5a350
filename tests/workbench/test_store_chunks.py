"""The store keeps a replay's steps in compressed chunks of consecutive steps (migration m005):
every value the store reads back is the one the replay made, a store written by the previous
schema upgrades without losing anything, a replay streamed step by step reads back at every
commit, and the app's three default replays of a real Codex rollout stay within twice the
transcript's size."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from iris.hashing import canonical_json
from iris.preparation.records import ContextPreparation, Decision, PreparedRequest
from iris.session import Message
from sqlite_utils import Database

from workbench.records import EvidenceBundle, StepRow
from workbench.services.replay import (
    BUDGET_REPLAY_NAME,
    DEFAULT_REPLAY_NAME,
    RECORDED_REPLAY_NAME,
    budget_96k_config,
    replay_session,
)
from workbench.storage import _chunks
from workbench.storage.migrations import MIGRATIONS, STEP_FIGURE_COLUMNS, pack
from workbench.storage.replays import replay_id_for
from workbench.storage.store import Store

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_sessions" / "bugfix.jsonl"
CODEX = "codex_rollout/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
SAVINGS = ("assembly", "fold_repeats", "drop_optional", "trim_old_bodies", "compaction",
           "final_selection")
TYPES = {"INTEGER": int, "REAL": float, "TEXT": str}


def _three_replays(store: Store, session_id: str) -> dict[str, EvidenceBundle]:
    """The app's default replays of a session, made in memory (what the store must give back)."""
    session = store.session(session_id)
    return {DEFAULT_REPLAY_NAME: replay_session(session)[1],
            RECORDED_REPLAY_NAME: replay_session(session, baseline="recorded")[1],
            BUDGET_REPLAY_NAME: replay_session(session, config=budget_96k_config())[1]}


def _step_row(prep: ContextPreparation) -> StepRow:
    error = prep.error
    return StepRow(
        step_index=prep.step_index, preparation_id=prep.preparation_id, phase=prep.phase,
        response_message_index=prep.response_message_index,
        final_input_tokens=prep.final_input_tokens,
        provider_prompt_tokens=prep.provider_prompt_tokens,
        provider_usage_kind=prep.provider_usage_kind, input_budget=prep.input_budget,
        pressure_line=prep.pressure_line, reminder_line=prep.reminder_line,
        compaction_applied=prep.compaction_applied, message_count=prep.message_count,
        error_stage=error.stage if error else None, error_kind=error.kind if error else None,
        error_message=error.message if error else None, final_request_ref=prep.final_request_ref)


def _decisions(preps: tuple[ContextPreparation, ...], kinds: set[str], before: int | None = None,
               about: set[int] | None = None) -> list[tuple[int, str, Decision]]:
    """What a decision query returns, from the records: by step, stage name, then position."""
    found = [(p.step_index, s.name, i, d) for p in preps for s in p.stages
             for i, d in enumerate(s.decisions) if d.kind in kinds
             and (before is None or p.step_index < before)
             and (about is None or d.message_index in about)]
    return [(step, stage, d) for step, stage, _, d in sorted(found, key=lambda x: x[:3])]


def _assert_reads_back(store: Store, session_id: str, name: str, bundle: EvidenceBundle) -> int:
    """Every read of the stored replay ``name`` equals the in-memory replay; returns the count of
    values compared."""
    info = store.replays.find(session_id, name)
    assert info is not None
    stored = store.replays.open(info.id)
    preps = bundle.preparations
    checked = 0
    assert info == stored.info and info.step_count == len(preps) and stored.facts == bundle.facts
    assert stored.steps == tuple(_step_row(p) for p in sorted(preps, key=lambda p: p.step_index))
    for prep in preps:
        assert stored.preparation(prep.step_index) == prep
        by_id = store.replays.preparation_by_id(prep.preparation_id)
        assert by_id.preparation_id == prep.preparation_id
        checked += 2
    for ref, request in bundle.requests.items():
        assert stored.request(ref) == request
        checked += 1
    parts = stored.request_parts()
    assert set(parts) == set(bundle.requests)
    messages: dict[int, Message] = stored.part_messages(
        sorted({i for ids, _ in parts.values() for i in ids}))
    for ref, (message_ids, tool_ids) in parts.items():
        request: PreparedRequest = bundle.requests[ref]
        assert [messages[i] for i in message_ids] == list(request.messages)
        assert len(tool_ids) == len(request.tools)
    assert len({m.model_dump_json() for m in messages.values()}) == len(messages)  # each once
    kinds = {d.kind for p in preps for s in p.stages for d in s.decisions}
    assert list(stored.decisions_of_kind(*kinds)) == _decisions(preps, kinds)
    assert list(store.replays.decisions_of_kind(info.id, sorted(kinds))) == _decisions(preps, kinds)
    for kind in kinds:
        assert list(stored.decisions_of_kind(kind)) == _decisions(preps, {kind})
        checked += 1
    for prep in preps[::5]:
        about = {i for i in range(0, prep.message_count, 3)}
        tool = {"kept-recent", "trimmed", "reduced", "folded-repeat"}
        assert list(stored.decisions_of_kind(*tool, before_step=prep.step_index,
                                             message_indexes=sorted(about))) == \
            _decisions(preps, tool, prep.step_index, about)
        checked += 1
    figures = stored.step_figures([n for n, _ in STEP_FIGURE_COLUMNS])
    for prep in preps:
        for column, kind in STEP_FIGURE_COLUMNS:
            value = figures[prep.step_index][column]
            assert value == getattr(prep, column)
            assert value is None or type(value) is TYPES[kind], (column, value)  # as SQLite gave it
            checked += 1
    savings = stored.stage_savings(SAVINGS)
    assert savings == {p.step_index: {s.name: max(s.before_input_tokens - s.after_input_tokens, 0)
                                      for s in p.stages} for p in preps if p.stages}
    assert stored.archives() == bundle.archives
    assert stored.configuration_yaml() == (bundle.configuration_yaml or "")
    sources = bundle.template_sources
    assert stored.template_sources() == (dict(sources) if sources is not None else None)
    return checked + len(kinds) + 8


def _store_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


@pytest.mark.slow
def test_r_prep_5_default_replays_of_a_real_codex_rollout_read_back_and_fit_twice_the_transcript(
        tmp_path, real_sessions):
    """R-PREP-5: the three default replays of a real Codex rollout, saved, read back exactly as
    the replay made them (every step, request, part, decision query, figure, saving and archive);
    the store holding them is within 2× the transcript (it was 5.98× with a row per step, stage,
    decision and request part)."""
    transcript = real_sessions / CODEX
    with Store(tmp_path / "wb.db") as store:
        session_id = store.import_file(transcript).session_id
        bundles = _three_replays(store, session_id)
        for name, bundle in bundles.items():
            store.replays.save(bundle, session_id=session_id, name=name)
        checked = sum(_assert_reads_back(store, session_id, name, bundle)
                      for name, bundle in bundles.items())
        assert checked > 1000
    size = _store_bytes(tmp_path / "wb.db")
    assert size <= 2 * transcript.stat().st_size, f"{size / transcript.stat().st_size:.2f}×"


def test_r_prep_5_default_replays_of_a_sample_session_read_back(tmp_path):
    """R-PREP-5: the same on a sample session (36 steps: a chunk boundary inside each replay);
    saving a replay again under its name replaces it and keeps reading the same values."""
    with Store(tmp_path / "wb.db") as store:
        session_id = store.import_file(SAMPLE).session_id
        bundles = _three_replays(store, session_id)
        for name, bundle in bundles.items():
            store.replays.save(bundle, session_id=session_id, name=name)
        store.replays.save(bundles[DEFAULT_REPLAY_NAME], session_id=session_id,
                           name=DEFAULT_REPLAY_NAME)
        for name, bundle in bundles.items():
            assert len(bundle.preparations) > _chunks.CHUNK_STEPS
            _assert_reads_back(store, session_id, name, bundle)


def _write_m004_replay(db: Database, session_id: str, name: str, bundle: EvidenceBundle) -> None:
    """A replay's rows as the m004 schema held them: the writer of that time, in SQL (a row per
    step, stage, decision, request and request part; bodies by hex digest)."""
    rid, preps = replay_id_for(session_id, name), bundle.preparations
    phases = [p.phase for p in preps]
    last = preps[-1]
    db.execute("INSERT INTO replays VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        rid, name, session_id, bundle.configuration_hash, bundle.template_snapshot_id,
        bundle.configuration_snapshot_id or preps[0].configuration_snapshot_id, bundle.summariser,
        "2026-12-01T00:00:00.000000+00:00", len(preps), phases.count("ready"),
        phases.count("failed"), phases.count("cancelled"),
        sum(1 for p in preps if p.compaction_applied),
        last.final_input_tokens if last.whole_request_tokens is None else last.whole_request_tokens,
        preps[0].schema_version, bundle.facts.model_dump_json()])
    if bundle.configuration_hash and bundle.configuration_json is not None:
        db.execute("INSERT OR IGNORE INTO configurations VALUES (?, ?, ?, ?)", [
            bundle.configuration_hash, canonical_json(dict(bundle.configuration_json)),
            bundle.configuration_yaml, "2026-12-01"])
    if bundle.template_snapshot_id and bundle.template_sources is not None:
        db.execute("INSERT OR IGNORE INTO template_snapshots VALUES (?, ?, ?)", [
            bundle.template_snapshot_id, canonical_json(dict(bundle.template_sources)),
            "2026-12-01"])
    figures = [n for n, _ in STEP_FIGURE_COLUMNS]
    ids: dict[str, int] = {}

    def part(body: str) -> int:
        digest = hashlib.sha256(body.encode()).hexdigest()
        if digest not in ids:
            ids[digest] = len(ids)
            db.execute("INSERT INTO request_messages VALUES (?, ?, ?)", [rid, ids[digest], digest])
            db.execute("INSERT OR IGNORE INTO request_bodies VALUES (?, ?)", [digest, pack(body)])
        return ids[digest]

    def request(ref: str, req: PreparedRequest) -> None:
        skeleton = {"m": [part(m.model_dump_json()) for m in req.messages],
                    "t": [part(canonical_json(t)) for t in req.tools],
                    "k": [[k.origin, k.history_index, k.key, list(k.marks)] for k in req.marks],
                    "d": list(req.dropped)}
        db.execute("INSERT OR IGNORE INTO requests VALUES (?, ?, ?)", [
            rid, ref, zlib.compress(json.dumps(skeleton).encode())])

    for p in preps:
        stripped = p.model_copy(update={"stages": tuple(
            s.model_copy(update={"decisions": ()}) for s in p.stages)})
        row: dict[str, Any] = {
            "replay_id": rid, **_step_row(p).model_dump(), **{n: getattr(p, n) for n in figures},
            "record": pack(stripped.model_dump_json())}
        db.execute(f"INSERT INTO preparations ({', '.join(row)}) VALUES "
                   f"({', '.join('?' * len(row))})", list(row.values()))
        for position, s in enumerate(p.stages):
            db.execute("INSERT INTO stages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
                rid, p.step_index, position, s.name, s.status, s.before_input_tokens,
                s.after_input_tokens, len(s.decisions), s.note])
            for i, d in enumerate(s.decisions):
                db.execute("INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
                    rid, p.step_index, s.name, i, d.kind, d.message_index, d.ref, d.reason,
                    d.model_dump_json()])
        if p.final_request_ref and p.final_request_ref in bundle.requests:
            request(p.final_request_ref, bundle.requests[p.final_request_ref])
    for ref in sorted(bundle.requests):
        request(ref, bundle.requests[ref])
    for a in bundle.archives:
        db.execute("INSERT INTO archives VALUES (?, ?, ?, ?, ?, ?)", [
            rid, a.n, a.step_index, a.path, pack(a.text), a.checkpoint_text])


@pytest.mark.slow
def test_r_ui_1_a_store_of_the_previous_schema_upgrades_and_reads_the_same_values(tmp_path):
    """R-UI-1 (STYLE 9): a store written under m004 (a row per step, stage, decision and request
    part) holding the sample session's three default replays upgrades in place to chunks; the
    session and every value of every replay read back as the replay made them, and replays saved
    afterwards share the upgraded request bodies."""
    with Store(tmp_path / "current.db") as current:
        session_id = current.import_file(SAMPLE).session_id
        session = current.session(session_id)
        bundles = _three_replays(current, session_id)
    old = Database(tmp_path / "m004.db")
    MIGRATIONS.apply(old, stop_before="m005_step_chunks")
    old.execute("ATTACH DATABASE ? AS current", [str(tmp_path / "current.db")])
    old.execute("INSERT INTO sessions SELECT * FROM current.sessions")
    old.execute("INSERT INTO messages SELECT * FROM current.messages")
    old.conn.commit()
    old.execute("DETACH DATABASE current")
    for name, bundle in bundles.items():
        _write_m004_replay(old, session_id, name, bundle)
    old.conn.commit()
    bodies = old.execute("SELECT count(*) FROM request_bodies").fetchone()[0]
    old.close()
    with Store(tmp_path / "m004.db") as store:
        assert "m005_step_chunks" in {m.name for m in MIGRATIONS.applied(Database(store.db.conn))}
        assert store.session(session_id) == session
        for name, bundle in bundles.items():
            _assert_reads_back(store, session_id, name, bundle)
        count = lambda: store.db.execute("SELECT count(*) FROM request_bodies").fetchone()[0]
        assert count() == bodies
        store.replays.save(bundles[DEFAULT_REPLAY_NAME], session_id=session_id, name="again")
        assert count() == bodies  # the same bodies, found by their digests
        _assert_reads_back(store, session_id, "again", bundles[DEFAULT_REPLAY_NAME])


def test_r_prep_5_a_streamed_replay_reads_back_at_every_commit(tmp_path):
    """R-PREP-5: the evidence sink commits each step into the chunk still filling; a reader that
    opens the replay after any step sees every step so far, and the finished replay reads like
    one saved in a piece."""
    with Store(tmp_path / "wb.db") as store:
        session_id = store.import_file(SAMPLE).session_id
        bundle = _three_replays(store, session_id)[DEFAULT_REPLAY_NAME]
        sink = store.replays.sink(session_id=session_id, name="streamed")
        for prep in bundle.preparations:
            ref = prep.final_request_ref
            sink.save(prep, bundle.requests.get(ref) if ref else None)
            with Store(tmp_path / "wb.db") as reader:  # another connection, as the app's
                opened = reader.replays.open(sink.replay_id)
                assert opened.steps[-1] == _step_row(prep)
                assert opened.preparation(prep.step_index) == prep
                if ref:
                    assert opened.request(ref) == bundle.requests[ref]
        sink.finish(bundle.facts)
        streamed = store.replays.open(sink.replay_id)
        whole = store.replays.open(store.replays.save(bundle, session_id=session_id,
                                                      name="whole").id)
        assert streamed.steps == whole.steps
        assert [streamed.preparation(s.step_index) for s in streamed.steps] == \
            list(bundle.preparations)
        kinds = ("kept-recent", "final-selection", "trimmed", "reduced")
        assert streamed.decisions_of_kind(*kinds) == whole.decisions_of_kind(*kinds)


def test_r_prep_5_request_bodies_with_the_same_first_bytes_keep_apart(tmp_path):
    """R-PREP-5: a body's row number is the first 8 bytes of its digest; two bodies sharing them
    (forced here) get different rows and each reads back as itself."""
    with Store(tmp_path / "wb.db") as store:
        conn = store.db.conn
        first, second = b"\x01" * 8 + b"a" * 24, b"\x01" * 8 + b"b" * 24
        numbers = _chunks.store_bodies(conn, {first: "one", second: "two"}, pack)
        assert numbers[first] != numbers[second]
        again = _chunks.store_bodies(conn, {second: "two", first: "one"}, pack)
        assert again == numbers
        rows = dict(conn.execute("SELECT hash, body FROM request_bodies").fetchall())
        assert {h: zlib.decompress(b).decode() for h, b in rows.items()} == {first: "one",
                                                                             second: "two"}


def test_r_prep_5_a_replay_opened_while_it_streams_reads_steps_written_after_it(tmp_path):
    """R-PREP-5: a replay opened while the sink still writes into its chunk (the live view) reads
    the decisions of steps written after it cached that chunk's records, as a query of the
    decisions table did."""
    with Store(tmp_path / "wb.db") as store:
        session_id = store.import_file(SAMPLE).session_id
        bundle = _three_replays(store, session_id)[DEFAULT_REPLAY_NAME]
        preps, requests = bundle.preparations, bundle.requests
        sink = store.replays.sink(session_id=session_id, name="streamed")
        sink.save(preps[0], requests.get(preps[0].final_request_ref or ""))
        with Store(tmp_path / "wb.db") as reader:
            opened = reader.replays.open(sink.replay_id)
            assert opened.preparation(preps[0].step_index) == preps[0]  # chunk 0 cached: 1 step
            for prep in preps[1:4]:
                sink.save(prep, requests.get(prep.final_request_ref or ""))
            kinds = {d.kind for p in preps[:4] for s in p.stages for d in s.decisions}
            assert list(opened.decisions_of_kind(*kinds)) == _decisions(preps[:4], kinds)
            assert {step for step, _, _ in opened.decisions_of_kind(*kinds)} > {0}


def test_r_prep_5_stored_figures_take_the_values_their_columns_gave():
    """R-PREP-5: a step's figures, now kept in a JSON line, read back as the SQLite column of
    their affinity returned them (checked against SQLite itself)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT)")
    for value in (True, False, 5.0, 5.5, 3, -2, 0.1, 0.1 + 0.2, 1e20, 13.333463, -2.5e-7, "x",
                  None, 2 ** 40):
        conn.execute("DELETE FROM t")
        conn.execute("INSERT INTO t VALUES (?, ?, ?)", [value, value, value])
        row = conn.execute("SELECT i, r, s FROM t").fetchone()
        ours = tuple(_chunks.as_column(kind, value) for kind in ("INTEGER", "REAL", "TEXT"))
        assert ours == row and tuple(map(type, ours)) == tuple(map(type, row)), value
