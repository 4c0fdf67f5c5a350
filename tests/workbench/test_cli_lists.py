"""``workbench sessions`` / ``workbench replays`` in table, JSON, JSON-lines and CSV form, deleting
a saved replay, and ``--version`` (R-UI-9: the CLI fits the conventions of llm and sqlite-utils)."""

from __future__ import annotations

import csv
import io
import json
from importlib.metadata import version
from pathlib import Path

import pandas as pd
import pytest

from workbench.cli import main
from workbench.cli.lists import REPLAY_COLUMNS, SESSION_COLUMNS

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
BUGFIX = str(SAMPLES / "bugfix.jsonl")


def _out(capsys, argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.fixture
def stored(capsys):
    main(["import", "--quiet", BUGFIX, str(SAMPLES / "unanswered.jsonl")])
    main(["replay", "bugfix-tally-march", "--name", "first"])
    capsys.readouterr()


def test_r_ui_9_version_names_the_installed_distribution(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"workbench {version('context-workbench')}"


def test_r_ui_9_sessions_json_nl_and_csv_keep_numbers(capsys, stored):
    as_json = json.loads(_out(capsys, ["sessions", "--json"]))
    assert [set(r) for r in as_json] == [set(SESSION_COLUMNS)] * 2
    bugfix = next(r for r in as_json if r["id"] == "bugfix-tally-march")
    assert bugfix["messages"] == 82 and isinstance(bugfix["estimated_tokens"], int)
    lines = _out(capsys, ["sessions", "--nl"]).splitlines()
    assert [json.loads(line) for line in lines] == as_json
    rows = list(csv.DictReader(io.StringIO(_out(capsys, ["sessions", "--csv"]))))
    assert [r["id"] for r in rows] == [r["id"] for r in as_json]
    assert rows[0].keys() == set(SESSION_COLUMNS)


def test_r_twin_5_sessions_json_and_the_notebook_name_each_fact_alike(capsys, stored):
    """R-TWIN-5: ``sessions --json`` and ``wb.sessions()`` use one key per fact (the token
    estimate is ``estimated_tokens``, the lines an import could not place ``unplaced_lines``) and
    state the same values."""
    import workbench as wb

    as_json = {r["id"]: r for r in json.loads(_out(capsys, ["sessions", "--json"]))}
    frame = wb.sessions().set_index("id")
    assert set(SESSION_COLUMNS) - {"id"} <= set(frame.columns)
    def value(session_id: str, key: str) -> object:
        cell = frame[key].loc[session_id]
        return None if cell is None or cell is pd.NA else int(cell)

    assert any(r["estimated_tokens"] is not None for r in as_json.values())
    for session_id, row in as_json.items():
        assert row["estimated_tokens"] == value(session_id, "estimated_tokens")
        assert row["unplaced_lines"] == value(session_id, "unplaced_lines")


def test_r_ui_9_replays_lists_filters_and_deletes(capsys, stored):
    table = _out(capsys, ["replays"]).splitlines()
    assert table[0].split()[:3] == ["ID", "SESSION", "ID"]
    listed = json.loads(_out(capsys, ["replays", "--json"]))
    assert [r["name"] for r in listed] == ["first"]
    assert set(listed[0]) == set(REPLAY_COLUMNS) and listed[0]["steps"] > 0
    assert json.loads(_out(capsys, ["replays", "--session", "unanswered-coverage", "--json"])) == []
    assert main(["replays", "--session", "nope"]) == 1
    assert "no stored session 'nope'" in capsys.readouterr().err

    assert _out(capsys, ["replays", "delete", listed[0]["id"]]).startswith("deleted replay")
    assert json.loads(_out(capsys, ["replays", "--json"])) == []
    assert main(["replays", "delete", listed[0]["id"]]) == 1
    assert f"no saved replay {listed[0]['id']!r}" in capsys.readouterr().err


def test_r_ui_9_empty_store_says_what_to_do(capsys):
    assert "Import one: workbench import PATH" in _out(capsys, ["sessions"])
    assert "workbench replay --defaults" in _out(capsys, ["replays"])
    assert json.loads(_out(capsys, ["replays", "--json"])) == []


def test_r_ui_9_progress_bar_draws_on_a_terminal_only(tmp_path):
    import os
    import select

    from workbench.views.terminal import progress_bar

    leader, follower = os.openpty()
    with open(follower, "w", encoding="utf-8", closefd=True) as tty:
        with progress_bar("import", stream=tty) as report:
            report(0.5, "messages")
        tty.flush()
    drawn = ""
    while select.select([leader], [], [], 1.0)[0]:  # everything the bar wrote, in pieces
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: all was read
            break
        if not chunk:
            break
        drawn += chunk.decode(errors="replace")
    os.close(leader)
    assert "import:" in drawn and "50%" in drawn and "messages" in drawn

    plain = tmp_path / "log.txt"
    with open(plain, "w", encoding="utf-8") as log, progress_bar("import", stream=log) as report:
        report(0.5, "messages")
    assert plain.read_text() == ""


def test_r_ui_9_report_of_a_saved_replay(capsys, stored, tmp_path):
    replay_id = json.loads(_out(capsys, ["replays", "--json"]))[0]["id"]
    out = tmp_path / "saved.html"
    assert main(["report", "--replay", replay_id, "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}")
    html = out.read_text(encoding="utf-8")
    assert "first" in html and "bugfix" in html.lower()
    assert main(["report", "--replay", "replay-nope", "--out", str(out)]) == 1
    assert "replay-nope" in capsys.readouterr().err
    assert main(["report", "--out", str(out)]) == 1
    assert "either SESSION or --replay" in capsys.readouterr().err


@pytest.mark.slow  # starts a process
def test_r_ui_9_import_draws_its_bar_on_a_terminal_only(tmp_path):
    """The import's progress goes through the shared tqdm bar: drawn on a terminal (a real
    pseudo-terminal as standard error), absent from a redirected standard error."""
    import os
    import select
    import subprocess
    import sys

    env = {**os.environ, "WORKBENCH_HOME": str(tmp_path / "home")}
    code = "from workbench.cli import main; raise SystemExit(main(['import', %r]))"
    leader, follower = os.openpty()
    proc = subprocess.Popen([sys.executable, "-c", code % str(SAMPLES / "long_session.jsonl")],
                            stderr=follower, stdout=subprocess.PIPE, env=env)
    os.close(follower)
    drawn = b""
    while True:  # read while the child runs: a closed terminal's unread bytes can be lost
        if select.select([leader], [], [], 0.2)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
        elif proc.poll() is not None:
            break
    assert proc.stdout is not None
    stdout = proc.stdout.read()
    proc.wait(timeout=120)
    os.close(leader)
    assert proc.returncode == 0 and b"imported:" in stdout
    assert b"long_session.jsonl:" in drawn and b"%|" in drawn
    plain = subprocess.run([sys.executable, "-c", code % BUGFIX], capture_output=True, env=env,
                           timeout=120, check=False)
    assert plain.returncode == 0 and plain.stderr == b""
