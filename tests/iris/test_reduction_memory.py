"""The reduction engine's memory: owned by the caller, keyed by content and call id, never by
object identity, and never a reason for a different result."""

from __future__ import annotations

from iris.compaction.request import reduce_head
from iris.config import ContextConfig
from iris.context.policy import ContextPolicy
from iris.reduction import ReductionConfig, ReductionMemory, reduce_request
from iris.reduction.engine import classified_count
from iris.session import Message
from reduction_builders import Conv, decision, lines, padding

POLICY = ContextPolicy()


def _copies(messages: list[Message]) -> list[Message]:
    """Equal messages that are new objects (as after a reload: no object is shared)."""
    return [Message.model_validate(m.model_dump()) for m in messages]


def _conversation() -> tuple[Conv, str, str]:
    c = padding(8)  # above min_tool_results_prune: a continuation re-decides only what changed
    log = c.call("Bash", {"command": "make"}, lines(300, "build step {i} ok"))
    read = c.call("Read", {"file_path": "src/a.py"}, lines(120, "line {i} of a.py"))
    c.call("Edit", {"file_path": "src/a.py", "old_string": "line 5 of a.py", "new_string": "x"}, "ok")
    c.turns(6)
    return c, log, read


def test_r_red_1_no_memory_decides_from_scratch_and_equals_a_reused_memory():
    """R-RED-1/9: ``memory=None`` gives the same result as a memory that already saw the
    history, and leaves nothing behind for the next call."""
    c, log, read = _conversation()
    memory = ReductionMemory()
    warm = c.reduce(policy=POLICY, memory=memory)
    described = len(memory.results)
    again = c.reduce(policy=POLICY, memory=memory)
    fresh = c.reduce(policy=POLICY)
    assert decision(warm, log).action == "reduced" and decision(warm, read).action == "stale"
    assert fresh.decisions == warm.decisions == again.decisions
    assert fresh.messages == warm.messages == again.messages
    assert described == len(warm.decisions) == len(memory.results)  # nothing described twice


def test_r_red_9_memory_entries_hold_for_equal_messages_in_new_objects():
    """Entries are keyed by call id and content: the same history rebuilt from new objects
    (its old objects gone) is described from the memory, not again, and decided the same."""
    c, _, _ = _conversation()
    memory = ReductionMemory()
    first = c.reduce(policy=POLICY, memory=memory)
    described = dict(memory.results)
    copies = _copies(c.messages)
    del c
    second = reduce_request(copies, config=ReductionConfig(), policy=POLICY, memory=memory)
    assert memory.results == described  # the same entries, none added
    assert second.decisions == first.decisions and second.messages == first.messages


def test_r_red_9_same_call_id_with_other_content_is_described_again():
    """A result text or call arguments that differ under the same call id make a new entry:
    the memory never answers for content it did not see."""
    c = Conv()
    cid = c.call("Bash", {"command": "ls"}, "a.py\nb.py")
    memory = ReductionMemory()
    c.reduce(memory=memory)
    assert [e.info.input_key for e in memory.results.values()] == ['Bash\x00{"command": "ls"}']
    other = Conv()
    assert other.call("Bash", {"command": "cat a.py"}, "a.py\nb.py") == cid  # same id, other input
    changed = other.reduce(memory=memory)
    assert changed.decisions == other.reduce().decisions
    assert [e.info.input_key for e in memory.results.values()] == ['Bash\x00{"command": "cat a.py"}']
    c.messages[-1] = c.messages[-1].model_copy(update={"content": (
        c.messages[-1].content[0].model_copy(update={"text": "a.py"}),)})
    c.reduce(memory=memory)
    assert {e.info.text for e in memory.results.values()} == {"a.py\nb.py", "a.py"}


def test_r_cmp_6_head_reduced_with_shared_caches_equals_from_scratch_and_keeps_the_tracker():
    """R-CMP-6: the compaction head reduced with the run's content caches gives the same
    messages as from scratch, describes nothing again, and leaves the run's tracker in place
    (the next request still continues the previous one)."""
    c, _, _ = _conversation()
    memory = ReductionMemory()
    config = ContextConfig()
    first = c.reduce(config=config.reduction, policy=config.context_policy, memory=memory)
    tracker, described = memory.tracker, len(memory.results)
    head = c.messages[:6]
    assert reduce_head(head, config, reduction_memory=memory) == reduce_head(head, config)
    assert memory.tracker is tracker and len(memory.results) == described
    c.turns(1)
    before = classified_count(memory)
    c.reduce(config=config.reduction, policy=config.context_policy, state=first.state, memory=memory)
    assert memory.tracker is tracker  # continued, not restarted
    assert classified_count(memory) - before < len(first.decisions)


def test_r_red_6_read_verdict_follows_the_read_text_under_the_same_call_id():
    """R-RED-6: an edit located in a read is located in the read's current text; when a fold
    rewrites that read under the same call id, the memory's earlier location is not reused."""
    c = Conv()
    shown = "\n".join(f"{i:>6}\tline {i} of a.py" for i in range(1, 41))
    read = c.call("Read", {"file_path": "src/a.py", "offset": 1, "limit": 40}, shown)
    c.call("Edit", {"file_path": "src/a.py", "old_string": "line 30 of a.py", "new_string": "x"}, "ok")
    c.turns(4)
    memory = ReductionMemory()
    assert decision(c.reduce(policy=POLICY, memory=memory), read).action == "stale"
    folded = _copies(c.messages)
    result_msg = folded[2]
    block = result_msg.content[0].model_copy(update={"text": "[folded: see the later copy]"})
    folded[2] = result_msg.model_copy(update={"content": (block,)})
    scratch = reduce_request(folded, config=ReductionConfig(), policy=POLICY)
    remembered = reduce_request(folded, config=ReductionConfig(), policy=POLICY, memory=memory)
    assert decision(scratch, read).action != "stale"  # the edited line is not in the folded text
    assert scratch.decisions == remembered.decisions


def test_r_tok_2_message_token_counts_follow_the_call_arguments():
    """R-TOK-2: the memory's message token count is the estimator's, per content: two tool calls
    with the same id and name but other arguments are counted separately."""
    from iris.session import ToolCallBlock
    from iris.tokens import TokenEstimator

    est, memory = TokenEstimator(), ReductionMemory()
    short = Message(role="assistant", content=(ToolCallBlock(id="c1", name="Bash", arguments={"command": "ls"}),))
    long = Message(role="assistant", content=(ToolCallBlock(
        id="c1", name="Bash", arguments={"command": "ls -la " + "some/long/path " * 20}),))
    counts = [memory.message_token_count(est, m) for m in (short, long, short, _copies([long])[0])]
    assert counts == [est.message_tokens(m) for m in (short, long, short, long)]
    assert counts[1] > counts[0]


def test_a_dropped_memory_is_freed_at_once_without_the_cycle_collector():
    """A replay freezes what each step leaves alive (iris.collector_pause), so a memory that only
    a reference cycle kept alive would stay until the replay ends; the memory a compaction's head
    is reduced with, and any memory dropped by its owner, is freed by reference counting alone."""
    import gc
    import weakref

    c, _, _ = _conversation()
    gc.disable()
    try:
        memory = ReductionMemory()
        c.reduce(policy=POLICY, memory=memory)
        assert memory.tracker is not None
        gone = weakref.ref(memory)
        del memory
        assert gone() is None
    finally:
        gc.enable()
