"""A replay's work and memory grow linearly with the number of messages (R-BOUND-1).

Sessions of many tiny messages (``bench/tiny.py``) are the worst case: every tool result is too
small for a reduction to pass the saving gate, so the gate keeps more and more of them waiting,
and each step adds only a few messages to a long history. The checks count work instead of
timing it: the Python function calls of a whole replay (cProfile's count) and its peak Python
memory (tracemalloc) between 1,000 and 4,000 messages, where quadratic work would grow sixteen
times. The incremental paths are also checked against from-scratch results on the same session.
"""

from __future__ import annotations

import cProfile
import json
import pstats
import sys
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
from iris.context.policy import ContextPolicy
from iris.reduction import ReductionConfig, ReductionMemory, reduce_request
from iris.replay import ReplayOptions, replay
from iris.tokens import TokenEstimator

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from tiny import tiny_session


def _calls_and_peak(messages: int) -> tuple[int, int, int]:
    """(function calls, peak traced bytes, steps) of one replay of ``messages`` tiny messages
    that keeps no request bodies (as a store sink or a summary does)."""
    session = tiny_session(messages)
    options = ReplayOptions(keep_bodies=False)
    profile = cProfile.Profile()
    profile.enable()
    replay(session, options=options)
    profile.disable()
    calls = sum(row[1] for row in pstats.Stats(profile).stats.values())  # pyright: ignore[reportAttributeAccessIssue]
    tracemalloc.start()
    replay(session, options=options)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return calls, peak, len(session.index.batches)


def test_r_bound_1_replay_work_and_memory_grow_linearly_with_messages():
    """R-BOUND-1: four times the messages (and steps) cost at most about four times the function
    calls and the peak memory of the replay; before, each step rebuilt one decision per tool
    result of the whole history and decided every result the saving gate kept again."""
    small_calls, small_peak, small_steps = _calls_and_peak(1000)
    big_calls, big_peak, big_steps = _calls_and_peak(4000)
    assert big_steps >= 4 * small_steps - 2  # the sessions really differ fourfold
    assert big_calls / small_calls < 4.5, (small_calls, big_calls)
    assert big_peak / small_peak < 4.5, (small_peak, big_peak)


def test_r_bound_1_waiting_results_decide_as_from_scratch():
    """R-BOUND-1, R-RED-9: results the saving gate keeps wait without being decided again at every
    request, and each request's decisions (read after later requests were reduced) still equal a
    from-scratch reduction of that request: ages, the saving figure in the kept reason, messages
    and the carried state."""
    session = tiny_session(600)
    est, memory, state = TokenEstimator(), ReductionMemory(), None
    pairs = []
    for batch in session.index.batches:
        messages = session.messages[:batch.assistant_message]
        kwargs = {"config": ReductionConfig(), "policy": ContextPolicy(), "state": state,
                  "estimator": est}
        incremental = reduce_request(messages, memory=memory, **kwargs)
        pairs.append((incremental, reduce_request(messages, **kwargs)))
        state = incremental.state
    tracker = memory.tracker
    assert tracker is not None and len(tracker.pending) > 50  # many results wait at the gate
    waiting = Counter(d.rule for d in pairs[-1][0].decisions)["min_incremental_saved_tokens"]
    assert waiting == len(tracker.pending)
    for k, (incremental, scratch) in enumerate(pairs):
        assert incremental.decisions == scratch.decisions, k
        assert incremental.messages == scratch.messages, k
        assert (incremental.tokens_before, incremental.tokens_after) == (scratch.tokens_before,
                                                                         scratch.tokens_after)
        assert dict(incremental.state.frozen) == dict(scratch.state.frozen)
    # per request only the new results and those whose age crossed one of the (at most nine)
    # age gates were classified, not every waiting result again (that made ~10 times as many)
    assert memory.classified < 10 * len(pairs[-1][0].decisions)


def test_r_bound_1_tiny_message_replay_records_equal_without_step_memory():
    """R-BOUND-1, R-PREP-6: the replay of a tiny-message session gives byte-identical records with
    every step decided from scratch (``incremental=False``)."""
    session = tiny_session(450)
    fast = replay(session)
    slow = replay(session, options=ReplayOptions(incremental=False))
    assert len(fast.preparations) == 149
    assert (json.dumps(fast.model_dump(mode="json"), sort_keys=True)
            == json.dumps(slow.model_dump(mode="json"), sort_keys=True))
    first = fast.preparations[10]
    request = fast.request(first)
    assert request is not None and request.ref == slow.requests[first.preparation_id].ref


def test_r_bound_1_a_replay_that_is_not_saved_keeps_no_request(tmp_path):
    """R-BOUND-1: ``workbench replay FILE`` without ``--name`` keeps no final request (each holds
    the whole window, so all of them grow with steps × window); its records are those of a replay
    that keeps them, and with ``--name`` the requests are kept for the store."""
    from workbench.services.replay import replay_session

    session = tiny_session(300)
    kept, kept_bundle = replay_session(session, workspace_root=tmp_path)
    light, light_bundle = replay_session(session, workspace_root=tmp_path, keep_bodies=False)
    assert light.requests == {} and light_bundle.requests == {}
    assert len(kept.requests) == len(kept.preparations) == 99 and kept_bundle.requests
    assert light.preparations == kept.preparations
