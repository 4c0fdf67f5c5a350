"""Context-policy trimming combined with reduction (R-POL-2)."""

from __future__ import annotations

from iris.context.policy import ContextPolicy
from reduction_builders import Conv, decision, sent_text

POLICY = ContextPolicy()
BODY = "\n".join(f"agent note {i}: " + "detail " * 8 for i in range(20))  # ~1.3 KB, below reduction gates


def _groups(n: int) -> tuple[Conv, list[str]]:
    c = Conv()
    return c, [c.call("Task", {"prompt": f"job {i}"}, BODY) for i in range(n)]


def test_r_pol_2_recent_groups_kept_older_trimmed_with_ref_hint():
    """R-POL-2: the 2 most recent complete groups stay; older bodies keep a 512-char preview and a
    read-back hint naming result:N:B."""
    c, ids = _groups(4)
    res = c.reduce(policy=POLICY)
    assert [decision(res, i).action for i in ids] == ["trimmed", "trimmed", "kept", "kept"]
    d = decision(res, ids[0])
    out = sent_text(res, ids[0])
    assert d.rule == "old_body_trim" and d.read_back == d.ref == "result:2:0"
    assert out.startswith(BODY[:512]) and "agent note 19" not in out
    assert out.endswith('[Read back with context_read(ref="result:2:0")]')


def test_r_pol_1_preview_zero_keeps_only_note_and_reference():
    """R-POL-1: old_result_preview_chars 0 keeps only the note and the reference."""
    c, ids = _groups(3)
    res = c.reduce(policy=ContextPolicy(old_result_preview_chars=0))
    out = sent_text(res, ids[0])
    assert out.startswith("[Older task output trimmed by the context policy") and "agent note" not in out


def test_r_pol_2_preserve_count_configurable():
    """R-POL-1: preserve_recent_tool_groups sets how many recent groups are never trimmed."""
    c, ids = _groups(4)
    res = c.reduce(policy=ContextPolicy(preserve_recent_tool_groups=0))
    assert all(decision(res, i).action == "trimmed" for i in ids)


def test_r_pol_2_needs_context_read():
    """R-POL-2: without context_read in the step nothing is trimmed and reduced markers name the artifact."""
    c, ids = _groups(4)
    res = c.reduce(policy=POLICY, context_read_available=False)
    assert all(decision(res, i).action == "kept" for i in ids)
    disabled = c.reduce(policy=ContextPolicy(enabled=False))
    assert all(decision(disabled, i).action == "kept" for i in ids)


def test_r_pol_2_errors_unclosed_and_not_reducible_never_trimmed():
    """R-POL-2: error results, unclosed batches and non-reducible results do not take part."""
    c = Conv()
    err = c.call("Task", {"prompt": "e"}, BODY, is_error=True)
    fixed = c.call("Task", {"prompt": "f"}, BODY, reducible=False)
    unclosed = c.parallel(("Task", {"prompt": "a"}, BODY), ("Task", {"prompt": "b"}, BODY), answer=False)
    from iris.session import Message, ToolResultBlock
    c.messages.append(Message(role="tool", content=(ToolResultBlock(call_id=unclosed[0], text=BODY),)))
    for i in range(3):
        c.call("Task", {"prompt": f"later {i}"}, "short")
    res = c.reduce(policy=POLICY)
    assert decision(res, err).action != "trimmed"
    assert decision(res, fixed).rule == "not_reducible"
    assert decision(res, unclosed[0]).action == "kept"


def test_r_pol_2_protected_reads_not_trimmed_and_reduced_get_hint(tmp_path):
    """R-POL-2 with R-RED-6: a current read stays whole; an old reduced output keeps its category summary,
    its archive line and the read-back hint."""
    c = Conv()
    read = c.call("Read", {"file_path": "/r/a.py"}, "\n".join(f"{i:6}→line {i}" for i in range(1, 300)))
    shell = c.call("Bash", {"command": "make"}, "\n".join(f"compiling unit {i} ok" for i in range(300)))
    for i in range(3):
        c.call("Task", {"prompt": f"{i}"}, "short")
    res = c.reduce(policy=POLICY, work_dir=tmp_path)
    assert decision(res, read).rule == "current_read"
    d = decision(res, shell)
    out = sent_text(res, shell)
    assert d.action == "reduced" and d.read_back == d.ref
    assert out.startswith("[Older shell success summarized") and "Full output saved to" in out
    assert out.endswith(f'[Read back with context_read(ref="{d.ref}")]')
    no_read = c.reduce(policy=POLICY, work_dir=tmp_path, context_read_available=False)
    assert decision(no_read, shell).read_back == decision(no_read, shell).artifact_path


def test_r_pol_2_trimmed_structured_output_keeps_category_summary():
    """R-POL-2: a trimmed search output keeps its search summary rather than a blind preview."""
    c = Conv()
    hits = "\n".join(f"src/m{i}.py:{i}:    result = needle(compute(value_{i}), other_argument)" for i in range(40))
    g = c.call("Grep", {"pattern": "needle"}, hits)
    for i in range(2):
        c.call("Task", {"prompt": f"{i}"}, "short")
    res = c.reduce(policy=ContextPolicy(old_result_preview_chars=2000))
    d = decision(res, g)
    assert d.action == "trimmed" and sent_text(res, g).startswith("[Older grep results summarized")
    assert "src/m39.py: 39" in sent_text(res, g)
    bounded = c.reduce(policy=POLICY)  # 512: the summary's first 512 characters and a note
    text = sent_text(bounded, g)
    assert text.startswith("[Older grep results summarized") and "src/m39.py: 39" not in text
