"""Command-line habits with the real command (subprocesses): ``-`` reads standard input for
``import``, ``inspect``, ``replay`` and ``--config``; ``inspect`` explains its options; the store's
error for a folder that cannot be made says so (R-UI-9)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUGFIX = ROOT / "sample_sessions" / "bugfix.jsonl"
COST_FIRST = ROOT / "workbench" / "presets" / "cost-first.yaml"

pytestmark = pytest.mark.slow


def _cli(*args: str, stdin: bytes | None = b"", home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    env.pop("WORKBENCH_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], input=stdin,
                          capture_output=True, env=env, timeout=180, check=False)


def test_r_ui_9_import_reads_standard_input(tmp_path):
    """``cat FILE | workbench import -`` stores the session (same id and content hash as the
    file), and the line names ``<stdin>``, not a temporary file."""
    done = _cli("import", "-", stdin=BUGFIX.read_bytes(), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith("imported: <stdin> -> bugfix-tally-march (native, 82 messages")
    again = _cli("import", str(BUGFIX), home=tmp_path)
    assert again.stdout.decode().startswith("already stored:")  # the same content
    assert not list(Path("/tmp").glob("workbench-stdin-*/stdin"))  # the copy is removed


def test_r_ui_9_inspect_reads_standard_input_and_names_it_in_errors(tmp_path):
    """``inspect -`` gives the file's counts; a bad transcript's error names ``<stdin>`` and its
    line; nothing piped (empty input) says the input is empty."""
    piped = _cli("inspect", "-", stdin=BUGFIX.read_bytes(), home=tmp_path)
    direct = _cli("inspect", str(BUGFIX), home=tmp_path)
    counts, expected = json.loads(piped.stdout), json.loads(direct.stdout)
    assert counts.pop("path") == "<stdin>" and expected.pop("path") == str(BUGFIX)
    assert counts == expected
    bad = _cli("inspect", "-", stdin=b"not a transcript\n", home=tmp_path)
    assert bad.returncode == 1
    assert bad.stderr.decode().startswith("error: <stdin>:1: unknown session format")
    empty = _cli("inspect", "-", stdin=b"", home=tmp_path)
    assert empty.returncode == 1 and "error: <stdin>: empty file" in empty.stderr.decode()


def test_r_ui_9_replay_reads_the_transcript_or_the_configuration_from_standard_input(tmp_path):
    """``replay -`` replays the piped transcript like the file; ``--config -`` reads the YAML
    (the same result as the preset file); a bad piped YAML names ``<stdin>`` and the line; ``-``
    twice in one command is refused."""
    out = [tmp_path / f"{n}.jsonl" for n in range(3)]
    by_file = _cli("replay", str(BUGFIX), "--config", str(COST_FIRST), "--json", str(out[0]), home=tmp_path)
    piped = _cli("replay", "-", "--config", str(COST_FIRST), "--json", str(out[1]),
                 stdin=BUGFIX.read_bytes(), home=tmp_path)
    config = _cli("replay", str(BUGFIX), "--config", "-", "--json", str(out[2]),
                  stdin=COST_FIRST.read_bytes(), home=tmp_path)
    for done in (by_file, piped, config):
        assert done.returncode == 0, done.stderr
    steps = [[json.loads(line)["final_input_tokens"] for line in p.read_text().splitlines()] for p in out]
    assert steps[0] == steps[1] == steps[2] and steps[0]
    bad = _cli("replay", str(BUGFIX), "--config", "-", stdin=b"budget: {bad\n", home=tmp_path)
    assert bad.returncode == 1 and bad.stderr.decode().startswith("error: <stdin>:")
    twice = _cli("replay", "-", "--config", "-", stdin=COST_FIRST.read_bytes(), home=tmp_path)
    assert twice.returncode == 1
    assert twice.stderr.decode() == "error: standard input ('-') can be read only once per command\n"


def test_r_ui_9_inspect_options_have_help_texts(tmp_path):
    """Every option of ``inspect --help`` says what it does."""
    text = _cli("inspect", "--help", home=tmp_path).stdout.decode()
    for option in ("PATH", "--json", "--lenient", "--format"):
        line = next(line for line in text.splitlines() if line.strip().startswith(option))
        described = line.strip()[len(option):].split(maxsplit=1)
        assert described and len(described[-1]) > 10, f"{option} has no help text: {line!r}"
    assert "standard input" in text and "(default: detect)" in text


def test_r_ui_9_store_folder_errors_say_what_is_wrong_with_the_folder(tmp_path):
    """A store folder that cannot be created says the folder is missing; a file in the way says
    it is a file; a folder where the store file should be says so; none claims a damaged store."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    cases = {blocker / "home": f"{blocker / 'home'}: the store's folder cannot be made: {blocker} is a "
                               "file, not a folder",
             tmp_path / "store-is-dir": "the store's file is a folder"}
    (tmp_path / "store-is-dir" / "workbench.db").mkdir(parents=True)
    if Path("/sys/fs").is_dir():  # sysfs: no folder can be made there, not even by root
        cases[Path("/sys/no-such-folder")] = ("/sys/no-such-folder: the store's folder is missing and "
                                              "could not be created")
    for home, expected in cases.items():
        done = _cli("sessions", home=home)
        err = done.stderr.decode()
        assert done.returncode == 1 and expected in err, err
        assert "not a SQLite database" not in err and err.count("\n") == 1
