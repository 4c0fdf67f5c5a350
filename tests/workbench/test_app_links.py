"""Links between views (UX.md): a link to a message (``?message=N``, as a decision
on the Step-through page makes) opens the Messages page on the page that holds it, outlined."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
BUGFIX = ROOT / "sample_sessions" / "bugfix.jsonl"


def test_ux_message_link_opens_the_page_holding_that_message():
    with open_store() as store:
        sid = store.import_file(BUGFIX).session_id
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["session"] = sid
    at.query_params["message"] = "45"
    at.run()
    at.switch_page("../pages/messages.py").run()
    assert not at.exception
    assert at.number_input(key="wb_msg_page").value == 3  # 20 messages per page
    assert any(c.value == "Opened from a link to message #45 (outlined below)." for c in at.caption)
    assert any(m.value.startswith("**#45 ·") for m in at.markdown)
    # the page box is the user's again afterwards
    at.number_input(key="wb_msg_page").set_value(1).run()
    assert at.number_input(key="wb_msg_page").value == 1
    assert any(m.value.startswith("**#0 ·") for m in at.markdown)


def test_ux_a_decision_links_to_its_message():
    """Step-through: each decision about a message links to it on the Messages page."""
    with open_store() as store:
        sid = store.import_file(BUGFIX).session_id
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["session"] = sid
    at.query_params["step"] = "6"
    at.run()
    at.switch_page("../pages/step_through.py").run()
    assert not at.exception
    links = [m.value for m in at.markdown if "](messages?" in m.value]
    frames = [f.value for f in at.dataframe if "open" in f.value.columns]
    urls = [line for text in links for line in text.splitlines()]
    urls += [u for f in frames for u in f["open"].dropna()]
    assert urls, "no decision links to a message"
    assert "_wb_cmp_next" not in {b.key for b in at.button}  # this replay never compacts
    assert all(f"session={sid}" in u and "message=" in u for u in urls)


def test_ux_empty_state_opens_the_samples_in_one_click():
    """A new user's empty store: the Sessions page says what to do and does it in one click."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception
    assert any(i.value == "No sessions yet. Import a transcript or the bundled samples." for i in at.info)
    at.button(key="wb_empty_samples").click().run()
    assert not at.exception
    with open_store() as store:
        assert {s.id for s in store.list_sessions()} >= {"bugfix-tally-march", "long-harbor-retries"}
    assert any("Pick a session in the sidebar" in c.value for c in at.caption)


def test_ux_jump_to_the_next_and_previous_compaction():
    """Keyboard-friendly navigation: the ▲/▼ compaction buttons (Shift+Up/Down) jump between the
    steps where the selected replay applied compaction; without compactions they are not shown."""
    from iris.config import parse_config

    from workbench.services.replay import replay_and_save

    long_session = ROOT / "sample_sessions" / "long_session.jsonl"
    with open_store() as store:
        sid = store.import_file(long_session).session_id
        info, result = replay_and_save(store, sid, name="cost", config=parse_config(
            {"compaction": {"input_budget_tokens": 64000, "threshold": 0.7}}))
    steps = [c.step_index for c in result.checkpoints]
    assert len(steps) >= 2
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["session"] = sid
    at.query_params["replay"] = info.id
    at.run()
    assert at.session_state["wb_step"] == 0
    at.button(key="_wb_cmp_next").click().run()
    assert at.session_state["wb_step"] == steps[0]
    at.button(key="_wb_cmp_next").click().run()
    assert at.session_state["wb_step"] == steps[1]
    at.button(key="_wb_cmp_prev").click().run()
    assert at.session_state["wb_step"] == steps[0]
    assert at.number_input(key="_wb_step_number").value == steps[0]
    assert not at.exception
