"""Checkpoints and archives (R-CMP-7, R-CMP-9): summary validation, retained messages, session
constraints, the bounded previous checkpoint, archive numbering and losslessness."""

from __future__ import annotations

import pytest
from iris.compaction import (
    REQUIRED_SECTIONS,
    Checkpoint,
    SummaryInvalid,
    next_archive_number,
    read_archive,
    validate_summary,
    write_archive,
)
from iris.compaction.carried import (
    bound_previous_checkpoint,
    merge_constraints,
    select_retained,
    session_constraints,
)
from iris.compaction.checkpoint import ArchiveRef, checkpoint_body
from iris.errors import StorageError
from iris.session import ImageBlock, Message, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, Usage
from iris.tokens import default_estimator

EST = default_estimator()


def summary(**replace):
    bodies = {s: f"Concrete facts about {s.lower()} for the next step." for s in REQUIRED_SECTIONS}
    bodies["Next Step"] = "Run pytest tests/test_parser.py and fix the failing case."
    bodies.update(replace)
    return "\n\n".join(f"## {k}\n{v}" for k, v in bodies.items() if v is not None)


def user(text, **kw):
    return Message(role="user", content=(TextBlock(text=text),), **kw)


def test_r_cmp_7_valid_summary_passes():
    """R-CMP-7: the eleven sections in order pass and come back parsed."""
    sections = validate_summary(summary())
    assert tuple(s.title for s in sections) == REQUIRED_SECTIONS


@pytest.mark.parametrize("text,reason", [
    (summary(Progress=None), "missing section '## Progress'"),
    ("Intro line\n\n" + summary(), "text before the first section"),
    (summary(**{"Key Decisions": "   "}), "empty section '## Key Decisions'"),
    (summary(**{"Next Step": "Continue."}), "vague Next Step"),
    ("<think>let me see</think>\n" + summary(), "reasoning leakage"),
    (summary(Progress="Done.\n<reasoning>hidden chain</reasoning>"), "reasoning leakage"),
    ("## Current User Request\nshort", "fewer than 160"),
])
def test_r_cmp_7_summary_validation_failures(text, reason):
    """R-CMP-7: missing/empty/misordered sections, preamble, leakage, too short, vague next step
    are each rejected with a reason."""
    with pytest.raises(SummaryInvalid) as err:
        validate_summary(text)
    assert reason in err.value.reason and err.value.reason.startswith("summary invalid")


def test_r_cmp_7_reasoning_word_in_prose_is_not_leakage():
    """R-CMP-7: only reasoning blocks are leakage, not the word in a decision's rationale."""
    validate_summary(summary(**{"Key Decisions": "Reasoning: batch retries bound latency."}))


def test_r_cmp_7_sections_out_of_order_rejected():
    text = summary()
    a = text.index("## Progress")
    b = text.index("## Key Decisions")
    c = text.index("## Files and Evidence")
    swapped = text[:a] + text[b:c] + text[a:b] + text[c:]
    with pytest.raises(SummaryInvalid, match="out of order"):
        validate_summary(swapped)


def test_r_cmp_7_retained_budget_truncation_and_dedup():
    """R-CMP-7: recent real user messages verbatim within retain_recent_tokens, newest first in
    the budget, the oldest that does not fit truncated; the current request de-duplicated;
    synthetic messages and checkpoints skipped."""
    head = [user("first request " + "alpha " * 200), user("second"),
            user("injected", synthetic=True),
            user("[Context Summary] old", is_compaction_summary=True, synthetic=True),
            user("Fix the bug now"), user("third message")]
    kept = select_retained(head, budget=30, estimator=EST, current_request="Fix the bug now")
    texts = [k.text for k in kept]
    assert texts[-1] == "third message" and kept[-2].duplicate_of_current
    assert "second" in texts and "injected" not in texts and all("old" not in t for t in texts)
    assert kept[0].truncated and kept[0].text.startswith("first request")
    assert sum(EST.count(k.text) for k in kept if not k.duplicate_of_current) <= 30
    rendered = Checkpoint(mode="archival", summariser="extractive",
                          sections=validate_summary(summary()), retained=kept).render()
    assert "## Retained Recent Messages\nUser:\n> first request" in rendered
    assert "> [truncated]" in rendered


