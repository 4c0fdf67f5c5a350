"""The ``workbench`` command line (R-UI-9): import with per-file outcomes and clear errors (R-SES-5),
the session table, ``inspect --json``, and the exact Streamlit invocation of ``run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import build_parser, main, streamlit_command
from workbench.storage.store import open_store

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
ALL = [str(p) for p in sorted(SAMPLES.glob("*.jsonl"))]


def test_r_ui_9_import_reports_each_file_and_is_idempotent(capsys):
    assert main(["import", *ALL]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == ["imported"] * 3
    assert "bugfix-tally-march (native, 82 messages, 0 skipped lines)" in out[0]
    assert main(["import", *ALL]) == 0
    assert capsys.readouterr().out.count("already stored") == 3
    with open_store() as store:
        assert len(store.list_sessions()) == 3


def test_r_ui_9_quiet_import_prints_nothing_on_success(capsys):
    assert main(["import", "--quiet", ALL[0]]) == 0
    assert capsys.readouterr() == ("", "")


def test_r_ses_5_bad_file_is_one_clear_line_and_exit_1(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "header", "session_id": "s"}\n{"type": "message", "role": "robot"}\n')
    missing = tmp_path / "missing.jsonl"
    assert main(["import", str(bad), str(missing), ALL[2]]) == 1
    captured = capsys.readouterr()
    assert f"error: {bad}:2 [role]" in captured.err
    assert f"error: {missing}: no such file" in captured.err
    assert "Traceback" not in captured.err
    assert "imported: " in captured.out  # the good file after the bad ones still went in
    with open_store() as store:
        assert [s.id for s in store.list_sessions()] == ["unanswered-coverage"]


def test_r_ses_5_lenient_import_lists_skipped_lines(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "header", "session_id": "s"}\n{"type": "message", "role": "robot"}\n'
                   '{"type": "message", "role": "user", "content": [{"type": "text", "text": "hi"}]}\n')
    assert main(["import", "--lenient", str(bad)]) == 0
    captured = capsys.readouterr()
    assert "1 messages, 1 skipped lines" in captured.out
    assert f"skipped {bad}:2: [role]" in captured.err


def test_r_ui_9_sessions_table(capsys):
    assert main(["sessions"]) == 0
    assert "No sessions stored" in capsys.readouterr().out
    main(["import", "--quiet", *ALL])
    capsys.readouterr()
    assert main(["sessions"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["ID", "TITLE", "FORMAT"]
    assert len(table) == 4
    bugfix = next(line for line in table if line.startswith("bugfix-tally-march"))
    assert " 82 " in bugfix and " 36 " in bugfix


def test_r_ui_9_inspect_json_prints_one_object(capsys):
    assert main(["inspect", str(SAMPLES / "unanswered.jsonl"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "native"
    assert (data["messages"], data["responses"], data["tool_calls"], data["unanswered_calls"]) == (5, 2, 2, 1)
    with open_store() as store:  # inspecting never stores
        assert store.list_sessions() == []


def test_r_ui_9_run_serves_headless_on_localhost_without_stats():
    cmd = streamlit_command(8765)
    assert cmd[1:4] == ["-m", "workbench.ui.serve", "run"] and cmd[4].endswith("workbench/ui/app.py")
    flags = dict(zip(cmd[5::2], cmd[6::2]))
    assert flags == {"--server.port": "8765", "--server.address": "127.0.0.1", "--server.headless": "true",
                     "--browser.gatherUsageStats": "false", "--server.fileWatcherType": "none",
                     "--client.toolbarMode": "minimal"}
    assert build_parser().parse_args(["run", "--port", "9001"]).port == 9001


@pytest.mark.slow  # starts a process
def test_r_ui_9_console_script_exit_code_and_no_traceback(tmp_path):
    """The installed entry point, in a real process."""
    env = {**os.environ, "WORKBENCH_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "workbench.cli", "import", str(tmp_path / "nope.jsonl")],
                          check=False, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: {tmp_path / 'nope.jsonl'}: no such file"


@pytest.mark.parametrize("argv", [[], ["frobnicate"]])
def test_r_ui_9_unknown_or_missing_command_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "usage: workbench" in capsys.readouterr().err


@pytest.mark.slow  # starts a process
def test_r_ui_9_the_server_process_imports_the_first_page_run_before_serving():
    """R-UI-9: ``workbench run``'s process (``python -m workbench.ui.serve``) has pandas, plotly and
    the app's modules imported before Streamlit starts, so the first visitor does not wait for
    them; then it is Streamlit's own command line (``--help`` shows it)."""
    import subprocess
    import sys

    script = ("import sys\n"
              "from workbench.ui import serve\n"
              "before = set(sys.modules)\n"
              "serve.preload()\n"
              "print(sorted(set(serve.PRELOADED) - set(sys.modules)), 'pandas' in before)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=180, check=True)
    assert done.stdout.strip() == "[] False", done.stdout + done.stderr
    help_text = subprocess.run([sys.executable, "-m", "workbench.ui.serve", "--help"],
                               capture_output=True, text=True, timeout=180, check=True).stdout
    assert "Usage: streamlit" in help_text
