"""The app shell, the Sessions page and the Messages page (R-UI-1, R-SES-5 in the UI, UX.md): AppTest
runs of the real pages on a real store, plus the pure view functions behind them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.session import Message, Session, SessionHeader, TextBlock, ToolCallBlock, ToolResultBlock
from iris.tokens import default_estimator
from streamlit.testing.v1 import AppTest

from workbench.importers import load_session
from workbench.importers.native import dump_session
from workbench.services import imports
from workbench.storage.store import open_store
from workbench.views import messages as mviews
from workbench.views import sessions as sviews
from workbench.views.markup import plain

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
SAMPLES = ROOT / "sample_sessions"
MESSAGES_PAGE = "../pages/messages.py"


def app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=60)


def texts(elements) -> list[str]:
    return [e.value for e in elements]


# ------------------------------------------------------------------ pure views


def test_r_ui_1_safe_upload_name_keeps_one_harmless_component():
    assert imports.safe_upload_name("../../etc/passwd") == "passwd"
    assert imports.safe_upload_name("C:\\Users\\me\\run 1 (copy).jsonl") == "run_1_copy_.jsonl"
    assert imports.safe_upload_name(".hidden.jsonl") == "hidden.jsonl"
    assert imports.safe_upload_name("<script>") == "_script_"
    assert imports.safe_upload_name("") == imports.safe_upload_name("///") == "upload.jsonl"


def test_r_ses_5_import_paths_reports_errors_without_raising(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "header", "session_id": "s"}\n{"type": "message", "role": 7}\n')
    with open_store() as store:
        calls: list[tuple[int, int]] = []
        reports = imports.import_paths(store, [bad, SAMPLES / "unanswered.jsonl"],
                                       progress=lambda i, n, f, label: calls.append((i, n)))
        error, outcome = reports[0].error, reports[1].outcome
        assert error is not None and outcome is not None
        assert error.line == 2 and error.field == "role"
        assert error.expected and "Traceback" in error.traceback
        assert outcome.created
        assert {c for c in calls} == {(0, 2), (1, 2)}
        frame = sviews.sessions_frame(store.list_sessions())
    assert list(frame.columns) == sviews.SESSION_COLUMNS
    assert frame.iloc[0]["Messages"] == 5 and frame.iloc[0]["Imported at"].endswith(" UTC")


def test_r_ses_1_conversation_pairs_calls_with_results():
    session = load_session(SAMPLES / "bugfix.jsonl").session
    views = mviews.conversation(session, default_estimator())
    assert len(views) == len(session.messages)
    calls = [b for v in views for b in v.blocks if b.kind == "tool_call"]
    paired = [(c, c.result) for c in calls if c.result is not None]
    assert calls and len(paired) == len(calls) and all(r.call_id == c.call_id for c, r in paired)
    failed = [c for c, r in paired if r.is_error]
    assert failed and all(c.result_message is not None and views[c.result_message].has_error
                          for c in failed)
    tool_blocks = [b for v in views if v.role == "tool" for b in v.blocks]
    assert all(b.call_message is not None and views[b.call_message].role == "assistant" for b in tool_blocks)
    long_results = [r for _, r in paired if r.long]
    assert long_results and all(r.size.endswith("lines") and len(r.preview) < len(r.text) for r in long_results)
    assert all(v.estimate > 0 for v in views)


def test_r_ses_2_message_frame_shows_normalised_and_raw_usage():
    session = load_session(SAMPLES / "long_session.jsonl").session
    frame = mviews.message_frame(session, default_estimator())
    assistants = frame.query('Role == "assistant"')
    with_usage = assistants.dropna(subset=["Prompt tokens"])
    assert 0 < len(with_usage) < len(assistants)  # some responses have no usage
    row = with_usage.iloc[0]
    assert row["Prompt tokens"] == row["Input"] + row["Cache read"] + row["Cache write"]


def test_r_ses_1_unanswered_call_has_no_result_view():
    session = load_session(SAMPLES / "unanswered.jsonl").session
    last = mviews.conversation(session, default_estimator())[-1]
    assert last.unanswered_calls == 1


# ------------------------------------------------------------------ AppTest


def test_r_ui_1_empty_store_tells_a_new_user_what_to_do():
    at = app().run()
    assert not at.exception
    assert any("Import a transcript or the bundled samples" in t for t in texts(at.info))
    assert at.title[0].value == "Sessions"
    at.switch_page(MESSAGES_PAGE).run()
    assert not at.exception
    assert any("open a sample on the Sessions page" in t for t in texts(at.info))


def test_r_ui_1_import_bundled_samples_lists_them_and_selects_one():
    at = app().run()
    at.button(key="wb_import_samples").click().run()
    assert not at.exception
    assert len(at.success) == 3
    table = at.dataframe[0].value
    assert sorted(table["ID"]) == ["bugfix-tally-march", "long-harbor-retries", "unanswered-coverage"]
    assert set(table.columns) >= {"Title", "Format", "Messages", "Responses", "Tokens (est.)", "Imported at"}
    assert at.sidebar.selectbox(key="wb_session").value == "bugfix-tally-march"
    # mirrored into the URL (AppTest before Streamlit 1.65 reads a value back as a one-item list)
    assert at.query_params["session"] in ("bugfix-tally-march", ["bugfix-tally-march"])
    at.button(key="wb_import_samples").click().run()  # again: nothing duplicated
    assert len(at.dataframe[0].value) == 3
    assert all("Already stored" in t for t in texts(at.success))


def test_r_ses_5_bad_path_shows_file_line_field_and_traceback_only_in_expander(tmp_path):
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"type": "header", "session_id": "s"}\n{"type": "message", "role": "robot"}\n')
    at = app().run()
    at.text_area(key="wb_import_path").input(str(bad)).run()
    at.button(key="wb_import_path_button").click().run()
    assert not at.exception
    (error,) = at.error
    assert plain(f"{bad}:2 [role]") in error.value and "Traceback" not in error.value  # escaped
    assert any(e.label == "Traceback (for developers)" for e in at.expander)
    with open_store() as store:
        assert store.list_sessions() == []
    at.checkbox(key="wb_import_lenient").check().run()
    at.button(key="wb_import_path_button").click().run()
    assert not at.error and len(at.success) == 1
    assert any("1 line of " in w for w in texts(at.warning))
    skipped = at.dataframe[-1].value
    assert list(skipped["Line"]) == [2] and "role" in skipped["Problem"][0]


def test_r_ui_1_upload_is_stored_under_a_sanitised_name():
    at = app().run()
    data = (SAMPLES / "unanswered.jsonl").read_bytes()
    at.file_uploader(key="wb_upload").upload("../../evil name.jsonl", data).run()
    at.button(key="wb_import_upload").click().run()
    assert not at.exception and len(at.success) == 1
    with open_store() as store:
        (summary,) = store.list_sessions()
    assert summary.source_path is not None
    assert Path(summary.source_path).name == "evil_name.jsonl"
    assert "workbench-upload-" in summary.source_path


def test_r_ui_1_delete_asks_for_confirmation():
    at = app().run()
    at.button(key="wb_import_samples").click().run()
    at.selectbox(key="wb_delete_choice").select("unanswered-coverage").run()
    at.button(key="wb_delete").click().run()
    assert any("cannot be undone" in w for w in texts(at.warning))
    at.button(key="wb_delete_cancel").click().run()
    assert len(at.dataframe[0].value) == 3
    at.button(key="wb_delete").click().run()
    at.button(key="wb_delete_confirm").click().run()
    assert not at.exception
    assert "unanswered-coverage" not in list(at.dataframe[0].value["ID"])


def test_r_ui_1_messages_page_shows_the_conversation():
    with open_store() as store:
        sid = store.import_file(SAMPLES / "bugfix.jsonl").session_id
    at = app()
    at.query_params["session"] = sid
    at.run()
    at.switch_page(MESSAGES_PAGE).run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Messages"] == "82" and metrics["Responses"] == "36" and metrics["Unanswered"] == "0"
    captions = texts(at.caption)
    assert any("Provider usage: prompt" in c and "cache read" in c for c in captions)
    assert any("tokens (local estimate)" in c for c in captions)
    labels = [e.label for e in at.expander]
    for page in (2, 3, 4, 5):  # 20 messages a page
        at.number_input(key="wb_msg_page").set_value(page).run()
        assert not at.exception and any(m.value.startswith(f"**#{(page - 1) * 20} ·") for m in at.markdown)
        labels += [e.label for e in at.expander]
    assert any(label.startswith(":red[**Error**]") for label in labels)
    assert any(label.startswith("↳ Result") for label in labels)


def test_r_ui_1_query_param_opens_the_linked_session_and_unanswered_is_marked():
    with open_store() as store:
        store.import_file(SAMPLES / "bugfix.jsonl")
        store.import_file(SAMPLES / "unanswered.jsonl")
    at = app()
    at.query_params["session"] = "unanswered-coverage"
    at.run()
    assert at.sidebar.selectbox(key="wb_session").value == "unanswered-coverage"
    at.switch_page(MESSAGES_PAGE).run()
    assert {m.label: m.value for m in at.metric}["Unanswered"] == "1"
    assert any("Unanswered" in w for w in texts(at.warning))


def test_ux_transcript_text_is_never_rendered_as_html_or_markdown(tmp_path):
    evil = "<script>alert(1)</script> **not bold** <img src=x onerror=alert(2)>"
    session = Session(header=SessionHeader(session_id="evil", title="Evil"), messages=(
        Message(role="user", content=(TextBlock(text=evil),)),
        Message(role="assistant", content=(ToolCallBlock(id="c`1", name="Bash`**x**", arguments={"cmd": evil}),)),
        Message(role="tool", content=(ToolResultBlock(call_id="c`1", text=evil),)),
    ))
    path = dump_session(session, tmp_path / "evil.jsonl")
    with open_store() as store:
        store.import_file(path)
    at = app().run()
    at.switch_page(MESSAGES_PAGE).run()
    assert not at.exception
    assert evil in texts(at.text)
    assert not at.get("html")
    assert all(evil not in m.value and "<script>" not in m.value for m in at.markdown)
    assert any("`Bash'**x**`" in m.value for m in at.markdown)  # backticks cannot escape the code span
    assert json.loads(next(c for c in texts(at.text) if c.startswith("{")))["cmd"] == evil


@pytest.mark.parametrize("page", ["../pages/sessions.py", MESSAGES_PAGE])
def test_r_ui_1_every_page_of_this_issue_runs_on_an_empty_store(page):
    at = app().run()
    at.switch_page(page).run()
    assert not at.exception


def test_r_ses_5_damaged_store_is_a_clear_message_not_a_traceback(workbench_home):
    workbench_home.mkdir(parents=True)
    (workbench_home / "workbench.db").write_bytes(b"not sqlite at all\n" * 100)
    at = app().run()
    assert not at.exception
    (error,) = at.error
    assert plain(workbench_home / "workbench.db") in error.value and "not a SQLite database" in error.value


def test_r_ui_1_messages_page_sends_the_table_and_long_texts_only_when_opened():
    """R-UI-1: the all-messages table and the full text of a long result reach the browser only
    while their expanders are open (a page flip does not mount them)."""
    with open_store() as store:
        sid = store.import_file(SAMPLES / "bugfix.jsonl").session_id
    at = app()
    at.query_params["session"] = sid
    at.run()
    at.switch_page(MESSAGES_PAGE).run()
    assert not at.exception and len(at.dataframe) == 0
    codes_closed = len(at.code)
    long_labels = [e.label for e in at.expander if e.label.startswith(("Show all", "↳ Result", ":red"))]
    at.session_state["wb_msg_table_open"] = True
    at.run()
    assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == 82
    assert long_labels
    at.session_state["wb_msg_more_1_0"] = True  # the first lazy expander of page 1
    at.run()
    assert not at.exception and len(at.code) == codes_closed + 1
