"""Publisher (R-PREP-5): the full snapshot to the sink, a small event to the broker, and
observation failures that never change execution."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from iris.preparation import Broker, ListSink, PreparationEvent, Publisher
from iris.replay import ReplayObservers, replay

from workbench.importers.native import load_native

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


@pytest.fixture(scope="module")
def bugfix():
    return load_native(SAMPLES / "bugfix.jsonl")


class RaisingSink:
    """A sink whose storage is broken."""

    def __init__(self) -> None:
        self.calls = 0

    def save(self, preparation, request):
        self.calls += 1
        raise OSError("disk full")


class SqliteSink:
    """A real SQLite sink: saves the snapshot and reads it back by id."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)
        self.db.execute("create table prep (id text primary key, body text)")

    def save(self, preparation, request):
        body = json.dumps(preparation.model_dump(mode="json"), sort_keys=True)
        self.db.execute("insert or replace into prep values (?, ?)",
                        (preparation.preparation_id, body))
        return preparation.preparation_id

    def load(self, preparation_id: str) -> dict:
        (body,) = self.db.execute("select body from prep where id = ?",
                                  (preparation_id,)).fetchone()
        return json.loads(body)


def test_r_prep_5_event_carries_only_identity_and_final_metering(bugfix):
    """R-PREP-5: context.preparation holds preparation_id, phase, step, stage count, metering."""
    events: list[PreparationEvent] = []
    r = replay(bugfix, observers=ReplayObservers(on_event=events.append))
    assert len(events) == len(r.preparations)
    e, p = events[5], r.preparations[5]
    assert set(e.model_dump()) == {"event", "preparation_id", "phase", "step_index",
                                   "stage_count", "final_input_tokens", "input_budget"}
    assert (e.event, e.preparation_id, e.phase, e.step_index, e.stage_count) == (
        "context.preparation", p.preparation_id, "ready", 5, 6)
    assert (e.final_input_tokens, e.input_budget) == (p.final_input_tokens, p.input_budget)


def test_r_prep_5_sink_saves_and_reads_back_by_id(bugfix, tmp_path):
    """R-PREP-5: the full snapshot goes to the host evidence layer, readable by id."""
    sink = SqliteSink(tmp_path / "evidence.db")
    r = replay(bugfix, observers=ReplayObservers(sink=sink))
    p = r.preparations[7]
    assert p.final_request_ref == p.preparation_id  # the reference the sink returned
    # the sink holds the engine's record, made before any evidence reference existed (R-PREP-1)
    assert sink.load(p.preparation_id) == p.model_copy(
        update={"final_request_ref": None}).model_dump(mode="json")


def test_r_prep_5_failing_sink_and_subscriber_never_change_execution(bugfix):
    """R-PREP-5: a sink that raises (and a subscriber that raises) leave the records identical;
    the failures are reported, not raised."""
    clean = replay(bugfix)
    sink = RaisingSink()

    def bad_subscriber(event):
        raise ValueError("observer bug")

    noisy = replay(bugfix, observers=ReplayObservers(sink=sink, on_event=bad_subscriber))
    assert sink.calls == len(clean.preparations)
    assert noisy.preparations == clean.preparations
    assert noisy.requests == clean.requests
    assert len(noisy.observation_failures) == 2 * len(clean.preparations)
    assert "step 0: sink: OSError: disk full" in noisy.observation_failures
    assert any("observer bug" in f for f in noisy.observation_failures)


def test_r_prep_5_list_sink_and_broker_fan_out_in_order(bugfix):
    """R-PREP-5: every subscriber gets every event in step order; a ListSink keeps requests."""
    sink, broker, seen = ListSink(), Broker(), []
    broker.subscribe(lambda e: seen.append(("a", e.step_index)))
    broker.subscribe(lambda e: seen.append(("b", e.step_index)))
    publisher = Publisher(sink, broker)
    r = replay(bugfix)
    for p in r.preparations[:3]:
        assert publisher.publish(p, r.request(p)) == p.preparation_id
    assert seen == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert [req for _, req in sink.saved] == [r.request(p) for p in r.preparations[:3]]
    assert all(p.final_request_ref is None for p in r.preparations)  # no sink: no reference
    assert publisher.failures == []
