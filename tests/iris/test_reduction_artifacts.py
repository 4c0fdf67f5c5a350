"""Recovery archives (R-RED-7) and the inline budget (R-RED-8)."""

from __future__ import annotations

from iris.reduction import INLINE_BUDGET_BYTES, externalize_large_result, safe_tool_name
from iris.reduction.artifacts import ArtifactWriter, artifact_path
from iris.session import ToolResultBlock
from reduction_builders import Conv, decision, lines, padding, sent_text


def test_r_red_7_archive_holds_exact_bytes_and_marker_names_it(tmp_path):
    """R-RED-7: a lossy summary of >2000 bytes archives the exact original and says where."""
    text = lines(200, "résumé line {i}\twith tab") + "\r\nlast\n"
    c = Conv()
    cid = c.call("Bash", {"command": "make"}, text)
    c.turns(2)
    res = c.reduce(work_dir=tmp_path)
    d = decision(res, cid)
    assert d.artifact_path is not None
    assert d.artifact_path.startswith("<session_dir>/reduced-artifacts/")  # logical (R-PREP-6)
    path = ArtifactWriter(tmp_path).resolve(d.artifact_path)
    assert path.parent == (tmp_path / "reduced-artifacts").resolve()
    assert path.read_bytes() == text.encode()
    assert path.name.startswith("bash-") and len(path.stem.split("-")[1]) == 12
    assert f"Full output saved to {d.artifact_path}" in sent_text(res, cid)


def test_r_red_7_content_addressed_one_file_for_same_content(tmp_path):
    """R-RED-7: the same content reduced twice (different calls) is stored once."""
    text = lines(300)
    c = Conv()
    a = c.call("Bash", {"command": "make a"}, text)
    b = c.call("Bash", {"command": "make b"}, text)
    c.turns(2)
    res = c.reduce(work_dir=tmp_path)
    assert decision(res, a).artifact_path == decision(res, b).artifact_path
    assert len(list((tmp_path / "reduced-artifacts").iterdir())) == 1


def test_r_red_7_small_outputs_and_exempt_summaries_not_archived(tmp_path):
    """R-RED-7: ≤2000 bytes, confirmations and superseded reads are not archived."""
    c = Conv()
    conf = c.call("Write", {"file_path": "/x/new.txt", "content": "a"}, "File created successfully at: /x/new.txt")
    old = c.call("Read", {"file_path": "/x/a.py", "offset": 1, "limit": 200},
                 "\n".join(f"{i:6}→code line {i} with some content" for i in range(1, 201)))
    c.call("Read", {"file_path": "/x/a.py"}, "\n".join(f"{i:6}→code line {i} with some content" for i in range(1, 400)))
    c.turns(3)
    res = c.reduce(work_dir=tmp_path)
    assert decision(res, conf).action == "reduced" and decision(res, conf).artifact_path is None
    assert decision(res, old).action == "superseded" and decision(res, old).artifact_path is None
    assert not (tmp_path / "reduced-artifacts").exists()


def test_r_red_7_paths_never_escape_session_dir(tmp_path):
    """R-RED-7: hostile tool names cannot place files outside the session directory."""
    for name in ("../../etc/passwd", "/abs/tool", "..", "a\\..\\b", "名前/../x", ""):
        p = artifact_path(tmp_path, "reduced-artifacts", name, "content")
        assert p.parent == (tmp_path / "reduced-artifacts").resolve()
        assert "/" not in safe_tool_name(name) and not safe_tool_name(name).startswith(".")
    c = padding(6)
    cid = c.call("../../evil", {}, lines(300))
    c.turns(3)
    c.reduce(work_dir=tmp_path / "s")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and all(p.is_relative_to(tmp_path / "s" / "reduced-artifacts") for p in files), files
    assert cid


def test_r_red_8_inline_budget_preview_and_reference(tmp_path):
    """R-RED-8: a result over 50 KiB is saved to tool-outputs/ and replaced by a bounded preview."""
    big = lines(3000, "row {i}: " + "x" * 30)
    assert len(big.encode()) > INLINE_BUDGET_BYTES
    block = ToolResultBlock(call_id="c", text=big)
    new, logical = externalize_large_result(block, work_dir=tmp_path, tool_name="Bash")
    assert logical is not None and logical.startswith("<session_dir>/tool-outputs/bash-")
    path = ArtifactWriter(tmp_path).resolve(logical)
    assert path.parent == (tmp_path / "tool-outputs").resolve()
    assert path.read_bytes() == big.encode()
    assert new.artifact_path == logical and len(new.text.encode()) < 9 * 1024
    assert new.text.startswith("row 0: ") and f"Full output saved to {logical}" in new.text
    small = ToolResultBlock(call_id="c", text="tiny")
    assert externalize_large_result(small, work_dir=tmp_path, tool_name="Bash") == (small, None)


def test_r_red_8_engine_externalizes_on_first_entry_then_reduces_with_that_path(tmp_path):
    """R-RED-8: the engine externalises at first entry; a later summary names the tool-outputs file
    instead of writing a second archive."""
    big = lines(3000, "row {i}: " + "x" * 30)
    c = Conv()
    cid = c.call("Bash", {"command": "dump"}, big)
    first = c.reduce(work_dir=tmp_path)
    d = decision(first, cid)
    assert (d.action, d.rule) == ("externalized", "inline_budget") and d.artifact_path is not None
    assert "tool-outputs" in d.artifact_path
    c.turns(2)
    later = c.reduce(work_dir=tmp_path, state=first.state)
    d2 = decision(later, cid)
    assert d2.action == "reduced" and d2.artifact_path == d.artifact_path
    assert not (tmp_path / "reduced-artifacts").exists()
