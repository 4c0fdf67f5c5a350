"""Request-level reduction is incremental, and incremental equals from scratch.

Incrementality is shown without timing: the engine counts the results it classifies, and that
count per request must follow the new results and the gate crossings, not the history length.
Equivalence: at every request of a generated session, the incremental result (the engine's
tracker kept in a :class:`ReductionMemory` passed with every request) equals a from-scratch
result (the same state, no memory), decisions, messages, token figures and the carried state
alike.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from iris.context.policy import ContextPolicy
from iris.reduction import ReductionConfig, ReductionMemory, ReductionResult, reduce_request
from iris.reduction.engine import classified_count
from iris.session import Message, TextBlock, ToolResultBlock
from iris.tokens import TokenEstimator
from reduction_builders import Conv, decision, lines, padding, sent_text

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synth import synth_session

POLICY = ContextPolicy()


@pytest.fixture(scope="module")
def session():
    return synth_session(responses=240, seed=11)


def _requests(session):
    """The messages before each assistant response: what each step's request is built from."""
    return [session.messages[:b.assistant_message] for b in session.index.batches]


def _same(a: ReductionResult, b: ReductionResult) -> None:
    assert a.decisions == b.decisions
    assert a.messages == b.messages
    assert (a.tokens_before, a.tokens_after) == (b.tokens_before, b.tokens_after)
    assert dict(a.state.frozen) == dict(b.state.frozen)
    assert dict(a.state.externalized) == dict(b.state.externalized)
    assert (a.state.reduced_inputs, a.state.recalled_inputs) == (b.state.reduced_inputs,
                                                                 b.state.recalled_inputs)
    assert (a.state.requests, a.state.has_prefix) == (b.state.requests, b.state.has_prefix)


def test_r_red_9_classified_per_request_does_not_grow_with_history(session):
    """Per request the engine classifies the new results and those whose age
    crossed a gate or that a new event touched, a bounded number, while a from-scratch pass
    would classify every result of a history that keeps growing."""
    est, state, per_request, from_scratch = TokenEstimator(), None, [], 0
    memory = ReductionMemory()
    for messages in _requests(session):
        before = classified_count(memory)
        result = reduce_request(messages, config=ReductionConfig(), policy=POLICY, state=state,
                                estimator=est, memory=memory)
        state = result.state
        per_request.append(classified_count(memory) - before)
        from_scratch += len(result.decisions)
    results = len(result.decisions)
    assert results > 250  # the history really grew
    early, late = per_request[20:100], per_request[-80:]
    # the late requests see three times the history of the early ones, but do the same work
    assert sum(late) / len(late) <= 1.5 * sum(early) / len(early) + 2
    assert max(per_request[1:]) <= 40
    assert sum(per_request) * 10 < from_scratch


def test_r_red_9_incremental_equals_from_scratch_at_every_request(session):
    """The incremental path decides exactly what a from-scratch reduction decides
    (R-RED-3…9, R-POL-2), at every request of a session with reads, edits, repeats and trims."""
    est, state, memory = TokenEstimator(), None, ReductionMemory()
    actions = set()
    for messages in _requests(session)[:150]:
        incremental = reduce_request(messages, config=ReductionConfig(), policy=POLICY,
                                     state=state, estimator=est, memory=memory)
        scratch = reduce_request(messages, config=ReductionConfig(), policy=POLICY,
                                 state=state, estimator=est)
        _same(incremental, scratch)
        actions |= {d.action for d in incremental.decisions}
        state = incremental.state
    assert {"kept", "reduced", "trimmed"} <= actions and actions & {"stale", "superseded", "repeat"}


def test_r_red_9_unchanged_results_keep_their_decision_with_a_new_age():
    """A result nothing touched keeps its decision; only its age moves."""
    c = padding(8)  # above min_tool_results_prune: the generic rule's activation is settled
    cid = c.call("Bash", {"command": "ls"}, "a.py\nb.py")
    c.turns(20)
    memory = ReductionMemory()
    first = reduce_request(c.messages, config=ReductionConfig(), policy=POLICY, memory=memory)
    after_first = classified_count(memory)
    c.turns(1)
    second = reduce_request(c.messages, config=ReductionConfig(), policy=POLICY, state=first.state,
                            memory=memory)
    one, two = decision(first, cid), decision(second, cid)
    assert (two.action, two.rule, two.age) == (one.action, one.rule, one.age + 1)
    assert f"at age {one.age + 1}" in two.reason
    assert classified_count(memory) == after_first  # nothing re-classified
    assert second.messages[one.message_index] is first.messages[one.message_index]  # same object


def test_r_red_9_replaced_middle_message_is_read_again():
    """R-RED-1: when a message in the middle of the history is replaced (a fold
    rewrote it), the engine works on the new text, not on what it scanned before."""
    c = Conv()
    cid = c.call("Bash", {"command": "make"}, lines(300))
    c.turns(3)
    memory = ReductionMemory()
    first = c.reduce(memory=memory)
    assert decision(first, cid).action == "reduced"
    note = "[Identical output appears again later; this earlier copy was folded.]"
    c.messages[2] = Message(role="tool", content=(ToolResultBlock(call_id=cid, text=note),))
    second = c.reduce(state=first.state, memory=memory)
    assert sent_text(second, cid) == note
    assert decision(second, cid).bytes == len(note.encode())


def test_r_red_9_group_window_moves_trim_older_results():
    """R-POL-2 with the incremental path: a result that leaves the preserve_recent_tool_groups
    window is trimmed at the request where it leaves, not before."""
    c = Conv()
    policy = ContextPolicy(preserve_recent_tool_groups=2)
    cid = c.call("Bash", {"command": "cat notes"}, "\n".join(f"note {i}: keep it" for i in range(80)))
    c.call("Bash", {"command": "echo 1"}, "1")
    memory = ReductionMemory()
    state = reduce_request(c.messages, config=ReductionConfig(enabled=False), policy=policy,
                           memory=memory).state
    assert decision(reduce_request(c.messages, config=ReductionConfig(enabled=False), policy=policy,
                                   state=state, memory=memory), cid).action == "kept"
    c.call("Bash", {"command": "echo 2"}, "2")
    c.messages.append(Message(role="user", content=(TextBlock(text="next"),)))
    third = reduce_request(c.messages, config=ReductionConfig(enabled=False), policy=policy,
                           state=state, memory=memory)
    assert decision(third, cid).action == "trimmed"
    assert "group rank 2" in decision(third, cid).reason
