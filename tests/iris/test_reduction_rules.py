"""Categories and gates at their boundary ages and sizes (R-RED-3, R-RED-5, R-RED-1/2)."""

from __future__ import annotations

import json

import pytest
from iris.reduction import ReductionConfig
from record_access import block_text
from reduction_builders import Conv, decision, lines, padding, sent_text


def _aged(name, args, text, age, *, conv=None, is_error=False):
    c = conv or Conv()
    cid = c.call(name, args, text, is_error=is_error)
    c.turns(age - 1)
    return c.reduce(), cid


@pytest.mark.parametrize("age,action", [(1, "kept"), (2, "reduced")])
def test_r_red_3_shell_success_age_boundary(age, action):
    """R-RED-3: shell success kept at shell_success_age_turns−1, summarised at the gate."""
    res, cid = _aged("Bash", {"command": "make build"}, lines(120), age)
    d = decision(res, cid)
    assert (d.action, d.age, d.kind) == (action, age, "shell")
    if action == "reduced":
        assert d.rule == "shell_success_age_turns" and d.category == "shell_success"
        assert "≥ shell_success_age_turns 2 and > shell_success_bytes 3000" in d.reason
        assert sent_text(res, cid).startswith("[Older shell success summarized")
        assert d.tokens_after < d.tokens_before


