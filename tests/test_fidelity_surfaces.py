"""What each compaction lost, where decisions are made (R-FID-2): the Compaction page, the
notebook and the batch output, on built transcripts and on the real Claude Code sessions."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.storage.store import open_store

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "workbench" / "app.py")
PAGE = "../pages/compaction.py"


def test_r_fid_2_compaction_page_shows_recall_and_lost_facts_linked_to_steps():
    """R-FID-2: the Compaction page lists each compaction's recall by kind and its lost facts,
    each with a link that opens the step that needed it."""
    with open_store() as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        info, _ = replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME,
                                  config=budget_96k_config())
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    recall = next(d.value for d in at.dataframe if "kept of needed" in d.value.columns)
    assert next(iter(recall["compaction"])).startswith("replay #1 · step ")
    assert {"paths", "commands", "instructions"} <= set(recall.columns)
    assert any("needed" in m.value and "replay #1" in m.value for m in at.markdown)
    lost = [d.value for d in at.dataframe if "needed at step" in d.value.columns]
    assert int(recall["lost"].iloc[0]) == len(lost[0]) > 0  # the sample's checkpoint drops paths
    first = lost[0].iloc[0]
    assert f"step={first['needed at step']}" in first["open"] and info.id in first["open"]
    assert first["needed at step"] >= int(recall["compaction"].iloc[0].rsplit(" ", 1)[1])


def test_r_fid_2_notebook_fidelity_and_lost_tables():
    """R-FID-2: ``replay.fidelity()`` has a row per compaction and kind plus an ``all`` row whose
    counts add up, typed also without rows; ``replay.lost()`` lists the lost facts with steps."""
    from workbench.notebook import replay, sample_path

    result = replay(sample_path("long_session"), budget_96k_config())
    table = result.fidelity()
    assert set(table["source"]) == {"replay"} and str(table["facts"].dtype) == "int64"
    whole = table[table["kind"] == "all"].iloc[0]
    kinds = table[(table["kind"] != "all") & (table["n"] == whole["n"])]
    assert whole["needed_later"] == kinds["needed_later"].sum() > 0
    assert whole["recall_needed_later"] == whole["needed_later_kept"] / whole["needed_later"]
    lost = result.lost()
    assert len(lost) == whole["needed_later"] - whole["needed_later_kept"]
    assert (lost["needed_at_step"] >= lost["step"]).all()
    quiet = replay(sample_path("unanswered"))
    assert quiet.fidelity().empty and str(quiet.fidelity()["recall_needed_later"].dtype) == "Float64"
