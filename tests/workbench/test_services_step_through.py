"""The Step-through page's service (R-UI-2): one step of a saved replay read from a real store with
its final request and the session's messages, and the step timeline made once per saved replay
with the agent's recorded compactions placed on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.errors import StorageError
from truth_helpers import RECORDED_STEP, store_long_with_recorded_compaction

from workbench.services.replay import replay_and_save
from workbench.services.step_through import open_step, step_timeline
from workbench.storage.store import Store

BUGFIX = Path(__file__).resolve().parents[2] / "sample_sessions" / "bugfix.jsonl"


def test_r_ui_2_open_step_reads_the_preparation_request_and_originals(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        session_id = store.import_file(BUGFIX).session_id
        info, _ = replay_and_save(store, session_id, name="default")
        opened = open_step(store, session_id, info.id, 10)
        assert opened.prep.step_index == 10 and opened.replay.id == info.id
        assert opened.request is not None
        assert opened.request.ref == opened.prep.final_request_ref
        assert len(opened.originals) == store.row_of(session_id).message_count
        assert len(opened.replay) == info.step_count
        with pytest.raises(StorageError, match="no step 999"):
            open_step(store, session_id, info.id, 999)


def test_r_ui_2_step_timeline_is_drawn_once_per_saved_replay_with_the_recorded_marks(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        session_id = store_long_with_recorded_compaction(store)
        info, _ = replay_and_save(store, session_id, name="default")
        replay = open_step(store, session_id, info.id, 0).replay
        drawn: list[tuple[int, list[int | None]]] = []

        def draw(steps, marks):
            drawn.append((len(steps), [m.step for m in marks]))
            return {"drawn": len(drawn)}

        first = step_timeline(store, session_id, replay, draw)
        again = step_timeline(store, session_id, replay, draw)
        assert first == again == {"drawn": 1}  # the second step reads the cache
        assert drawn == [(info.step_count, [RECORDED_STEP])]
        replay_and_save(store, session_id, name="default")  # saved again: drawn again
        replay = open_step(store, session_id, info.id, 0).replay
        assert step_timeline(store, session_id, replay, draw) == {"drawn": 2}
