"""AppTest for the Step-through page (R-UI-2, UX.md "Step-through"): the real app on a real store,
with the sidebar making the default replays on first open."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
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


def box_texts(at: AppTest) -> list[str]:
    """The texts of the final request's message boxes (the containers keyed ``wbmsg-…``)."""
    found: list[str] = []

    def walk(node, inside: bool) -> None:
        for child in getattr(node, "children", {}).values():
            here = inside or "-wbmsg-" in str(getattr(getattr(child, "proto", None), "id", ""))
            if here and type(child).__name__ == "Text":
                found.append(child.value)
            walk(child, here)
    walk(at.main, False)
    return found


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
    assert [e.label for e in at.expander if e.label.startswith("assembly")] == [
        "assembly — entered · " + f"{stages.iloc[0]['decisions']} decision"
        + ("" if stages.iloc[0]["decisions"] == 1 else "s")]
    assert box_texts(at), "the final request is rendered message by message as text"


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
    at.sidebar.number_input(key="_wb_step_number").set_value(55).run()
    assert not at.exception, at.exception
    stages = at.dataframe[0].value.set_index("stage")
    assert stages.loc["compaction", "status"] == "applied"
    assert any("summarised" in m.value for m in at.markdown)
    assert any("[Context Summary]" in t for t in box_texts(at))


def test_r_ui_2_long_request_overview_table_and_few_messages_in_full():
    """R-UI-2 (with the UI target of ≤ 1 s per page): every message of a long request is in one overview table,
    but only the checkpoint, this step's changes and the last few are rendered in full; the
    2,000-bar step timeline is not drawn until its expander is opened."""
    at = opened("long_session", step=60)
    assert not at.exception, at.exception
    overview = at.dataframe[-1].value
    assert list(overview.columns[:4]) == ["position", "role", "from", "marks"]
    assert len(overview) > 20
    assert list(overview["position"]) == list(range(len(overview)))
    assert 1 <= len(box_texts(at)) <= 10 + 5 + 1
    assert box_texts(at)[-1]  # the newest message is always shown in full
    assert not at.code  # no code block on a first render: it loads the syntax highlighter
    assert not at.get("plotly_chart")
    assert any(c.value.startswith("Showing ") for c in at.caption)


def test_r_ui_2_page_by_page_opens_on_the_newest_page_and_pages_back():
    """R-UI-2: every message can be read in full, one page of 10 at a time (like Messages)."""
    at = opened("long_session", step=60)
    total = len(at.dataframe[-1].value)
    at.radio(key="st_message_mode").set_value("Page by page").run()
    box = next(n for n in at.number_input if n.label.startswith("Page (of"))
    assert box.value == box.max == -(-total // 10)
    headers = [m.value for m in at.main.markdown if re.match(r"\*\*\d+ · ", m.value)]
    assert headers[-1].startswith(f"**{total - 1} · ")
    box.set_value(1).run()
    headers = [m.value for m in at.main.markdown if re.match(r"\*\*\d+ · ", m.value)]
    assert [h.split(" ")[0] for h in headers] == [f"**{i}" for i in range(10)]
    assert len(box_texts(at)) == 10


def test_r_ui_2_focus_keeps_checkpoint_changes_and_the_tail():
    """R-UI-2: the "This step" selection in request order: checkpoint, changed, last few."""
    from workbench.services.replay import open_saved, session_messages
    from workbench.views.step_through import focus_messages, page_of, request_messages

    with open_store() as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        info, _ = replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME,
                                  config=budget_96k_config())
        replay = open_saved(store, info.id)
        prep = replay.preparation(55)
        request = replay.request(prep.final_request_ref)
        assert request is not None
        shown = request_messages(request,
                                 session_messages(store, session_id))
    chosen, left_out = focus_messages(prep, shown, last=3, cap=10)
    positions = [m.position for m in chosen]
    assert positions == sorted(positions) and left_out == 0
    assert any(m.origin == "checkpoint" for m in chosen)
    assert positions[-3:] == [len(shown) - 3, len(shown) - 2, len(shown) - 1]
    assert page_of(shown, 99, 10) == tuple(shown[(-(-len(shown) // 10) - 1) * 10:])
    assert page_of(shown, 0, 10) == tuple(shown[:10])