@pytest.mark.parametrize("size,action", [(3000, "kept"), (3001, "reduced")])
def test_r_red_3_shell_success_byte_gate(size, action):
    """R-RED-3: only shell output over shell_success_bytes is summarised."""
    text = ("x" * 99 + "\n") * (size // 100) + "y" * (size % 100)
    assert len(text.encode()) == size
    res, cid = _aged("Bash", {"command": "./gen"}, text, 2)
    assert decision(res, cid).action == action


def test_r_red_2_non_positive_config_uses_default_and_custom_gate_applies():
    """R-RED-2: a custom shell_success_age_turns moves the boundary."""
    c = Conv()
    cid = c.call("Bash", {"command": "make"}, lines(200))
    c.turns(2)  # age 3
    assert decision(c.reduce(config=ReductionConfig(shell_success_age_turns=4)), cid).action == "kept"
    assert decision(c.reduce(config=ReductionConfig(shell_success_age_turns=0)), cid).action == "reduced"


@pytest.mark.parametrize("age,action", [(2, "kept"), (3, "reduced")])
def test_r_red_3_read_only_shell_uses_read_only_age(age, action):
    """R-RED-3: allow-listed read-only commands (cat) wait shell_read_only_age_turns."""
    res, cid = _aged("Bash", {"command": "cat notes.txt"}, lines(300, "note {i} text of the file"), age)
    d = decision(res, cid)
    assert d.action == action
    if action == "kept":
        assert d.rule == "shell_read_only_age_turns"


@pytest.mark.parametrize("age,action", [(1, "kept"), (2, "reduced")])
def test_r_red_3_confirmation_boundary(age, action):
    """R-RED-3: confirmations become [Confirmed] from confirm_age_turns."""
    res, cid = _aged("TodoWrite", {"todos": []}, "Todos have been modified successfully.", age)
    d = decision(res, cid)
    assert d.action == action
    if action == "reduced":
        assert sent_text(res, cid) == "[Confirmed]" and d.rule == "confirm_age_turns"


@pytest.mark.parametrize("age,action", [(2, "kept"), (3, "reduced")])
def test_r_red_3_error_boundary(age, action):
    """R-RED-3: error results kept while younger than error_age_turns, then an error marker."""
    res, cid = _aged("Bash", {"command": "ls /nope"}, "ls: cannot open /nope\n" * 3, age, is_error=True)
    d = decision(res, cid)
    assert (d.action, d.category) == (action, "error")
    if action == "reduced":
        assert sent_text(res, cid).startswith("[Older bash error summarized")


def test_r_red_3_error_prefix_without_status_is_a_failure():
    """R-RED-3: no status but content starting with ``Error:`` counts as an error."""
    res, cid = _aged("Bash", {"command": "x"}, "Error: boom\n" + lines(10), 3)
    assert decision(res, cid).category == "error"


@pytest.mark.parametrize("age,action,rule", [(3, "kept", "high_risk_protect"), (4, "reduced", "shell_success_age_turns")])
def test_r_red_5_high_risk_window(age, action, rule):
    """R-RED-5: a stack trace stays whole below high_risk_protect_age_turns; then the log summary keeps
    its failure lines."""
    text = lines(80) + "\nTraceback (most recent call last):\n  File x.py\nValueError: bad\nFAILED tests/t.py"
    res, cid = _aged("Bash", {"command": "pytest"}, text, age)
    d = decision(res, cid)
    assert (d.action, d.rule) == (action, rule)
    if action == "reduced":
        out = sent_text(res, cid)
        assert out.startswith("[Older shell log summarized") and "ValueError: bad" in out


def _diff(files=2, hunks=2, body=40):
    out = []
    for f in range(files):
        out += [f"diff --git a/src/f{f}.py b/src/f{f}.py", f"--- a/src/f{f}.py", f"+++ b/src/f{f}.py"]
        for h in range(hunks):
            out.append(f"@@ -{h * 100 + 1},{body} +{h * 100 + 1},{body + 1} @@")
            out += [f" context line {i}" for i in range(body)] + [f"+added line {h}", f"-removed line {h}"]
    return "\n".join(out)


@pytest.mark.parametrize("age,action,rule", [(3, "kept", "high_risk_protect"), (11, "kept", "diff_protect"),
                                             (12, "reduced", "diff_protect_age_turns")])
def test_r_red_5_diff_window(age, action, rule):
    """R-RED-5: diffs stay whole below diff_protect_age_turns, then keep files and hunks."""
    res, cid = _aged("Bash", {"command": "git diff"}, _diff(), age)
    d = decision(res, cid)
    assert (d.action, d.rule) == (action, rule)
    if action == "reduced":
        out = sent_text(res, cid)
        assert "- src/f0.py: hunks=2 changes=+2/-2" in out and "- src/f1.py: hunks=2" in out


@pytest.mark.parametrize("age,action", [(1, "kept"), (2, "reduced")])
def test_r_red_3_read_like_web_fetch(age, action):
    """R-RED-3: read-like outputs (web fetch) over read_like_output_bytes wait read_like_age_turns."""
    res, cid = _aged("WebFetch", {"url": "https://example.org/doc"}, lines(300, "paragraph {i} of the page"), age)
    d = decision(res, cid)
    assert d.action == action
    if action == "reduced":
        assert "path=https://example.org/doc" in sent_text(res, cid)


@pytest.mark.parametrize("age,action", [(1, "kept"), (2, "reduced")])
def test_r_red_3_search_boundary(age, action):
    """R-RED-3: grep results wait read_like_age_turns, then keep the path:line list."""
    text = "\n".join(f"src/mod{i % 7}.py:{i}:    call_thing({i})" for i in range(1, 120))
    res, cid = _aged("Grep", {"pattern": "call_thing"}, text, age)
    d = decision(res, cid)
    assert d.action == action and d.category == "search"


@pytest.mark.parametrize("age,action", [(2, "kept"), (3, "reduced")])
def test_r_red_3_json_document_waits_stale_age(age, action):
    """R-RED-3: JSON documents wait stale_age_turns, even from shell."""
    doc = json.dumps({"items": [{"id": i, "name": f"n{i}"} for i in range(200)], "total": 200, "ok": True})
    res, cid = _aged("Bash", {"command": "curl api"}, doc, age)
    d = decision(res, cid)
    assert d.action == action and d.category == "json"
    if action == "kept":
        assert d.rule == "stale_age_turns"


def test_r_red_3_ndjson_uses_its_category_age():
    """R-RED-3: NDJSON logs (go test -json) do not wait for the JSON age; they belong to the
    JSON/structured category, not to logs (R-RED-4)."""
    text = "\n".join(json.dumps({"Action": "pass", "Test": f"T{i}", "Elapsed": 0.01}) for i in range(100))
    res, cid = _aged("Bash", {"command": "go test -json ./..."}, text, 2)
    d = decision(res, cid)
    assert d.action == "reduced" and d.category == "json"


@pytest.mark.parametrize("age,results,action,rule", [
    (2, 6, "kept", "below_gates"), (3, 6, "reduced", "stale_age_turns"), (3, 5, "kept", "min_tool_results_prune")])
def test_r_red_3_generic_fallback_gated(age, results, action, rule):
    """R-RED-3: the generic fallback needs stale_age_turns, stale_output_bytes and min_tool_results_prune."""
    conv = padding(results - 1)
    res, cid = _aged("Task", {"prompt": "x"}, lines(80, "finding {i}: something notable"), age, conv=conv)
    d = decision(res, cid)
    assert (d.action, d.rule) == (action, rule)
    if action == "reduced":
        assert sent_text(res, cid).startswith("[Older task output summarized")


def test_r_red_3_generic_byte_gate():
    """R-RED-3: generic outputs of stale_output_bytes or less are kept."""
    conv = padding(6)
    res, cid = _aged("Task", {"prompt": "x"}, "z" * 1500, 5, conv=conv)
    assert decision(res, cid).action == "kept"


def test_r_red_3_skill_outline_at_generic_gate():
    """R-RED-3/4: skill bodies keep <path>/<root> anchors and a section outline."""
    body = ("<name>pdf</name>\n<path>/skills/pdf/SKILL.md</path>\n<root>/skills/pdf</root>\n# PDF skill\n"
            + "\n".join(f"## Step {i}\n" + lines(12, "detail {i} of how the step is done") for i in range(6)))
    conv = padding(6)
    res, cid = _aged("Skill", {"name": "pdf"}, body, 3, conv=conv)
    d = decision(res, cid)
    out = sent_text(res, cid)
    assert d.category == "skill" and d.action == "reduced"
    assert "<root>/skills/pdf</root>" in out and "<path>/skills/pdf/SKILL.md</path>" in out
    assert "- ## Step 5" in out
    res2, cid2 = _aged("Skill", {"name": "pdf"}, body, 2, conv=padding(6))
    assert decision(res2, cid2).action == "kept"


def test_r_sess_1_parallel_calls_share_one_age():
    """R-RED-2 ages count batches: three parallel results have the same age."""
    c = Conv()
    ids = c.parallel(*[("Bash", {"command": f"make t{i}"}, lines(200)) for i in range(3)])
    c.turns(1)
    res = c.reduce()
    assert {decision(res, i).age for i in ids} == {2}
    assert all(decision(res, i).action == "reduced" for i in ids)


def test_r_red_1_disabled_and_history_untouched():
    """R-RED-1: reduction: false keeps everything; the input messages are never modified."""
    c = Conv()
    cid = c.call("Bash", {"command": "make"}, lines(300))
    c.turns(3)
    before = list(c.messages)
    res = c.reduce(config=ReductionConfig(enabled=False))
    assert decision(res, cid).rule == "reduction_disabled" and res.tokens_after == res.tokens_before
    res2 = c.reduce()
    assert decision(res2, cid).action == "reduced" and c.messages == before
    assert block_text(c.messages[2].content[0]) == lines(300)


def test_r_red_1_every_result_gets_exactly_one_decision():
    """One decision per tool result, with the tokens of the whole request."""
    c = padding(4)
    c.call("Bash", {"command": "make"}, lines(300))
    c.turns(2)
    res = c.reduce()
    assert len(res.decisions) == 5
    saved = sum(d.tokens_before - d.tokens_after for d in res.decisions)
    assert res.tokens_before - res.tokens_after == saved > 0


def _exact(size: int) -> str:
    text = ("w" * 99 + "\n") * (size // 100) + "v" * (size % 100)
    assert len(text.encode()) == size
    return text


@pytest.mark.parametrize("size,action", [(3000, "kept"), (3001, "reduced")])
def test_r_red_3_read_like_byte_gate(size, action):
    """R-RED-3: read-like outputs are summarised only above read_like_output_bytes."""
    res, cid = _aged("WebFetch", {"url": "https://example.org"}, _exact(size), 5)
    assert decision(res, cid).action == action


@pytest.mark.parametrize("size,action", [(1500, "kept"), (1501, "reduced")])
def test_r_red_3_generic_byte_gate_boundary(size, action):
    """R-RED-3: the generic fallback needs more than stale_output_bytes."""
    res, cid = _aged("Task", {"prompt": "x"}, _exact(size), 3, conv=padding(6))
    assert decision(res, cid).action == action


def test_r_red_5_old_small_diff_kept():
    """R-RED-5: past the diff window a diff of 3000 bytes or less is not summarised."""
    res, cid = _aged("Bash", {"command": "git diff"}, _diff(files=1, hunks=1, body=5), 20)
    d = decision(res, cid)
    assert d.category == "diff" and d.action == "kept"