def test_r_cmp_7_constraints_superseded_and_capacity():
    """R-CMP-7: constraints carried; superseded marked; over capacity earliest and latest kept."""
    msgs = [user("Always use tabs for indentation in python files."),
            user("Actually, use spaces for indentation in python files instead."),
            user("Never push to main.")]
    found = session_constraints(msgs)
    assert [c.superseded for c in found] == [True, False, False]
    many = session_constraints([user(f"Never touch module{i}.py files") for i in range(20)])
    kept, omitted = merge_constraints((), many, capacity=6)
    assert omitted == 14
    assert [c.text for c in kept][:3] == [f"Never touch module{i}.py files" for i in range(3)]
    assert [c.text for c in kept][3:] == [f"Never touch module{i}.py files" for i in (17, 18, 19)]
    carried, _ = merge_constraints(found, session_constraints([user("Never push to main.")]))
    assert len(carried) == 3  # no duplicate on re-statement


def test_r_cmp_9_previous_checkpoint_bounded_typed_block_exempt():
    """R-CMP-9: the previous checkpoint body is bounded by a fixed budget; a typed block is kept."""
    typed = "## Typed Checkpoint State\n```json\n{\"a\": 1}\n```"
    out = bound_previous_checkpoint("word " * 5000 + "\n" + typed, EST, budget=100)
    assert "[previous checkpoint truncated]" in out and out.endswith(typed)
    assert EST.count(out.split("## Typed")[0]) <= 110


def test_r_cmp_9_checkpoint_body_does_not_nest_previous():
    """R-CMP-9: carrying a checkpoint keeps its required sections, not its own Previous
    Checkpoint or runtime part."""
    cp = Checkpoint(mode="continuation", summariser="extractive",
                    sections=validate_summary(summary()), previous_checkpoint="OLD BODY",
                    archives=(ArchiveRef(path="history-1.md", number=1, messages=3),))
    body = checkpoint_body(cp.render())
    assert "OLD BODY" not in body and "history-1.md" not in body
    assert body.startswith("## Current User Request")
    msg = cp.to_message()
    assert msg.is_compaction_summary and msg.role == "user"


def _rich_head():
    return (user("go"), Message(role="assistant", content=(
        ThinkingBlock(text="plan", signature="sig"), TextBlock(text="reading\n```\ncode\n```"),
        ToolCallBlock(id="c1", name="read", arguments={"path": "a.py", "n": [1, 2]})),
        usage=Usage(input_tokens=5, output_tokens=2), model="m"),
        Message(role="tool", content=(ToolResultBlock(call_id="c1", text="line\n" * 50),
                                      ImageBlock(name="shot.png"))))


def test_r_cmp_7_archive_numbering_and_losslessness(tmp_path):
    """R-CMP-7: history-N.md, N = highest + 1; the archive holds exactly the head; index on top."""
    assert next_archive_number(tmp_path / "missing") == 1
    head = _rich_head()
    p1 = write_archive(tmp_path, head, number=next_archive_number(tmp_path))
    (tmp_path / "history-7.md").write_text("x")
    assert next_archive_number(tmp_path) == 8
    assert p1.name == "history-1.md" and read_archive(p1) == head
    text = p1.read_text()
    assert text.startswith("# Index\n")
    assert "2: Tool result: read (51 lines, LARGE)" in text
    assert "# Tool call: read" in text and "Thinking:\nplan" in text
    with pytest.raises(StorageError, match="refusing to overwrite"):
        write_archive(tmp_path, head, number=1)
