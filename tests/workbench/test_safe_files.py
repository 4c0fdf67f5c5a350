"""Files written into a workspace or an artifact folder never follow a symbolic link (R-PRM-1,
R-CMP-7, R-RED-7, R-RED-8): saved templates, archives ``history-N.md``, reduction artifacts, HTML
reports and exported JSONL. A link planted at the temporary file's name, at the target, or at a
folder on the way is refused with an error naming the path, and the file outside is unchanged."""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

import pytest
from iris.compaction import write_archive
from iris.errors import StorageError
from iris.prompts import PromptSnapshot, PromptSource
from iris.reduction.artifacts import REDUCED_DIR, TOOL_OUTPUTS_DIR, write_artifact
from iris.safe_files import SymlinkRefusedError, ensure_private_dir, write_file
from iris.session import Message, Session, SessionHeader, TextBlock
from iris.work_dir import claim_work_dir
from streamlit.testing.v1 import AppTest

from workbench.importers.native import dump_session
from workbench.report import write_report

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES_PAGE = str(ROOT / "pages" / "templates.py")
ORIGINAL = "export PATH=/usr/bin\n"
MESSAGES = [Message(role="user", content=(TextBlock(text="hello"),))]


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file outside the workspace standing in for a shell start-up file."""
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir()
    victim.write_text(ORIGINAL)
    return victim


@pytest.fixture
def workspace(tmp_path) -> Path:
    root = tmp_path / "workspace"
    (root / ".iris" / "prompts").mkdir(parents=True)
    return root


def _refused(excinfo, path: Path, what: str) -> None:
    message = str(excinfo.value)
    assert str(path) in message and "symbolic link" in message and what in message
    assert isinstance(excinfo.value, StorageError)


def _no_temp_left(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------------- prompt templates (the report)

def test_r_prm_1_save_ignores_a_planted_temporary_file_link(workspace, outside):
    """The reported attack: ``compaction.j2.tmp`` links to a start-up file; Save must not write it."""
    planted = workspace / ".iris" / "prompts" / "compaction.j2.tmp"
    planted.symlink_to(outside)
    path = PromptSource(workspace).save("compaction", "## Goal\nat most {{ summary_max_tokens }} tokens\n")
    assert outside.read_text() == ORIGINAL
    assert path.read_text() == "## Goal\nat most {{ summary_max_tokens }} tokens\n" and not path.is_symlink()
    assert planted.is_symlink() and os.readlink(planted) == str(outside)  # left alone


def test_r_prm_1_save_refuses_a_predicted_temporary_name_that_is_a_link(workspace, outside,
                                                                        monkeypatch):
    monkeypatch.setattr(secrets, "token_hex", lambda n: "0" * (2 * n))
    planted = workspace / ".iris" / "prompts" / f".compaction.j2.{'0' * 16}.tmp"
    planted.symlink_to(outside)
    with pytest.raises(SymlinkRefusedError) as excinfo:
        PromptSource(workspace).save("compaction", "edited")
    _refused(excinfo, planted, "temporary file")
    assert outside.read_text() == ORIGINAL
    assert not (workspace / ".iris" / "prompts" / "compaction.j2").exists()


def test_r_prm_1_save_refuses_a_target_that_is_a_link(workspace, outside):
    target = workspace / ".iris" / "prompts" / "compaction.j2"
    target.symlink_to(outside)
    with pytest.raises(SymlinkRefusedError) as excinfo:
        PromptSource(workspace).save("compaction", "edited")
    _refused(excinfo, target, "target file")
    assert outside.read_text() == ORIGINAL and target.is_symlink()
    _no_temp_left(target.parent)


@pytest.mark.parametrize("linked", [".iris", ".iris/prompts"])
def test_r_prm_1_save_refuses_a_folder_on_the_way_that_is_a_link(tmp_path, outside, linked):
    workspace = tmp_path / "workspace"
    (workspace / linked).parent.mkdir(parents=True, exist_ok=True)
    elsewhere = outside.parent / "elsewhere"
    (elsewhere / "prompts").mkdir(parents=True)
    (workspace / linked).symlink_to(elsewhere if linked == ".iris" else elsewhere / "prompts")
    before = sorted(p.name for p in elsewhere.rglob("*"))
    with pytest.raises(SymlinkRefusedError) as excinfo:
        PromptSource(workspace).save("compaction", "edited")
    _refused(excinfo, workspace / linked, "folder")
    with pytest.raises(SymlinkRefusedError):
        PromptSource.initialize(workspace)
    assert sorted(p.name for p in elsewhere.rglob("*")) == before
    assert outside.read_text() == ORIGINAL


def test_r_prm_1_normal_save_is_atomic_and_leaves_no_temporary_file(workspace):
    """Save replaces the file (a reader holding the old file keeps the whole old text) and a failed
    save leaves the saved template as it was."""
    source = PromptSource(workspace)
    path = source.save("compaction", "first version")
    with path.open(encoding="utf-8") as reader:
        source.save("compaction", "second version")
        assert reader.read() == "first version"  # the old file was replaced, not truncated
    assert path.read_text() == "second version"
    assert source.snapshot().template_source("compaction") == "second version"
    _no_temp_left(path.parent)


def test_r_prm_1_failed_save_keeps_the_old_template(workspace, monkeypatch):
    source = PromptSource(workspace)
    path = source.save("compaction", "kept")

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        source.save("compaction", "lost")
    assert path.read_text() == "kept"
    _no_temp_left(path.parent)


def test_r_prm_1_initialize_writes_missing_templates_and_keeps_existing(workspace):
    (workspace / ".iris" / "prompts" / "compaction.j2").write_text("mine")
    source = PromptSource.initialize(workspace)
    assert (source.directory / "compaction.j2").read_text() == "mine"
    assert set(source.saved_ids()) == set(PromptSnapshot.defaults().sources)
    _no_temp_left(source.directory)


def test_r_prm_3_templates_page_save_shows_the_refusal(workspace, outside):
    """The Templates page's Save shows the refusal as an error, never a traceback."""
    target = workspace / ".iris" / "prompts" / "goal_context.j2"
    target.symlink_to(outside)
    at = AppTest.from_file(TEMPLATES_PAGE, default_timeout=30).run()
    at.text_input(key="tpl_workspace").input(str(workspace)).run()
    at.selectbox(key="tpl_id").select("goal_context").run()
    at.text_area(key="tpl_src_goal_context").input("GOAL: {{ objective }}").run()
    at.button(key="tpl_save").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("Not saved" in e and "symbolic link" in e and str(target) in e for e in errors)
    assert outside.read_text() == ORIGINAL


