"""The state one preparation step hands to the next is a frozen ``StepCarry``; ``Walk`` is a
cursor over the recorded session that returns new carries and never holds the durable history
(R-PREP-6: the replay's own durable history, step after step)."""

from __future__ import annotations

import dataclasses

import pytest
from iris.preparation.carry import StepCarry
from iris.preparation.state import Part, PreparationState, TokenCache
from iris.preparation.walk import Walk
from iris.session import Message, Session, SessionHeader, TextBlock, ToolCallBlock, Usage
from iris.tokens import TokenEstimator


def _session() -> Session:
    messages = (Message(role="user", content=(TextBlock(text="fix the build"),)),
                Message(role="assistant", content=(ToolCallBlock(id="c1", name="bash",
                                                                arguments={"cmd": "make"}),),
                        usage=Usage(input_tokens=120, output_tokens=5)),
                Message(role="user", content=(TextBlock(text="and the tests"),)),
                Message(role="assistant", content=(TextBlock(text="done"),),
                        usage=Usage(input_tokens=140, output_tokens=5)))
    return Session(header=SessionHeader(session_id="carry"), messages=messages)


def test_walk_advance_returns_a_new_carry_and_leaves_the_given_one_alone():
    session = _session()
    walk = Walk(TokenCache(TokenEstimator()), session)
    start = StepCarry()
    first = walk.advance(session, 1, start)
    assert start.durable == () and start.durable_tokens == 0
    assert [p.history_index for p in first.durable] == [0]
    second = walk.advance(session, 3, first)
    assert [p.history_index for p in second.durable] == [0, 1, 2]
    assert second.durable_tokens == sum(p.tokens for p in second.durable) > 0
    assert [p.history_index for p in first.durable] == [0]
    assert walk.position == 3 and walk.runs == 2 and walk.run_input == "and the tests"
    assert walk.called == {"bash"}
    assert not hasattr(walk, "durable") and not hasattr(walk, "carry")
    with pytest.raises(dataclasses.FrozenInstanceError):  # assigning a frozen field on purpose
        second.durable_tokens = 0  # pyright: ignore[reportAttributeAccessIssue]


def test_carry_changes_are_new_values():
    cache = TokenCache(TokenEstimator())
    text = Message(role="user", content=(TextBlock(text="hello there"),))
    notice = Message(role="user", content=(TextBlock(text="context is getting long"),),
                     synthetic=True)
    parts = (Part(text, cache.message(text), "history", 0),
             Part(notice, cache.message(notice), "notice"))
    carry = StepCarry().with_messages(parts)
    assert carry.durable == parts and carry.durable_tokens == parts[0].tokens + parts[1].tokens
    kept = carry.without_notices()
    assert kept.durable == parts[:1] and kept.durable_tokens == parts[0].tokens
    assert carry.with_messages(parts[:1], reset=True).durable == parts[:1]
    assert carry.with_messages(()) is carry
    state = PreparationState(step_index=3, durable=parts[:1], durable_tokens=parts[0].tokens,
                             diverged=True)
    after = StepCarry.after(state)
    assert (after.durable, after.durable_tokens, after.diverged) == (parts[:1], parts[0].tokens, True)
    assert after.window is None and after.compaction_state is None and len(after.seen) == 0
