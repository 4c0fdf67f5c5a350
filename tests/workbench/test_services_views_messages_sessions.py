"""The Messages and Sessions pages' services and views (R-SES-1, R-SES-2, R-UI-1, R-SES-5): a
stored session opened with its estimate, the header figures, paging and the message captions;
an upload saved and imported, the first imported session picked, the import form's words."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.errors import StorageError
from iris.session import Message, Session, SessionHeader, TextBlock
from streamlit.testing.v1 import AppTest

from workbench.services.imports import first_imported, import_paths, save_upload, session_paths
from workbench.services.messages import open_session
from workbench.storage.store import Store
from workbench.views import messages as mview
from workbench.views import sessions as sview

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"


def test_r_ses_1_open_session_reads_title_messages_and_the_stored_estimate(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        session_id = store.import_file(SAMPLES / "bugfix.jsonl").session_id
        opened = open_session(store, session_id)
        assert opened.title == store.row_of(session_id).title
        assert len(opened.session.messages) == 82
        assert opened.estimated_tokens == store.session_tokens(session_id) > 0
        with pytest.raises(StorageError):
            open_session(store, "no-such-session")


def test_r_ses_2_header_figures_count_responses_calls_and_the_largest_recorded_prompt(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        opened = open_session(store, store.import_file(SAMPLES / "bugfix.jsonl").session_id)
    figures = dict(mview.header_metrics(opened.session, 12345))
    prompts = [m.usage.prompt_tokens for m in opened.session.messages if m.usage is not None]
    assert figures["Messages"] == 82 and figures["Responses"] == 36 and figures["Unanswered"] == 0
    assert figures["Estimated tokens"] == "12,345" and figures["Max prompt (provider)"] == f"{max(prompts):,}"
    bare = Session(header=SessionHeader(session_id="bare"),
                   messages=(Message(role="user", content=(TextBlock(text="hi"),)),))
    assert dict(mview.header_metrics(bare, 1))["Max prompt (provider)"] == "—"


def test_r_ui_1_paging_and_message_links():
    assert [mview.page_count(n) for n in (0, 20, 21, 82)] == [1, 1, 2, 5]
    assert mview.linked_message("41") == 41
    assert [mview.linked_message(p) for p in (None, "", "-1", "4x")] == [None] * 4


def test_r_ses_2_message_captions_show_usage_or_say_it_was_not_recorded(tmp_path):
    with Store(tmp_path / "workbench.db") as store:
        opened = open_session(store, store.import_file(SAMPLES / "bugfix.jsonl").session_id)
    views = mview.conversation(opened.session, opened.estimator)
    with_usage = next(v for v in views if v.usage is not None)
    caption, usage = mview.usage_caption(with_usage), with_usage.usage
    assert caption is not None and usage is not None
    assert caption.startswith(f"Provider usage: prompt {usage.prompt_tokens:,}")
    user = next(v for v in views if v.role == "user")
    assert mview.usage_caption(user) is None
    assert mview.usage_caption(user.model_copy(update={"role": "assistant"})) == "Provider usage: not recorded"
    assert f"≈ {user.estimate:,} tokens (local estimate)" in mview.message_flags(user)
    assert mview.code_span("a`b") == "`a'b`"


def test_r_ui_1_an_upload_is_saved_under_a_safe_name_and_imports(tmp_path):
    data = (SAMPLES / "bugfix.jsonl").read_bytes()
    saved = save_upload("../../evil name.jsonl", data)
    assert saved.name == "evil_name.jsonl" and saved.read_bytes() == data
    with Store(tmp_path / "workbench.db") as store:
        reports = import_paths(store, [tmp_path / "missing.jsonl", saved])
        imported, again = reports[1].outcome, import_paths(store, [saved])[0].outcome
        assert reports[0].error is not None and imported is not None and again is not None
        assert first_imported(reports) == imported.session_id
        assert first_imported(reports[:1]) is None
        line = sview.import_line(imported)
        assert line.startswith("Imported: ") and line.endswith(" messages")
        assert sview.import_line(again).startswith("Already stored (same content): ")


def test_r_ui_1_import_form_reads_paths_and_the_format_choice():
    assert sview.paths_from_text("  a.jsonl \n\n~/b.jsonl\n") == ["a.jsonl", str(Path("~/b.jsonl").expanduser())]
    assert sview.chosen_format(sview.AUTO_FORMAT) is None
    assert sview.chosen_format("codex") == "codex"


def test_r_ui_9_a_folder_import_reports_progress_for_each_file_it_holds(tmp_path):
    """Importing a folder from the Sessions page: the progress index points into the folder's
    files (what the page labels the bar with), and every file in the folder is imported."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("bugfix.jsonl", "unanswered.jsonl"):
        (folder / name).write_bytes((SAMPLES / name).read_bytes())
    files = session_paths([folder])
    seen: set[tuple[str, int]] = set()
    with Store(tmp_path / "workbench.db") as store:
        reports = import_paths(store, [folder], progress=lambda i, n, _f, _l: seen.add((Path(files[i]).name, n)))
    assert [r.path for r in reports] == files and all(r.outcome is not None for r in reports)
    assert seen == {("bugfix.jsonl", 2), ("unanswered.jsonl", 2)}


def test_r_ui_9_sessions_page_imports_a_folder_of_several_files(tmp_path):
    """The Sessions page's "From a path" import of a folder imports every file in it (the bar's
    label names each file; none fails)."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("bugfix.jsonl", "unanswered.jsonl"):
        (folder / name).write_bytes((SAMPLES / name).read_bytes())
    at = AppTest.from_file(str(ROOT / "workbench" / "ui" / "app.py"), default_timeout=60).run()
    at.switch_page("../pages/sessions.py").run()
    at.text_area(key="wb_import_path").set_value(str(folder)).run()
    at.button(key="wb_import_path_button").click().run()
    assert not at.exception and not at.error
    assert sum(s.value.startswith("Imported: ") for s in at.success) == 2
