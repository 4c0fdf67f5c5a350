"""Records that do not depend on the machine the replay runs on (R-PREP-6).

Seed 000 ("观察真实准备过程"): the preparation records are facts of the session and its
configuration; SPEC R-PREP-6: same session + configuration + template snapshot + summariser =
identical records. The engine names its files only under the logical root ``<session_dir>``.
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path

import pytest
from iris.config import default_config, parse_config
from iris.preparation.records import Reduced, Trimmed
from iris.reduction.artifacts import LOGICAL_ROOT, ArtifactWriter
from iris.replay import ReplayEnvironment, replay
from iris.session import ToolResultBlock

from workbench.importers.native import load_native

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("regenerate_golden",
                                               ROOT / "scripts" / "regenerate_golden.py")
assert _spec is not None and _spec.loader is not None
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)

LONG = ROOT / "sample_sessions" / "long_session.jsonl"
UNUSUAL = "a-very-long-unusual-temporary-directory-name-for-testing-with spaces-and-ünïcode"


@pytest.fixture
def unusual_tmpdir(tmp_path, monkeypatch):
    """``tempfile.gettempdir()`` answers a long, unusual directory for the whole test."""
    where = tmp_path / UNUSUAL / "x" / "y"
    where.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    assert tempfile.gettempdir() == str(where)
    return where


@pytest.mark.parametrize("stem,path,overrides", golden.golden_cases(),
                         ids=[c[0] for c in golden.golden_cases()])
def test_r_prep_6_replay_under_unusual_tmpdir_matches_goldens(unusual_tmpdir, stem, path, overrides):
    """R-PREP-6: a replay under a long unusual temporary directory gives the golden records."""
    expected = (golden.GOLDEN / f"{stem}.json").read_text(encoding="utf-8")
    actual = golden.golden_text(path, overrides)
    assert str(unusual_tmpdir) not in actual
    assert actual == expected, f"{stem}: records depend on the temporary directory"


def _trim_stages(result):
    for p in result.preparations:
        for stage in p.stages:
            if stage.name == "trim_old_bodies" and stage.status == "entered":
                yield p, stage


def test_r_prep_6_decision_drop_equals_stage_drop(unusual_tmpdir):
    """R-PREP-6/R-PREP-4: the first reduction's decision drop is the stage's drop (both counted on
    the same text, which names the logical root, not the disk path)."""
    result = replay(load_native(LONG), default_config())
    for p, stage in _trim_stages(result):
        reduced = [d for d in stage.decisions if isinstance(d, (Trimmed, Reduced))]
        if reduced:
            drop = stage.before_input_tokens - stage.after_input_tokens
            assert drop == sum(d.tokens_before - d.tokens_after for d in reduced), p.step_index
            assert all(d.artifact_path.startswith(f"{LOGICAL_ROOT}/reduced-artifacts/")
                       for d in reduced if d.artifact_path)
            return
    pytest.fail("the long sample has no reduced result")


def test_r_prep_6_two_session_dirs_same_records_and_files_resolve(tmp_path):
    """R-PREP-6, R-RED-7: two replays into different directories give identical records; the
    logical paths they name resolve, through the host-side writer, to the lossless originals."""
    session = load_native(LONG)
    config = parse_config({"compaction": {"input_budget_tokens": 96000}})
    a_dir, b_dir = tmp_path / "a", tmp_path / UNUSUAL / "b"
    a_dir.mkdir()
    b_dir.mkdir(parents=True)
    a = replay(session, config, environment=ReplayEnvironment(work_dir=a_dir))
    b = replay(session, config, environment=ReplayEnvironment(work_dir=b_dir))
    assert json.dumps(a.model_dump(mode="json")) == json.dumps(b.model_dump(mode="json"))
    paths = {d.artifact_path for _, s in _trim_stages(a) for d in s.decisions
             if isinstance(d, (Trimmed, Reduced)) and d.artifact_path}
    assert paths and all(p.startswith(f"{LOGICAL_ROOT}/") for p in paths)
    originals = {b.text for m in session.messages for b in m.content if isinstance(b, ToolResultBlock)}
    for logical in paths:
        for root in (a_dir, b_dir):
            on_disk = ArtifactWriter(root).resolve(logical)
            assert on_disk.is_relative_to(root.resolve())
            assert on_disk.read_text(encoding="utf-8") in originals
    assert not any(str(a_dir) in json.dumps(r.model_dump(mode="json")) for r in a.requests.values())


def test_r_prep_6_writer_refuses_paths_outside_logical_root(tmp_path):
    """The host-side writer maps only ``<session_dir>/…`` and never resolves outside its root."""
    writer = ArtifactWriter(tmp_path)
    logical = writer.write("reduced-artifacts", "Bash", "body")
    assert logical.startswith("<session_dir>/reduced-artifacts/bash-")
    assert writer.resolve(logical).read_text() == "body"
    from iris.errors import StorageError
    with pytest.raises(StorageError):
        writer.resolve("/etc/passwd")
    with pytest.raises(StorageError):
        writer.resolve("<session_dir>/../../etc/passwd")


def test_r_prep_6_raw_read_back_maps_logical_root_to_artifact_root(tmp_path):
    """R-POL-4, R-PREP-6: ``representation="raw"`` of a result externalised under the logical
    root reads the file from the port's artifact root."""
    from iris.context.access import ContextAccessPort, ContextReadParams
    from iris.reduction import externalize_large_result
    from iris.session import Message, ToolResultBlock

    big = "".join(f"row {i}: {'x' * 40}\n" for i in range(2000))
    block, logical = externalize_large_result(ToolResultBlock(call_id="c", text=big),
                                              work_dir=tmp_path, tool_name="Bash")
    assert logical and logical.startswith(f"{LOGICAL_ROOT}/tool-outputs/")
    port = ContextAccessPort({"s": [Message(role="tool", content=(block,))]}, artifact_root=tmp_path)
    page = port.read("s", ContextReadParams(ref="result:0:0", representation="raw", limit=8000))
    assert page.content == big[:8000] and page.has_more
