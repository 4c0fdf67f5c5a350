"""Each category summary keeps its structure (R-RED-4)."""

from __future__ import annotations

import json

from iris.reduction import detect
from iris.reduction import summaries as S


def test_r_red_4_search_keeps_every_path_line_within_budget():
    """R-RED-4: grep summaries keep the query and every path:line while within the byte budget."""
    text = "\n".join(f"pkg/mod{i % 10}/file.go:{i}:\tfoo := bar({i})" for i in range(1, 60))
    out = S.search_summary("Grep", text, {"pattern": "bar\\(", "path": "pkg", "glob": "*.go"})
    assert out.splitlines()[0] == ('[Older grep results summarized for this request to save context; '
                                   'pattern="bar\\(" paths="pkg" includes="*.go"; matches=59]')
    for i in range(1, 60):
        line = next(ln for ln in out.splitlines() if ln.startswith(f"- pkg/mod{i % 10}/file.go:"))
        assert str(i) in line.split(":")[1].split("—")[0].replace(" ", "").split(",")
    assert "omitted" not in out


def test_r_red_4_search_over_budget_has_explicit_omission():
    """R-RED-4: past the byte budget the summary says how many files and matches were omitted."""
    text = "\n".join(f"very/long/directory/name/number_{i}/source_file_{i}.py:{i}:x" for i in range(300))
    out = S.search_summary("Grep", text, {"pattern": "x"})
    body = out.split("\n", 1)[1]
    assert len(body.encode()) <= S.SEARCH_BUDGET_BYTES + 80
    assert out.splitlines()[-1].startswith("- ... (+") and "matches omitted) ..." in out


def test_r_red_4_json_keeps_keys_and_counts():
    """R-RED-4: JSON objects keep top-level keys (nested as key sets / item counts); arrays their count."""
    doc = json.dumps({"name": "svc", "replicas": 3, "spec": {"a": 1, "b": 2}, "items": list(range(40))})
    out = S.json_summary("Bash", doc)
    assert "keys=4" in out.splitlines()[0]
    assert '- "name": "svc"' in out and '- "replicas": 3' in out
    assert '- "spec": {"a", "b"}' in out and '- "items": [40 items]' in out
    arr = S.json_summary("Bash", json.dumps([{"id": i} for i in range(7)]))
    assert "items=7" in arr and '{"id"}' in arr


def test_r_red_4_diff_keeps_files_hunks_and_counts():
    """R-RED-4: diffs keep files, hunks, change counts and bounded representative lines."""
    diff = "\n".join([  # noqa: FLY002 -- one diff line per item reads best
        "diff --git a/a.py b/a.py", "--- a/a.py", "+++ b/a.py", "@@ -1,3 +1,4 @@", " x", "+added one",
        "@@ -20,2 +21,2 @@", "-gone", "+back",
        "diff --git a/new.txt b/new.txt", "new file mode 100644", "--- /dev/null", "+++ b/new.txt",
        "@@ -0,0 +1,2 @@", "+l1", "+l2"])
    out = S.diff_summary("Bash", diff)
    assert "- a.py: hunks=2 changes=+2/-1; kind=modified; shown: +added one | -gone" in out
    assert "- new.txt: hunks=1 changes=+2/-0; kind=added" in out


def test_r_red_4_log_keeps_failure_and_warning_lines():
    """R-RED-4: build/test logs keep failure and warning lines with counts."""
    log = "\n".join([f"ok step {i}" for i in range(100)] + ["WARNING: deprecated api", "FAIL test_x",
                                                          "error: linker failed"])
    out = S.log_summary(log)
    assert "errors=1 warnings=1 failed=2" in out.splitlines()[0]
    assert "WARNING: deprecated api" in out and "FAIL test_x" in out and "error: linker failed" in out
    assert "more lines omitted" in out


def test_r_red_4_shell_success_keeps_size_signal_and_tail():
    """R-RED-4: shell summaries keep size, line count and the success signal lines; the tail is
    the fallback only when there is no signal line."""
    text = "\n".join([f"compiling {i}" for i in range(50)] + ["Build succeeded: 50 targets ok", "wrote out/app"])
    out = S.shell_success_summary(text)
    assert f"bytes={len(text.encode())} lines=52" in out
    assert "Build succeeded: 50 targets ok" in out and "wrote out/app" not in out
    quiet = "\n".join([f"compiling {i}" for i in range(50)] + ["linking", "out/app"])
    assert S.shell_success_summary(quiet).endswith("compiling 49\nlinking\nout/app")


def test_r_red_4_fixed_markers():
    """R-RED-4: confirmations, errors, repeats and generic summaries use short fixed markers."""
    assert S.confirmation_marker() == "[Confirmed]"
    assert S.repeated_marker("Bash") == "[Repeated bash output omitted; an identical call appears later.]"
    err = S.error_summary("Bash", "Error: no such file\nmore")
    assert err.startswith("[Older bash error summarized for this request to save context; bytes=")
    gen = S.generic_summary("Task", "\n".join(f"l{i}" for i in range(10)))
    assert gen.splitlines()[1:] == ["l0", "l1", "- ... (6 lines omitted) ...", "l8", "l9"]


def test_r_red_4_stale_read_marker_shape():
    """R-RED-6 marker: READ_RESULT header, about 500 chars of lines, and the note."""
    text = "\n".join(f"{i:6}→" + "x" * 40 for i in range(1, 100))
    out = S.stale_read_marker(text, read_range=(1, 99), total=300, why="modified")
    lines = out.splitlines()
    assert lines[0] == "READ_RESULT lines=1-99 total=300 truncated=stale"
    assert 400 <= sum(len(x) + 1 for x in lines[1:-1]) <= 520
    assert S.stale_read_marker(text, read_range=(1, 99), total=None, why="superseded").splitlines()[0].endswith(
        "truncated=superseded")


def test_detectors_match_reference_rules():
    """Detectors (reference §1.3): confirmations, search hits, read-only allow-list, diffs, high risk."""
    assert detect.is_confirmation("File created successfully at: /a")
    assert not detect.is_confirmation("done\n" * 5)
    assert detect.is_search_content("a/b.py:1:x\nc.py:2:y")
    assert not detect.is_search_content("12:30:01 start\n12:30:02 stop")
    assert detect.is_read_only_shell("git log --oneline") and detect.is_read_only_shell("tail -n 5 x.log")
    assert not detect.is_read_only_shell("tail -f x.log") and not detect.is_read_only_shell("cat a | wc -l")
    assert not detect.is_read_only_shell("rm -rf x")
    assert detect.is_diff("*** Begin Patch\n*** Update File: a.py")
    assert detect.is_high_risk("Permission denied (publickey)")
    assert detect.is_high_risk("3 failed", shell=True) and not detect.is_high_risk("3 failed")
