"""Details a user of the local app notices (R-UI-1, R-UI-9): no Deploy button, "—" in empty table
cells as the command line writes them, upload errors naming the chosen file, and the import tab
the user chose kept open after an import. AppTest on a real store, plus the pure helpers."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pyarrow as pa
from streamlit.testing.v1 import AppTest

from workbench.cli import streamlit_command
from workbench.storage.store import open_store
from workbench.views.display import MISSING, dashed

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
SAMPLES = ROOT / "sample_sessions"


def shown_cells(element) -> pd.DataFrame:
    """The values a Streamlit table shows (its Styler's display values, else its data)."""
    styler = element.proto.arrow_data.styler
    data = styler.display_values if styler.display_values else element.proto.arrow_data.data
    return pa.ipc.open_stream(io.BytesIO(data)).read_all().to_pandas()


def test_r_ui_9_app_runs_with_the_minimal_toolbar():
    """R-UI-9: `workbench run` (and the browser tests' server) hide Streamlit's Deploy button."""
    command = streamlit_command(8599)
    assert command[command.index("--client.toolbarMode") + 1] == "minimal"
    assert 'toolbarMode = "minimal"' in (ROOT / ".streamlit" / "config.toml").read_text()


def test_r_ui_1_dashed_writes_a_dash_only_in_empty_cells():
    """R-UI-1: an empty cell reads "—" (as in the CLI); numbers keep thousands separators."""
    frame = pd.DataFrame({"tokens": pd.array([12345, None], dtype="Int64"), "name": ["a", "b"],
                          "ratio": [1.5, float("nan")]})
    styled = dashed(frame)
    html = styled.to_html()  # pyright: ignore[reportAttributeAccessIssue]
    assert "12,345" in html and MISSING in html and ">1.5<" in html
    complete = pd.DataFrame({"name": ["a", "b"]})
    assert dashed(complete) is complete  # nothing empty: the frame as it is


def test_r_ui_1_sessions_table_shows_a_dash_for_an_estimate_not_counted_yet():
    """R-UI-1: a session nobody tokenised yet shows "—" in "Tokens (est.)", not "None"."""
    with open_store() as store:
        for name in ("bugfix", "unanswered"):
            store.import_file(SAMPLES / f"{name}.jsonl")
    at = AppTest.from_file(APP, default_timeout=90).run()
    assert not at.exception, at.exception
    cells = shown_cells(at.dataframe[0])
    tokens = list(cells["Tokens (est.)"])
    assert MISSING in tokens and "None" not in tokens
    assert any(t != MISSING and t.replace(",", "").isdigit() for t in tokens)


def test_r_ui_1_an_upload_error_names_the_chosen_file_not_a_temporary_path():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.file_uploader(key="wb_upload").upload("my run.jsonl", b'{"not": "a transcript"\n').run()
    at.button(key="wb_import_upload").click().run()
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert "my run.jsonl" in error and "workbench-upload-" not in error and "/tmp" not in error


def test_r_ui_1_the_chosen_import_tab_stays_open_after_an_import():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.session_state["wb_import_tab"] = "From a path"
    at.run()
    at.text_area(key="wb_import_path").input(str(SAMPLES / "bugfix.jsonl")).run()
    at.button(key="wb_import_path_button").click().run()
    assert not at.exception and len(at.success) == 1
    assert at.session_state["wb_import_tab"] == "From a path"
    # the tabs are a keyed widget the browser reports its choice to (an untracked st.tabs falls
    # back to its first tab whenever the page above it changes, as after an import)
    assert any(b.proto.tab_container.id.endswith("-wb_import_tab") for b in _blocks(at._tree))


def _blocks(node):
    """Every block of an AppTest tree (AppTest has no typed wrapper for the tab container)."""
    for child in getattr(node, "children", {}).values():
        if hasattr(child.proto, "tab_container"):
            yield child
        yield from _blocks(child)