# ------------------------------------------------------------------- archives and artifacts

def test_r_cmp_7_archive_refuses_a_linked_target_and_writes_normally(tmp_path, outside):
    work_dir = tmp_path / "session"
    work_dir.mkdir()
    (work_dir / "history-1.md").symlink_to(outside)
    with pytest.raises(SymlinkRefusedError) as excinfo:
        write_archive(work_dir, MESSAGES, number=1)
    _refused(excinfo, work_dir / "history-1.md", "target file")
    assert outside.read_text() == ORIGINAL
    path = write_archive(work_dir, MESSAGES, number=2)
    assert "hello" in path.read_text() and not path.is_symlink()
    with pytest.raises(StorageError, match="already exists"):
        write_archive(work_dir, MESSAGES, number=2)
    _no_temp_left(work_dir)


@pytest.mark.parametrize("kind", [TOOL_OUTPUTS_DIR, REDUCED_DIR])
def test_r_red_8_artifact_refuses_a_linked_target(tmp_path, outside, kind):
    work_dir = tmp_path / "session"
    path = write_artifact(work_dir, kind, "Bash", "original output")  # the normal write
    assert path.read_bytes() == b"original output"
    name = write_artifact(tmp_path / "probe", kind, "Bash", "other output").name
    planted = work_dir / kind / name
    planted.symlink_to(outside)
    with pytest.raises(SymlinkRefusedError) as excinfo:
        write_artifact(work_dir, kind, "Bash", "other output")
    _refused(excinfo, planted, "target file")
    assert outside.read_text() == ORIGINAL


