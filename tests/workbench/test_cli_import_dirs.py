"""``workbench import`` of directories (recursive, with a summary line) and of gzip-compressed
files (R-UI-9, R-SES-4, R-SES-5)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from workbench.cli import main
from workbench.importers.files import session_files
from workbench.storage.store import open_store

FIX = Path(__file__).parents[1] / "fixtures" / "importers"


def _tree(root: Path) -> Path:
    """A folder of sessions: nested, gzip-compressed, hidden, and files that are not sessions."""
    (root / "claude" / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    shutil.copy(FIX / "claude_compact.jsonl", root / "claude" / "a.jsonl")
    (root / "claude" / "sub" / "b.jsonl.gz").write_bytes(gzip.compress((FIX / "codex_basic.jsonl").read_bytes()))
    shutil.copy(FIX / "swe_agent_1x.traj", root / "run.traj")
    shutil.copy(FIX / "otel_otlp.json", root / "trace.json")
    (root / "notes.md").write_text("not a session")
    (root / ".git" / "x.json").write_text("{}")
    (root / "claude" / ".hidden.jsonl").write_text("{}")
    return root


def test_r_ui_9_session_files_are_found_recursively(tmp_path):
    root = _tree(tmp_path / "sessions")
    assert [p.relative_to(root).as_posix() for p in session_files(root)] == [
        "claude/a.jsonl", "claude/sub/b.jsonl.gz", "run.traj", "trace.json"]


def test_r_ui_9_import_directory_prints_each_file_and_a_summary(tmp_path, capsys):
    """R-UI-9: every session file below the folder is imported (formats detected, .gz read) and
    a summary line counts the outcomes; a second run finds them already stored."""
    root = _tree(tmp_path / "sessions")
    broken = root / "claude" / "broken.jsonl"
    broken.write_text('{"type": "header", "session_id": "s"}\n{"type": "message", "role": "robot"}\n')
    assert main(["import", str(root)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert sorted(line.split(" (")[1].split(",")[0] for line in lines[:-1]) == [
        "claude_code", "codex", "otel", "swe_agent"]
    assert lines[-1] == "5 files: 4 imported, 0 already stored, 1 failed"
    assert f"error: {broken}:2 [role]" in captured.err and "Traceback" not in captured.err
    assert f"  note {root / 'run.traj'}: [info.model_stats] SWE-agent trajectories record no " \
           "per-request usage" in captured.err
    broken.unlink()
    assert main(["import", str(root)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "4 files: 0 imported, 4 already stored, 0 failed"
    with open_store() as store:
        assert len(store.list_sessions()) == 4


def test_r_ses_5_empty_directory_is_an_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["import", str(tmp_path / "empty")]) == 1
    assert "no session files" in capsys.readouterr().err


def test_r_ses_4_gz_and_plain_copy_are_one_session(tmp_path, capsys):
    """The content hash is the uncompressed bytes': a .gz of an imported file is already stored."""
    plain = tmp_path / "a.jsonl"
    shutil.copy(FIX / "codex_basic.jsonl", plain)
    packed = tmp_path / "a.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert main(["import", str(plain), str(packed)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("imported: ") and out[1].startswith(f"already stored: {packed}")


def test_r_ui_9_app_import_paths_expand_folders(tmp_path):
    """The Sessions page's "From a path" import takes a folder like the CLI (one report per file)."""
    from workbench.services.imports import import_paths

    root = _tree(tmp_path / "sessions")
    with open_store() as store:
        reports = import_paths(store, [str(root)])
    assert [Path(r.path).name for r in reports] == ["a.jsonl", "b.jsonl.gz", "run.traj", "trace.json"]
    assert all(r.outcome is not None and r.outcome.created for r in reports)
