"""Tool-kind mapping per source format and fact extraction."""

from __future__ import annotations

import pytest
from iris.errors import ConfigError
from iris.reduction import DEFAULT_TOOL_KINDS, ToolKindMap, extract_facts
from iris.reduction.facts import WHOLE_FILE_END


@pytest.mark.parametrize("fmt,name,kind", [
    ("claude_code", "Read", "read"), ("claude_code", "Edit", "edit"), ("claude_code", "Write", "write"),
    ("claude_code", "Bash", "shell"), ("claude_code", "Grep", "search"), ("claude_code", "Glob", "glob"),
    ("claude_code", "WebFetch", "web_fetch"), ("claude_code", "Skill", "skill"),
    ("claude_code", "TodoWrite", "todo"), ("native", "Read", "read"), ("codex", "shell", "shell"),
    ("codex", "exec_command", "shell"), ("codex", "apply_patch", "edit"), ("codex", "update_plan", "todo"),
    ("openai_chat", "bash", "shell"), ("openai_chat", "read_file", "read"), ("native", "mystery", "other"),
])
def test_default_mapping_per_format(fmt, name, kind):
    """The documented default tables."""
    assert ToolKindMap(format=fmt).kind(name) == kind


def test_overrides_win_and_bad_values_are_config_errors():
    """Overrides take precedence (also case-insensitively); bad kinds/formats are errors."""
    m = ToolKindMap({"Bash": "other", "fetch_doc": "web_fetch"}, format="claude_code")
    assert m.kind("Bash") == "other" and m.kind("FETCH_DOC") == "web_fetch"
    assert m.table()["fetch_doc"] == "web_fetch"
    with pytest.raises(ConfigError, match="tool_kinds.overrides.x"):
        ToolKindMap({"x": "teleport"})
    with pytest.raises(ConfigError, match="unknown tool dialect 'cursor'"):
        ToolKindMap(format="cursor")
    assert set(DEFAULT_TOOL_KINDS) == {"claude", "codex", "chat"}


@pytest.mark.parametrize(("name", "dialect"), [
    ("native", "claude"), ("claude_code", "claude"), ("openai_chat", "chat"), ("claude", "claude"),
    ("codex", "codex"), ("chat", "chat")])
def test_r_red_documented_format_names_stay_accepted(name, dialect):
    """R-RED: the names docs/reduction.md lists for ``tool_kinds.format`` (``native``,
    ``claude_code``, ``openai_chat``) name their dialect; a session without a stated dialect gets
    the Claude Code table."""
    assert ToolKindMap(format=name).format == dialect
    assert ToolKindMap.for_dialect(None).format == "claude"
    assert ToolKindMap.for_dialect("codex").kind("exec_command") == "shell"


def test_str_replace_editor_kind_from_command():
    """Multi-purpose editor tools are classified by their command argument."""
    m = ToolKindMap(format="openai_chat")
    assert m.kind_of_call("str_replace_editor", {"command": "view"}) == "read"
    assert m.kind_of_call("str_replace_editor", {"command": "str_replace"}) == "edit"
    assert m.kind_of_call("str_replace_editor", {"command": "create"}) == "write"


def test_read_range_sources():
    """Facts: READ_RESULT header, then numbered output, then offset/limit, else the whole file."""
    hdr = extract_facts("read", {"file_path": "a.py"}, "READ_RESULT lines=5-9 total=40\nx", False)
    assert (hdr.read_range, hdr.total_lines) == ((5, 9), 40)
    num = extract_facts("read", {"file_path": "a.py"}, "    10→a\n    11→b\n    12→c", False)
    assert num.read_range == (10, 12)
    args = extract_facts("read", {"file_path": "a.py", "offset": 20, "limit": 5}, "plain text", False)
    assert args.read_range == (20, 24)
    whole = extract_facts("read", {"path": "a.py"}, "plain", False)
    assert whole.read_range == (1, WHOLE_FILE_END) and whole.path == "a.py"


def test_edit_ranges_known_and_unknown():
    """Facts: unified hunks give pre-edit ranges and shifts; context-only patches are unknown; writes are
    whole-file."""
    patch = "--- a/x.py\n+++ b/x.py\n@@ -10,4 +10,5 @@\n a\n+b\n c"
    ch = extract_facts("edit", {"patch": patch}, "ok", False).changes[0]
    assert (ch.path, ch.start, ch.end, ch.shift) == ("x.py", 10, 13, 1)
    codex = "*** Begin Patch\n*** Update File: src/y.py\n@@ def f():\n-a\n+b\n*** End Patch"
    ch2 = extract_facts("edit", {"input": codex}, "ok", False).changes[0]
    assert (ch2.path, ch2.start) == ("src/y.py", None)
    add = extract_facts("edit", {"input": "*** Begin Patch\n*** Add File: n.py\n+x\n*** End Patch"}, "", False)
    assert add.changes[0].whole_file
    w = extract_facts("write", {"file_path": "z.py", "content": "x"}, "ok", False)
    assert w.changes[0].whole_file and w.path == "z.py"
    e = extract_facts("edit", {"file_path": "z.py", "old_string": "a\nb", "new_string": "c"}, "ok", False)
    assert e.changes[0].old_text == "a\nb" and e.changes[0].shift == -1


def test_shell_command_and_error_status():
    """Facts: the command line (string or Codex argv) and the error status."""
    assert extract_facts("shell", {"command": ["bash", "-lc", "ls -la"]}, "", False).command == "ls -la"
    assert extract_facts("shell", {"cmd": "make"}, "", False).command == "make"
    assert extract_facts("shell", {"command": "x"}, "Error: boom", False).is_error
    assert extract_facts("shell", {"command": "x"}, "<returncode>2</returncode><output>", False).is_error
    assert not extract_facts("shell", {"command": "x"}, "<returncode>0</returncode>", False).is_error
    assert extract_facts("shell", {}, "fine", True).is_error
