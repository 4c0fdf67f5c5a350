"""Deep nesting ends in a named error or imports as text, never a crash (R-BOUND-1, R-TWIN-8).

Tool-call arguments nested 300–990 levels (Claude Code, Codex, native) used to fail every import
with ``unexpected ValueError: Maximum serialization depth exceeded`` (lenient ones too) and every
replay with a RecursionError; a file a real agent wrote is never bad input, so the line imports with
the argument kept as its JSON text (``{"_raw": …}``) and replays. Deeper than a JSON decoder reads
(1,500 levels) is an error naming the file and line. A YAML document nested 3,000–50,000 levels was
a RecursionError: now a ConfigError naming the file, line and field. A YAML document of many plain
values without aliases is not an alias bomb. Files are built in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from iris.config import load_config
from iris.context.load import load_context_build_input
from iris.errors import ConfigError, SessionFormatError
from iris.session import ToolCallBlock
from iris.yaml_errors import MAX_YAML_DEPTH, MAX_YAML_NODES, read_yaml

from workbench.importers import load_session
from workbench.importers._nesting import MAX_NESTING, json_text

pytestmark = pytest.mark.slow  # starts processes (the CLI import and replay)

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "importers"
SAMPLES = ROOT / "sample_sessions"


def _nested(depth: int) -> dict[str, object]:
    """Objects nested ``depth`` levels, the innermost holding a list (one level more)."""
    value: dict[str, object] = {"leaf": [1, "é"]}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def _nested_text(depth: int) -> str:
    """``json.dumps(_nested(depth), ensure_ascii=False)``, built without recursion."""
    return '{"a": ' * (depth - 1) + '{"leaf": [1, "é"]}' + "}" * (depth - 1)


def _claude_with_deep_input(path: Path, depth: int) -> Path:
    """The parallel-calls fixture with its first tool_use input nested ``depth`` levels."""
    out = []
    done = False
    for line in (FIX / "claude_parallel.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        for block in row.get("message", {}).get("content", []) if not done else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                block["input"] = {"PLACEHOLDER": 0}
                done = True
                break
        out.append(json.dumps(row))
    text = "\n".join(out) + "\n"
    deep = '{"a": ' * (depth - 1) + '{"leaf": [1, "\\u00e9"]}' + "}" * (depth - 1)
    path.write_text(text.replace('{"PLACEHOLDER": 0}', deep), "utf-8")
    return path


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True,
                          text=True, env=env, timeout=300, check=False)


def _deep_call(session) -> ToolCallBlock:
    return next(b for m in session.messages for b in m.content
                if isinstance(b, ToolCallBlock) and "_raw" in b.arguments)


@pytest.mark.parametrize("depth", [300, 990])
def test_r_twin_8_claude_code_arguments_nested_deep_import_as_text_and_replay(tmp_path, depth):
    """R-TWIN-8/R-BOUND-1: strict and lenient imports keep the line, the arguments as their JSON
    text (the same value once parsed); the store holds it and the file replays."""
    path = _claude_with_deep_input(tmp_path / f"deep{depth}.jsonl", depth)
    result = load_session(path)
    assert _deep_call(result.session).arguments["_raw"] == _nested_text(depth)
    assert not result.skipped
    home = tmp_path / "home"
    for extra in ((), ("--lenient",)):
        done = _cli("import", *extra, str(path), home=home)
        assert done.returncode == 0, done.stderr
        assert "unexpected" not in done.stderr and "(claude_code, 8 messages, 0 skipped" in done.stdout
    done = _cli("replay", str(path), home=home)
    assert done.returncode == 0 and "RecursionError" not in done.stderr, done.stderr[-2000:]


def test_r_bound_1_nesting_deeper_than_json_decoders_read_names_file_and_line(tmp_path):
    """R-BOUND-1: 1,500 levels is more than the decoders read: a strict error naming the file and
    line, a lenient import that skips and lists that line."""
    path = _claude_with_deep_input(tmp_path / "deeper.jsonl", 1500)
    with pytest.raises(SessionFormatError, match="nested too deeply") as err:
        load_session(path)
    assert err.value.path == str(path) and err.value.line == 6
    lenient = load_session(path, lenient=True)
    assert [s.line for s in lenient.skipped] == [6]


def test_r_bound_1_codex_and_native_arguments_nested_deep_are_kept_as_text(tmp_path):
    """R-BOUND-1: Codex ``arguments`` (a JSON string) and native ``arguments`` (an object) nested
    500 levels import strictly with the arguments kept as their JSON text."""
    deep = _nested(500)
    codex = tmp_path / "codex.jsonl"
    codex.write_text((FIX / "codex_basic.jsonl").read_text("utf-8").replace(
        json.dumps(json.dumps({"cmd": "rg argparse"}))[1:-1], json.dumps(json_text(deep))[1:-1]),
        "utf-8")
    assert _deep_call(load_session(codex).session).arguments["_raw"] == _nested_text(500)
    native = tmp_path / "native.jsonl"
    native.write_text((SAMPLES / "bugfix.jsonl").read_text("utf-8").replace(
        '{"pattern": "**/*.py"}', json_text(deep), 1), "utf-8")
    assert _deep_call(load_session(native).session).arguments["_raw"] == _nested_text(500)


def test_r_bound_1_arguments_within_the_nesting_bound_stay_parsed(tmp_path):
    """R-BOUND-1: arguments nested up to MAX_NESTING levels stay a parsed object."""
    path = _claude_with_deep_input(tmp_path / "ok.jsonl", MAX_NESTING - 1)  # + the inner list
    calls = [b for m in load_session(path).session.messages for b in m.content
             if isinstance(b, ToolCallBlock)]
    assert any(b.arguments == _nested(MAX_NESTING - 1) for b in calls)
    assert not any("_raw" in b.arguments for b in calls)


def test_r_bound_1_json_text_is_json_dumps_at_any_depth():
    """The writer without recursion writes what json.dumps writes."""
    values = [{"a": [1, 2.5, None, True, {"b": "é\"\n"}], "c": {}, "d": []}, [], {}, "x", 3]
    assert [json_text(v) for v in values] == [json.dumps(v, ensure_ascii=False) for v in values]
    assert json_text(_nested(5000)) == _nested_text(5000)


@pytest.mark.parametrize(("name", "text", "line", "field"), [
    ("block.yaml", "system:\n  slots:\n" + "".join("  " * (i + 2) + "- a:\n" for i in range(3000)),
     52, "system.slots[0].a[0].a[0].a…"),
    ("flow.yaml", "system: " + "[" * 50000 + "]" * 50000 + "\n", 1, "system[0][0][0][0][0][0][0]…"),
])
def test_r_bound_1_yaml_nested_deep_is_a_named_error(tmp_path, name, text, line, field):
    """R-BOUND-1: a context.yaml nested 3,000 (block) or 50,000 (flow) levels is a ConfigError
    naming the file, the line and the field where it passes MAX_YAML_DEPTH."""
    path = tmp_path / name
    path.write_text(text, "utf-8")
    with pytest.raises(ConfigError, match=f"nested more than {MAX_YAML_DEPTH} levels") as err:
        load_context_build_input(path)
    assert (err.value.path, err.value.line, err.value.field) == (str(path), line, field)


def test_r_bound_1_a_config_nested_deep_is_a_named_error(tmp_path):
    """R-BOUND-1: the same in a --config file."""
    path = tmp_path / "config.yaml"
    path.write_text("compaction:\n  model_pool: " + "[" * 5000 + "]" * 5000 + "\n", "utf-8")
    with pytest.raises(ConfigError, match="nested more than") as err:
        load_config(path)
    assert err.value.path == str(path) and err.value.line == 2
    assert (err.value.field or "").startswith("compaction.model_pool[0]")


def test_r_bound_1_many_plain_values_are_not_an_alias_bomb():
    """R-BOUND-1: 150,000 plain values (more than MAX_YAML_NODES, no alias) load; only what
    aliases repeat counts against the bound."""
    text = "items:\n" + "".join(f"  - {i}\n" for i in range(150_000))
    data, _ = read_yaml(text, "big.yaml")
    assert isinstance(data, dict) and len(data["items"]) == 150_000 > MAX_YAML_NODES


def test_workbench_debug_prints_the_traceback_of_an_error_a_command_goes_on_after(tmp_path):
    """With WORKBENCH_DEBUG=1 an unexpected error a command reports and goes on after (one file
    of an import) shows its traceback, then the one-line error; without it, the line only."""
    code = ("from workbench.cli import report_error\n"
            "try:\n    raise ValueError('boom')\nexcept ValueError as exc:\n    report_error(exc)\n")
    for debug, traceback_shown in (("1", True), ("", False)):
        env = {**os.environ, "WORKBENCH_DEBUG": debug}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=60, check=True)
        assert ("Traceback (most recent call last)" in done.stderr) is traceback_shown
        assert done.stderr.rstrip().endswith("error: unexpected ValueError: boom (set "
                                             "WORKBENCH_DEBUG=1 for the traceback)")
