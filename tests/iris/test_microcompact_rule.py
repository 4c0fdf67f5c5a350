"""Claude Code's microcompaction rule (iris.compaction.microcompact): which old tool results it
clears, what replaces them, and for which versions it is applied (R-TWIN-3, R-TWIN-7)."""

from __future__ import annotations

from iris.compaction import microcompact as mc
from iris.session import Message, TextBlock, ToolCallBlock, ToolResultBlock


def _turn(call_id: str, name: str, chars: int) -> list[Message]:
    return [Message(role="assistant", content=(ToolCallBlock(id=call_id, name=name),)),
            Message(role="user", content=(ToolResultBlock(call_id=call_id, text="x" * chars),))]


def _history(sizes: list[tuple[str, int]]) -> list[Message]:
    out = [Message(role="user", content=(TextBlock(text="start"),))]
    for n, (name, chars) in enumerate(sizes):
        out += _turn(f"c{n}", name, chars)
    return out


def test_r_twin_3_rule_clears_oldest_clearable_results_down_to_40000_and_keeps_the_last_3():
    """R-TWIN-3: ten 8,000-token Read/Bash results (80,000): the oldest are cleared until 40,000
    or less are left (5 of them), never a result of the 3 most recent calls; a Task result (not a
    clearable tool) is neither counted nor cleared."""
    sizes = [("Read", 32000), ("Task", 400000)] + [("Bash", 32000)] * 9
    found = mc.plan(_history(sizes))
    assert found.total == 80000
    assert found.call_ids == ("c0", "c2", "c3", "c4", "c5")
    assert found.saved == 40000 and found.total - found.saved <= mc.KEEP_TOKENS


def test_r_twin_3_rule_estimates_characters_over_4_and_skips_cleared_results():
    """R-TWIN-3: a result is estimated as its characters / 4 (rounded up); one already cleared
    counts no more and is not cleared again."""
    history = _history([("Read", 4001)] * 3 + [("Grep", 200000)] * 4)
    assert mc.estimate(history[2].content[0]) == 1001  # type: ignore[arg-type]
    first = mc.plan(history)
    assert first.call_ids == ("c0", "c1", "c2", "c3")
    cleared = [mc.clear(m, set(first.call_ids))[0] for m in history]
    again = mc.plan(cleared)
    assert again.call_ids == () and again.total == 150000


def test_r_twin_3_clear_replaces_only_the_listed_results_with_claude_codes_text():
    """R-TWIN-3: the listed results' content becomes "[Old tool result content cleared]"; other
    blocks and messages stay the same objects."""
    message = Message(role="user", content=(ToolResultBlock(call_id="a", text="aaa", artifact_path="t/a"),
                                            ToolResultBlock(call_id="b", text="bbb")))
    new, ids = mc.clear(message, {"a"})
    assert ids == ("a",)
    assert [b.text for b in new.content] == [mc.CLEARED_TEXT, "bbb"]  # type: ignore[union-attr]
    assert new.content[1] is message.content[1]
    same, none = mc.clear(message, {"z"})
    assert same is message and none == ()


def test_r_twin_7_rule_is_applied_only_to_the_documented_versions():
    """R-TWIN-7: 2.0.76 – 2.1.20 clear without recording it (the rule applies); later versions
    and a transcript without a version do not get it."""
    assert mc.rule_applies("2.1.5") and mc.rule_applies("2.1.20") and mc.rule_applies("2.0.76")
    assert not mc.rule_applies("2.1.21") and not mc.rule_applies("2.1.39")
    assert not mc.rule_applies("1.0.89") and not mc.rule_applies(None)