@pytest.mark.parametrize("kind", [TOOL_OUTPUTS_DIR, REDUCED_DIR])
def test_r_red_7_artifact_refuses_a_linked_folder(tmp_path, outside, kind):
    work_dir = tmp_path / "session"
    work_dir.mkdir()
    (work_dir / kind).symlink_to(outside.parent)
    with pytest.raises(SymlinkRefusedError) as excinfo:
        write_artifact(work_dir, kind, "Bash", "x" * 100)
    _refused(excinfo, work_dir / kind, "folder")
    assert sorted(p.name for p in outside.parent.iterdir()) == [".bashrc"]


def test_replay_work_dir_never_uses_a_link_planted_in_the_temporary_folder(tmp_path, monkeypatch):
    """A link planted at the old fixed name of the replay folder is neither followed nor needed:
    each run makes its own random private folder."""
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("IRIS_CACHE_DIR", "")
    (tmp_path / "elsewhere").mkdir()
    private = tmp_path / f"iris-replay-{os.getuid()}"
    private.symlink_to(tmp_path / "elsewhere")
    work = claim_work_dir()
    assert work.parent == tmp_path and work.is_dir() and work.stat().st_mode & 0o777 == 0o700
    assert not list((tmp_path / "elsewhere").iterdir())
    assert ensure_private_dir(work) == work


# ------------------------------------------------------------------- reports and exports

def test_report_and_export_refuse_a_linked_target(tmp_path, outside):
    session = ROOT / "sample_sessions" / "bugfix.jsonl"
    report, export = tmp_path / "out" / "report.html", tmp_path / "out" / "session.jsonl"
    written = write_report(session, report)
    assert written is not None and "<html" in written.read_text().lower()
    one = Session(header=SessionHeader(session_id="s1"), messages=tuple(MESSAGES))
    assert dump_session(one, export).read_text().count("\n") >= 2
    for target in (report, export):
        target.unlink()
        target.symlink_to(outside)
    with pytest.raises(SymlinkRefusedError) as excinfo:
        write_report(session, report)
    _refused(excinfo, report, "target file")
    with pytest.raises(SymlinkRefusedError):
        dump_session(one, export)
    assert outside.read_text() == ORIGINAL


def test_write_file_refuses_paths_outside_root_and_writes_bytes_exactly(tmp_path):
    with pytest.raises(StorageError, match="not inside"):
        write_file(tmp_path / "a" / ".." / ".." / "x.txt", "x", root=tmp_path / "a")
    path = write_file(tmp_path / "deep" / "er" / "f.bin", b"\r\n\x00", root=tmp_path)
    assert path.read_bytes() == b"\r\n\x00"
    with pytest.raises(FileExistsError):
        write_file(path, b"other", root=tmp_path, overwrite=False)
    assert path.read_bytes() == b"\r\n\x00"
    _no_temp_left(path.parent)


def test_batch_output_refuses_linked_files_and_folders(tmp_path, outside):
    """The batch runner's output folder: a linked manifest or a linked table folder is refused."""
    from workbench.corpus.batch import run_batch

    sample = ROOT / "sample_sessions" / "unanswered.jsonl"
    out = tmp_path / "batch"
    out.mkdir()
    (out / "manifest.json").symlink_to(outside)
    with pytest.raises(SymlinkRefusedError) as excinfo:
        run_batch(["default"], [sample], out)
    _refused(excinfo, out / "manifest.json", "target file")
    assert outside.read_text() == ORIGINAL
    (out / "manifest.json").unlink()
    tables = out / "sessions"
    assert tables.is_dir()
    shutil.rmtree(tables)
    tables.symlink_to(outside.parent)
    with pytest.raises(SymlinkRefusedError):
        run_batch(["default"], [sample], out)
    assert sorted(p.name for p in outside.parent.iterdir()) == [".bashrc"]


def test_no_overwrite_without_hard_links_still_refuses_an_existing_file(tmp_path, monkeypatch):
    """On a file system without hard links, ``overwrite=False`` checks the name, then renames."""
    def no_links(*args, **kwargs):
        raise OSError(1, "Operation not permitted")
    monkeypatch.setattr(os, "link", no_links)
    path = write_file(tmp_path / "history-1.md", "first", root=tmp_path, overwrite=False)
    assert path.read_text() == "first"
    with pytest.raises(FileExistsError):
        write_file(path, "second", root=tmp_path, overwrite=False)
    assert path.read_text() == "first"
    _no_temp_left(tmp_path)
