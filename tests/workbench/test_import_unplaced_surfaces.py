"""Lines an import could not place are counted and shown with their reason on every surface: the
``workbench import`` line, ``workbench inspect --json``, the store, the Sessions page and the
session header of the Messages page (R-TWIN-1). A real store, the real CLI and AppTest pages."""

from __future__ import annotations

import json
from pathlib import Path

from claude_builders import with_loop, write
from streamlit.testing.v1 import AppTest

from workbench.cli import main
from workbench.storage.store import open_store
from workbench.views import sessions as sviews

APP = str(Path(__file__).resolve().parents[2] / "workbench" / "ui" / "app.py")


def _loop_file(tmp_path: Path) -> Path:
    return write(tmp_path / "loop.jsonl", with_loop())


def test_r_twin_1_import_line_counts_and_lists_unplaced_lines(tmp_path, capsys):
    """R-TWIN-1: the lenient import line says "2 unplaced lines" and lists each with line and why;
    the strict import fails naming the file and line 3, storing nothing."""
    path = _loop_file(tmp_path)
    assert main(["import", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3" in err and "cannot be placed" in err
    with open_store() as store:
        assert store.list_sessions() == []
    assert main(["import", "--lenient", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "4 messages, 0 skipped lines, 2 unplaced lines" in out
    assert f"unplaced {path}:3: assistant line 'x1' left out: its parentUuid chain loops" in err
    assert f"unplaced {path}:4: user line 'x2'" in err


def test_r_twin_1_inspect_json_lists_unplaced_lines(tmp_path, capsys):
    """R-TWIN-1: ``inspect --json`` carries the count and every unplaced line with its reason."""
    assert main(["inspect", "--json", "--lenient", str(_loop_file(tmp_path))]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unplaced_lines"] == 2 and data["responses"] == 2
    assert [u["line"] for u in data["unplaced"]] == [3, 4]
    assert "loops" in data["unplaced"][0]["problem"]


def test_r_twin_1_store_keeps_the_unplaced_lines_with_the_session(tmp_path):
    """R-TWIN-1: the store keeps the count and the lines (reopened from the SQLite file), and the
    session table shows the count."""
    with open_store() as store:
        outcome = store.import_file(_loop_file(tmp_path), lenient=True)
        assert [u.line for u in outcome.unplaced] == [3, 4]
        assert "2 unplaced lines" in sviews.import_line(outcome)
    with open_store() as store:
        (summary,) = store.list_sessions()
        assert summary.unplaced_count == 2
        assert [u.line for u in store.unplaced(summary.id)] == [3, 4]
        frame = sviews.sessions_frame([summary])
    assert frame["Unplaced lines"].tolist() == [2]
    assert sviews.unplaced_notice(0) is None
    assert "2 lines" in (sviews.unplaced_notice(2) or "")


def test_r_twin_1_sessions_page_and_session_header_show_unplaced_lines(tmp_path):
    """R-TWIN-1: the Sessions page lists the unplaced lines in an expander and the Messages page
    header warns that two lines are not in the conversation."""
    with open_store() as store:
        sid = store.import_file(_loop_file(tmp_path), lenient=True).session_id
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["session"] = sid
    at.run()
    at.switch_page("../pages/sessions.py").run()
    assert not at.exception
    assert any("2 unplaced lines" in e.label for e in at.expander)
    at.switch_page("../pages/messages.py").run()
    assert not at.exception
    assert any("2 lines of this transcript could not be placed" in w.value for w in at.warning)
