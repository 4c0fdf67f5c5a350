"""Links between views (issue 7 item 5, UX.md): a link to a message (``?message=N``, as a decision
on the Step-through page makes) opens the Messages page on the page that holds it, outlined."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from workbench.store import open_store

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "workbench" / "app.py")
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
    assert at.number_input(key="wb_msg_page").value == 2  # 40 messages per page
    assert any(c.value == "Opened from a link to message #45 (outlined below)." for c in at.caption)
    assert any(m.value.startswith("**#45 ·") for m in at.markdown)
    # the page box is the user's again afterwards
    at.number_input(key="wb_msg_page").set_value(1).run()
    assert at.number_input(key="wb_msg_page").value == 1
    assert any(m.value.startswith("**#0 ·") for m in at.markdown)
