"""A link's query parameters never break a page (R-UI-2): a step or message that is not a number
(``abc``, ``²`` whose ``isdigit()`` is true, a thousand digits), a step or message past the end, an
unknown session (``<script>`` too), an unknown replay or one of another session each give one line
on the page saying what was asked for and what is shown, never a traceback and never silently
another object; the URL then names what is shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from workbench.services.replay import ensure_default_replay, replay_and_save
from workbench.storage.store import open_store
from workbench.views import query

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
SAMPLES = ROOT / "sample_sessions"


@pytest.fixture
def two_sessions(workbench_home) -> dict[str, tuple[str, str]]:
    """Two sample sessions, each with its ``default`` replay: {session id: (replay id, title)}."""
    out = {}
    with open_store() as store:
        for name in ("bugfix", "unanswered"):
            session_id = store.import_file(SAMPLES / f"{name}.jsonl").session_id
            ensure_default_replay(store, session_id)
            replay = store.replays.find(session_id, "default")
            assert replay is not None
            out[session_id] = (replay.id, store.session(session_id).header.title)
    return out


def _open(params: dict[str, str], page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _notices(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if w.proto.icon == "🔗"]


def test_parse_index_takes_ascii_digits_only():
    """R-UI-2: ASCII digits become a number; anything else (superscripts, other scripts' digits,
    signs, more than MAX_DIGITS digits) is None, never a ValueError."""
    assert [query.parse_index(v) for v in ("0", "41", "123456789")] == [0, 41, 123456789]
    bad = (None, "", "²", "٣", "-1", "+1", "4x", " 4", "abc", "1" * 10, "9" * 5000, "1.0")
    assert [query.parse_index(v) for v in bad] == [None] * len(bad)


@pytest.mark.parametrize("value", ["²", "abc", "9" * 5000, "-3"])
def test_a_step_that_is_not_a_number_gives_one_line(two_sessions, value):
    """R-UI-2: ?step=² / abc / 5,000 digits: one line, the first step shown, no traceback."""
    session_id = next(iter(two_sessions))
    at = _open({"session": session_id, "step": value}, "../pages/step_through.py")
    assert len(_notices(at)) == 1 and "is not a step number; showing the first step" in _notices(at)[0]
    assert at.session_state["wb_step"] == 0
    assert at.query_params["step"] == "0"  # the URL names what is shown


def test_a_step_past_the_end_says_which_step_is_shown(two_sessions):
    """R-UI-2: ?step=999 on a shorter replay: the last step, with a line saying so."""
    session_id = next(iter(two_sessions))
    at = _open({"session": session_id, "step": "999"})
    last = at.session_state["wb_step"]
    assert _notices(at) == [query.unknown_step(999, last + 1, last)]


@pytest.mark.parametrize("asked", ["no-such-session", "<script>alert(1)</script>"])
def test_an_unknown_session_is_named_and_never_silently_replaced(two_sessions, asked):
    """R-UI-2: ?session=<unknown>: one line naming it and the session shown instead."""
    at = _open({"session": asked})
    shown = at.session_state["wb_session"]
    assert shown in two_sessions
    [line] = _notices(at)
    assert line.startswith("No session `") and asked[:20] in line and "; showing `" in line
    assert at.query_params["session"] == shown


def test_an_unknown_replay_or_one_of_another_session_is_named(two_sessions):
    """R-UI-2: ?replay=<unknown> and ?replay=<a replay of the other session> each give the line
    "No replay X of session S; showing Y", never a silent `default`."""
    (a, (replay_a, _)), (_, (replay_b, _)) = two_sessions.items()
    for asked in ("no-such-replay", replay_b):
        at = _open({"session": a, "replay": asked})
        assert at.session_state["wb_session"] == a
        [line] = _notices(at)
        assert line.startswith(f"No replay `{asked}` of session `{a}`; showing `")
        assert at.session_state["wb_replay"] == replay_a
    at = _open({"session": a, "replay": replay_a, "step": "1"})  # a good link: no line
    assert _notices(at) == [] and at.session_state["wb_step"] == 1


def test_a_replay_named_by_its_saved_name_opens_without_a_line(two_sessions):
    """R-UI-2: ?replay=<the name it was saved under> (the CLI's --name, which it prints) opens
    that replay of the session, and the URL then carries its id; the name of a replay of the
    other session is not one of this session's."""
    (a, _), (b, (replay_b, _)) = two_sessions.items()
    with open_store() as store:
        mine = replay_and_save(store, a, name="mine")[0].id
    at = _open({"session": a, "replay": "mine", "step": "1"})
    assert _notices(at) == [] and at.session_state["wb_replay"] == mine
    assert at.query_params["replay"] == mine and at.session_state["wb_step"] == 1
    at = _open({"session": b, "replay": "mine"})
    [line] = _notices(at)
    assert line.startswith(f"No replay `mine` of session `{b}`; showing `")
    assert at.session_state["wb_replay"] == replay_b


def test_the_line_stays_until_another_session_is_picked(two_sessions):
    """R-UI-2: the notice is shown on each run of the page it describes and goes when the user
    picks another session."""
    at = _open({"session": "gone"})
    assert len(_notices(at)) == 1
    at.run()
    assert len(_notices(at)) == 1
    other = next(s for s in two_sessions if s != at.session_state["wb_session"])
    at.sidebar.selectbox(key="wb_session").select(other).run()
    assert _notices(at) == []


@pytest.mark.parametrize(("value", "words"), [("²", "is not a message number"),
                                               ("abc", "is not a message number"),
                                               ("99999", "No message #99999 in this session")])
def test_a_bad_message_link_gives_one_line(two_sessions, value, words):
    """R-UI-2: ?message=² / abc / past the end on the Messages page: one line, the first page."""
    session_id = next(iter(two_sessions))
    at = _open({"session": session_id, "message": value}, "../pages/messages.py")
    assert any(words in w for w in _notices(at))
    assert at.number_input(key="wb_msg_page").value == 1
