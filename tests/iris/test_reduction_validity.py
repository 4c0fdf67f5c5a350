"""Read validity scenarios (R-RED-6) and the stale/superseded markers."""

from __future__ import annotations

from iris.reduction.facts import FileChange, ToolFacts
from iris.reduction.validity import ReadEvent, analyze_read_validity, same_file
from reduction_builders import Conv, decision, sent_text

PATH = "/repo/src/app.py"


def numbered(first: int, last: int) -> str:
    return "\n".join(f"{i:6}→value_{i} = compute({i})" for i in range(first, last + 1))


def read(c: Conv, first: int = 1, last: int = 100, path: str = PATH, **args) -> str:
    a = {"file_path": path, **args}
    return c.call("Read", a, numbered(first, last))


def patch(start: int, count: int, added: int, removed: int, path: str = "src/app.py") -> str:
    body = [f"@@ -{start},{count} +{start},{count + added - removed} @@"]
    body += [" ctx"] + ["+new"] * added + ["-old"] * removed
    return f"--- a/{path}\n+++ b/{path}\n" + "\n".join(body)


def test_r_red_6_current_read_never_reduced_at_any_age():
    """R-RED-6: a read that is still current is kept, however old and large."""
    c = Conv()
    cid = read(c, 1, 400)
    c.turns(30)
    d = decision(c.reduce(), cid)
    assert (d.action, d.rule) == ("kept", "current_read") and d.bytes > 3000


def test_r_red_6_overlapping_edit_makes_read_stale_at_age_one():
    """R-RED-6: a later overlapping edit marks the read truncated=stale at any age."""
    c = Conv()
    cid = read(c, 1, 100)
    c.call("apply_patch", {"patch": patch(40, 3, 1, 0)}, "Success. Updated the following files:\nM src/app.py")
    res = c.reduce()
    d = decision(res, cid)
    assert (d.action, d.rule) == ("stale", "read_validity")
    out = sent_text(res, cid)
    assert out.startswith("READ_RESULT lines=1-100 total=? truncated=stale")
    assert out.endswith("Re-read before relying on it.]")
    assert d.artifact_path is None  # stale-by-edit is recoverable: not archived (R-RED-7)


def test_r_red_6_edit_below_without_shift_keeps_read_current():
    """R-RED-6: an edit outside the displayed range and not above it leaves the read current."""
    c = Conv()
    cid = read(c, 1, 100)
    c.call("apply_patch", {"patch": patch(300, 3, 2, 0)}, "Success.")
    assert decision(c.reduce(), cid).rule == "current_read"


def test_r_red_6_line_shift_above_read_is_stale():
    """R-RED-6: lines inserted above a partial read shift it: stale."""
    c = Conv()
    cid = read(c, 200, 260, offset=200, limit=61)
    c.call("apply_patch", {"patch": patch(10, 2, 3, 0)}, "Success.")
    assert decision(c.reduce(), cid).action == "stale"


def test_r_red_6_unknown_range_edit_invalidates_all_reads_of_file():
    """R-RED-6: an edit whose range is unknown invalidates every read of that file."""
    c = Conv()
    a = read(c, 1, 50, limit=50)
    b = read(c, 400, 450, offset=400, limit=51)
    other = read(c, 1, 50, path="/repo/src/other.py")
    c.call("Edit", {"file_path": PATH, "old_string": "not shown\nanywhere", "new_string": "x"}, "The file was updated.")
    res = c.reduce()
    assert decision(res, a).action == decision(res, b).action == "stale"
    assert decision(res, other).rule == "current_read"


def test_r_red_6_claude_edit_located_in_read():
    """R-RED-6: an ``old_string`` found in a read's lines gives the edit range: overlap → stale, while a
    partial read that does not show it (and no lines move) stays current."""
    c = Conv()
    top = read(c, 1, 50, limit=50)
    bottom = read(c, 100, 150, offset=100, limit=51)
    c.call("Edit", {"file_path": PATH, "old_string": "value_20 = compute(20)", "new_string": "value_20 = 0"},
           "The file /repo/src/app.py has been updated.")
    res = c.reduce()
    assert decision(res, top).action == "stale"
    assert decision(res, bottom).rule == "current_read"


def test_r_red_6_whole_file_write_is_stale_replaced_and_archived(tmp_path):
    """R-RED-6/7: a whole-file write marks reads stale ("replaced"); that version exists nowhere else, so
    it is archived."""
    c = Conv()
    cid = read(c, 1, 100)
    c.call("Write", {"file_path": PATH, "content": "new"}, "File created successfully at: /repo/src/app.py")
    res = c.reduce(work_dir=tmp_path)
    d = decision(res, cid)
    assert d.action == "stale" and "File replaced after this read" in sent_text(res, cid)
    assert d.artifact_path and "reduced-artifacts" in d.artifact_path


def test_r_red_6_superseded_by_later_covering_read():
    """R-RED-6: a read covered by a later larger read is truncated=superseded."""
    c = Conv()
    small = read(c, 10, 40, offset=10, limit=31)
    big = read(c, 1, 100)
    res = c.reduce()
    assert decision(res, small).action == "superseded"
    assert "A newer read of this range appears later" in sent_text(res, small)
    assert decision(res, big).rule == "current_read"
    assert decision(res, small).artifact_path is None


def test_r_red_6_two_reads_then_an_edit():
    """R-RED-6: two reads, then an edit overlapping only the second: the first is superseded, the second
    stale."""
    c = Conv()
    first = read(c, 1, 50, limit=50)
    second = read(c, 1, 300, limit=300)
    c.call("apply_patch", {"patch": patch(250, 2, 0, 0)}, "Success.")
    res = c.reduce()
    assert decision(res, first).action == "superseded"
    assert decision(res, second).action == "stale"


def test_r_red_6_failed_edit_does_not_invalidate():
    """R-RED-6: only successful edits invalidate reads."""
    c = Conv()
    cid = read(c, 1, 100)
    c.call("apply_patch", {"patch": patch(40, 3, 1, 0)}, "Error: patch did not apply", is_error=True)
    assert decision(c.reduce(), cid).rule == "current_read"


def test_r_red_6_path_matching_on_whole_segments():
    """R-RED-6: whole-segment suffix matching; distinct absolute roots never match."""
    assert same_file("/repo/src/app.py", "src/app.py")
    assert not same_file("/repo/src/app.py", "rc/app.py")
    assert not same_file("/repo/src/app.py", "/other/src/app.py")
    facts = ToolFacts(kind="read", path="/a/x.py", read_range=(1, 10))
    edit = ToolFacts(kind="edit", path="/b/x.py", changes=(FileChange(path="/b/x.py", start=1, end=2),))
    assert analyze_read_validity([ReadEvent("r", facts, ""), ReadEvent("e", edit, "")]) == {}
