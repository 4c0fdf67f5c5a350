"""One reader of a replay: a replay computed in memory and the same replay
reopened from the store answer every question a view asks the same way (R-PREP-5, R-UI-6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.analysis.replay_reader import MemoryReplay, ReplayReader, as_reader
from workbench.services.replay import budget_96k_config, replay_session
from workbench.storage.store import Store
from workbench.views.compare import compared_run

LONG = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_session.jsonl"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    from workbench.importers import load_session

    config = budget_96k_config()
    result, bundle = replay_session(load_session(LONG).session, config=config)
    store = Store(tmp_path_factory.mktemp("reader") / "wb.db")
    session_id = store.import_file(LONG).session_id
    info = store.replays.save(bundle, session_id=session_id, name="budget")
    yield as_reader(result), store.replays.open(info.id), bundle
    store.close()


def test_r_prep_5_memory_and_stored_replays_are_both_readers(both):
    memory, stored, _ = both
    assert isinstance(memory, MemoryReplay)
    assert isinstance(memory, ReplayReader) and isinstance(stored, ReplayReader)
    assert as_reader(stored) is stored


def test_r_prep_5_stored_reader_answers_as_the_memory_one(both):
    memory, stored, bundle = both
    assert [s.step_index for s in stored.steps] == [s.step_index for s in memory.steps]
    assert stored.thresholds == memory.thresholds and stored.facts == memory.facts
    assert stored.checkpoints and stored.checkpoints == memory.checkpoints
    step = stored.checkpoints[0].step_index
    assert stored.preparation(step) == bundle.preparations[step]
    ref = bundle.preparations[step].final_request_ref
    assert ref and stored.request(ref) == memory.request(ref)
    fields = ("trigger_tokens", "whole_request_tokens")
    assert stored.step_figures(fields) == memory.step_figures(fields)
    names = ("trim_old_bodies", "fold_repeats")
    assert {k: v for k, v in stored.stage_savings(names).items() if v} == \
        {k: v for k, v in memory.stage_savings(names).items() if v}
    kinds = ("compaction-applied", "reduced")
    assert stored.decisions_of_kind(*kinds) == memory.decisions_of_kind(*kinds)


def test_r_ui_6_one_summary_of_either_reader(both):
    memory, stored, _ = both
    assert compared_run("x", stored) == compared_run("x", memory)
