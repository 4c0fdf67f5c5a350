"""Repeats, recall protection, frozen prefix, incremental gate and wrap-up grace (R-RED-9)."""

from __future__ import annotations

import time

from iris.reduction import ReductionConfig, ReductionMemory, todos_all_completed
from iris.tokens import TokenEstimator
from reduction_builders import Conv, decision, lines, sent_text


def test_r_red_9_repeated_identical_output_collapsed():
    """R-RED-9: an older identical output of the same call becomes the repeated marker."""
    c = Conv()
    out = lines(20, "entry {i}")
    old = c.call("Bash", {"command": "ls -la"}, out)
    new = c.call("Bash", {"command": "ls -la"}, out)
    res = c.reduce()
    assert decision(res, old).action == "repeat"
    assert sent_text(res, old) == "[Repeated bash output omitted; an identical call appears later.]"
    assert decision(res, new).action == "kept"


def test_r_red_9_time_varying_rerun_is_summarised_not_collapsed():
    """R-RED-9: the same command with different output is not a repeat; the old copy is summarised."""
    c = Conv()
    old = c.call("Bash", {"command": "make test"}, lines(200, "run 1 line {i} passed"))
    c.call("Bash", {"command": "make test"}, lines(200, "run 2 line {i} passed"))
    res = c.reduce()
    d = decision(res, old)
    assert (d.action, d.category) == ("reduced", "shell_success")


def test_r_red_9_frozen_rendering_reused_byte_for_byte():
    """R-RED-9: a reduced message is frozen; later requests send the same bytes and say so."""
    c = Conv()
    cid = c.call("Bash", {"command": "make"}, lines(300))
    c.turns(2)
    first = c.reduce()
    c.turns(1)
    c.call("Bash", {"command": "echo hi"}, "hi")
    second = c.reduce(state=first.state, config=ReductionConfig(shell_success_bytes=10**6))
    assert sent_text(second, cid) == sent_text(first, cid)
    assert "frozen since request 1" in decision(second, cid).reason
    assert second.state.frozen[cid].text == sent_text(first, cid)


def _big_shell(c: Conv, n: int, size: int = 300) -> list[str]:
    return [c.call("Bash", {"command": f"make part{i}"}, lines(size, f"part {i} " + "line {i}"))
            for i in range(n)]


def test_r_red_9_min_incremental_saved_tokens_reuses_prefix():
    """R-RED-9: with a reduced prefix, a new saving below min_incremental_saved_tokens is deferred; a larger
    one applies."""
    c = Conv()
    _big_shell(c, 1)
    c.turns(2)
    first = c.reduce()
    assert first.state.has_prefix
    small = c.call("Bash", {"command": "make small"}, lines(100))
    c.turns(2)
    res = c.reduce(state=first.state)
    d = decision(res, small)
    assert (d.action, d.rule) == ("kept", "min_incremental_saved_tokens")
    assert "would be reduced by shell_success_age_turns" in d.reason and "< min_incremental_saved_tokens 2,048" in d.reason
    many = _big_shell(c, 3, size=600)
    c.turns(2)
    res2 = c.reduce(state=res.state)
    assert all(decision(res2, i).action == "reduced" for i in [small, *many])


def test_r_red_9_wrap_up_grace_after_todos_completed():
    """R-RED-9: after all todos complete the next request gets wrap_up_grace_requests of grace."""
    c = Conv()
    cid = c.call("Bash", {"command": "make"}, lines(100))
    c.call("TodoWrite", {"todos": [{"content": "a", "status": "completed"}]}, "Todos updated")
    c.turns(1)
    assert todos_all_completed(c.messages)
    graced = c.reduce(todos_completed=True)
    d = decision(graced, cid)
    assert (d.action, d.rule) == ("kept", "wrap_up_grace")
    after = c.reduce(state=graced.state, todos_completed=True)
    assert decision(after, cid).action == "reduced"


def test_r_red_9_recalled_input_protected_for_the_session():
    """R-RED-9: re-issuing a call whose output was reduced protects that input's newest output."""
    c = Conv()
    grep = {"pattern": "needle", "path": "src"}
    hits = "\n".join(f"src/m{i}.py:{i}:needle({i})" for i in range(200))
    old = c.call("Grep", grep, hits)
    c.turns(2)
    first = c.reduce()
    assert decision(first, old).action == "reduced"
    new = c.call("Grep", grep, hits.replace("needle(1)", "needle(one)"))
    c.turns(5)
    res = c.reduce(state=first.state)
    d = decision(res, new)
    assert (d.action, d.rule) == ("kept", "recalled_input_protect")
    assert sent_text(res, old) == sent_text(first, old)  # the old copy stays reduced (frozen)


def test_r_red_9_state_changing_rerun_not_protected():
    """R-RED-9: re-running a test command is a request for fresh results, not a recall."""
    c = Conv()
    old = c.call("Bash", {"command": "pytest -q"}, lines(300, "test {i} passed"))
    c.turns(2)
    first = c.reduce()
    assert decision(first, old).action == "reduced"
    new = c.call("Bash", {"command": "pytest -q"}, lines(300, "test {i} passed again"))
    c.turns(2)
    res = c.reduce(state=first.state)
    assert decision(res, new).rule != "recalled_input_protect"


def test_incremental_replay_describes_each_result_once():
    """A replay over many steps classifies each result's content once and stays fast."""
    c = Conv()
    steps = []
    for i in range(300):
        c.call("Bash", {"command": f"step {i}"}, lines(40 + i % 50, f"s{i} " + "line {i}"))
        steps.append(list(c.messages))
    est, memory = TokenEstimator(), ReductionMemory()
    state = None
    t0 = time.perf_counter()
    for msgs in steps:
        conv = Conv()
        conv.messages = msgs
        res = conv.reduce(state=state, estimator=est, memory=memory)
        state = res.state
    elapsed = time.perf_counter() - t0
    infos = list(memory.results)
    assert len(infos) == 300
    assert elapsed < 20, f"replay of 300 steps took {elapsed:.1f}s"
    assert len(res.decisions) == 300


def test_r_red_9_state_keyed_by_call_id_survives_index_shift():
    """R-RED-9: frozen renderings are keyed by call id; when a compaction shifts indices the rendering is
    rebuilt with the new result:N:B reference instead of reusing a wrong one."""
    from iris.context.policy import ContextPolicy

    c = Conv()
    cid = c.call("Bash", {"command": "make"}, lines(300))
    c.turns(2)
    first = c.reduce(policy=ContextPolicy())
    assert decision(first, cid).ref == "result:2:0"
    c.messages = c.messages[1:]  # the head moved (e.g. a compaction replaced it)
    second = c.reduce(policy=ContextPolicy(), state=first.state)
    d = decision(second, cid)
    assert d.ref == "result:1:0" and d.action == "reduced"
    assert sent_text(second, cid).endswith('[Read back with context_read(ref="result:1:0")]')
