"""AppTest for the Step-through page (R-UI-2, UX.md "Step-through"): the real app on a real store,
with the sidebar making the default replays on first open."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from workbench.replay_service import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.store import open_store

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "workbench" / "app.py")
PAGE = "../pages/step_through.py"


def opened(*samples: str, step: int | None = None) -> AppTest:
    with open_store() as store:
        for name in samples:
            store.import_file(ROOT / "sample_sessions" / f"{name}.jsonl")
    at = AppTest.from_file(APP, default_timeout=90)
    if step is not None:
        at.query_params["step"] = str(step)
    at.run()
    at.switch_page(PAGE).run()
    return at


def test_r_ui_2_empty_store_tells_the_user_what_to_do():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert "Sessions page" in at.info[0].value


def test_r_ui_2_first_open_replays_and_shows_header_stages_and_request():
    """R-UI-2: stage table with spec statuses, decisions panel, final request with marks."""
    at = opened("bugfix", step=10)
    assert not at.exception, at.exception
    assert at.session_state["wb_step"] == 10
    assert at.subheader[0].value.startswith("Step 10 of 35")
    stages = at.dataframe[0].value
    assert list(stages["stage"]) == ["assembly", "fold_repeats", "drop_optional", "trim_old_bodies",
                                     "compaction", "final_selection"]
    assert set(stages["status"]) <= {"entered", "skipped", "candidate", "rejected", "applied"}
    assert any("Final input" in m.value for m in at.markdown)
    assert [e.label for e in at.expander][:1] == ["assembly — entered · " +
                                                  f"{stages.iloc[0]['decisions']} decision(s)"]
    codes = [c.value for c in at.code]
    assert codes, "the final request is rendered message by message as text"


def test_r_ui_2_prev_next_move_one_step_and_mirror_the_url():
    at = opened("bugfix", step=3)
    at.button(key="_wb_step_next").click().run()
    assert at.session_state["wb_step"] == 4 and at.query_params["step"] == "4"
    at.button(key="_wb_step_prev").click().run()
    at.button(key="_wb_step_prev").click().run()
    assert at.session_state["wb_step"] == 2
    assert at.subheader[0].value.startswith("Step 2 ")


def test_r_ui_2_step_after_a_compaction_shows_applied_stage_and_checkpoint():
    """R-UI-2 + R-PREP-3: the applied compaction is visible at its step; the request starts with
    the checkpoint marked summarised."""
    with open_store() as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        info, _ = replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME,
                                  config=budget_96k_config())
    assert info.compactions_applied >= 1
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page(PAGE).run()
    at.sidebar.number_input(key="_wb_step_number").set_value(12).run()
    assert not at.exception, at.exception
    stages = at.dataframe[0].value.set_index("stage")
    assert stages.loc["compaction", "status"] == "applied"
    assert any("summarised" in m.value for m in at.markdown)
    assert any("[Context Summary]" in c.value for c in at.code)
