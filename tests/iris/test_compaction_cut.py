"""Cut points (R-CMP-5): tool groups never split, unanswered calls kept, the 6-turn/5% tail,
oversized turns, the archival profile and the `auto` choice."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iris.compaction import choose_cut, resolve_profile, safe_cuts
from iris.session import Message, TextBlock, ToolCallBlock, ToolResultBlock, index_session
from iris.tokens import default_estimator

EST = default_estimator()


def user(text):
    return Message(role="user", content=(TextBlock(text=text),))


def said(text):
    return Message(role="assistant", content=(TextBlock(text=text),))


def call(*ids, text=""):
    blocks = ((TextBlock(text=text),) if text else ()) + tuple(
        ToolCallBlock(id=i, name="read", arguments={"path": f"{i}.py"}) for i in ids)
    return Message(role="assistant", content=blocks)


def result(i, text="x", error=False):
    return Message(role="tool", content=(ToolResultBlock(call_id=i, text=text, is_error=error),))


def turn(n, words=5):
    return [user(f"request {n} " + "w " * words), call(f"c{n}"), result(f"c{n}", "r " * words),
            said(f"done {n}")]


def test_r_cmp_5_cut_never_splits_a_tool_group():
    """R-CMP-5: no safe cut lies between a call and its results (parallel results included)."""
    h = [user("go"), call("a", "b"), result("a"), result("b"), said("ok")]
    assert safe_cuts(h) == (1, 4, 5)


def test_r_cmp_5_unanswered_calls_stay_in_tail():
    """R-CMP-5: an assistant message with unanswered calls is never archived."""
    h = [user("go"), said("hm"), call("a"), result("a"), user("more"), call("z")]
    cuts = safe_cuts(h)
    assert max(cuts) == 5 and 6 not in cuts


def test_r_cmp_5_previous_checkpoint_alone_is_not_a_cut():
    """R-CMP-9/R-CMP-5: archiving only the previous checkpoint gains nothing."""
    cp = Message(role="user", content=(TextBlock(text="[Context Summary]"),),
                 is_compaction_summary=True, synthetic=True)
    assert safe_cuts([cp, user("x")]) == (2,)
    assert choose_cut([cp], profile="continuation", input_budget=96000, recent_target=14400,
                      estimator=EST).cut_index is None


def test_r_cmp_5_continuation_keeps_up_to_six_turns_within_budget():
    """R-CMP-5: continuation keeps the last 6 complete turns when they fit in the tail budget
    (the recent target; 4800 = ceil(96000 × 0.05), the Chord-style ratio)."""
    h = [m for n in range(10) for m in turn(n)]
    plan = choose_cut(h, profile="continuation", input_budget=96000, recent_target=4800,
                      estimator=EST)
    assert plan.tail_turns == 6 and plan.cut_index == 16 and plan.tail_budget == 4800


def test_r_cmp_5_tail_shrinks_to_fit_five_percent():
    """R-CMP-5: fewer turns when six do not fit in the tail budget (the recent target)."""
    h = [m for n in range(10) for m in turn(n, words=150)]
    budget = 2000  # ceil(40000 × 0.05)
    plan = choose_cut(h, profile="continuation", input_budget=40000, recent_target=budget,
                      estimator=EST)
    assert plan.cut_index is not None
    tail = sum(EST.message_tokens(m) for m in h[plan.cut_index:])
    assert 1 <= plan.tail_turns < 6 and tail <= budget
    bigger = sum(EST.message_tokens(m) for m in h[plan.cut_index - 4:])
    assert bigger > budget  # one more turn would not fit


def test_r_cmp_5_oversized_turn_keeps_largest_safe_suffix():
    """R-CMP-5: an oversized last turn keeps its largest safe suffix within the budget."""
    h = [user("go"), call("a"), result("a", "big " * 3000), call("b"), result("b", "s"),
         said("small intent")]
    plan = choose_cut(h, profile="continuation", input_budget=20000, recent_target=1000,
                      estimator=EST)
    assert plan.cut_index == 3 and "oversized" in plan.reason
    assert plan.cut_index in safe_cuts(h)


def test_r_cmp_5_archival_keeps_no_raw_tail():
    """R-CMP-5: the archival profile keeps no raw tail."""
    h = [m for n in range(3) for m in turn(n)]
    plan = choose_cut(h, profile="archival", input_budget=96000, recent_target=14400,
                      estimator=EST)
    assert plan.cut_index == len(h) and plan.profile == "archival"


def test_r_cmp_5_auto_profile_choice():
    """Reference §2.3: auto is continuation mid-work or with error evidence, else archival."""
    done = [user("go"), call("a"), result("a"), said("all done")]
    assert resolve_profile("auto", done) == "archival"
    assert resolve_profile("auto", done[:3]) == "continuation"
    failing = [user("go"), call("a"), result("a", "Error", error=True), said("it failed")]
    assert resolve_profile("auto", failing) == "continuation"
    assert resolve_profile("archival", done[:3]) == "archival"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["user", "text", "call1", "call2", "open"]), min_size=1,
                max_size=25))
def test_r_cmp_5_property_no_cut_orphans_a_result(shape):
    """R-CMP-5 (property): for any history, every safe cut leaves no call/result pair split and
    no unanswered call in the head."""
    h: list[Message] = []
    for n, kind in enumerate(shape, start=1):
        if kind == "user":
            h.append(user(f"u{n}"))
        elif kind == "text":
            h.append(said(f"t{n}"))
        elif kind == "call1":
            h += [call(f"a{n}"), result(f"a{n}")]
        elif kind == "call2":
            h += [call(f"a{n}", f"b{n}"), result(f"a{n}"), result(f"b{n}")]
        else:
            h.append(call(f"o{n}"))
    idx = index_session(h)
    for cut in safe_cuts(h):
        for cid, loc in idx.calls.items():
            res = idx.results.get(cid)
            if res is None:
                assert loc.message >= cut
            else:
                assert (loc.message < cut) == (res.message < cut)


def test_r_cmp_5_an_unanswered_call_in_the_recent_tail_pulls_the_cut_before_its_assistant(tmp_path):
    """R-CMP-5 (reference §2.3: the cut also moves before any assistant message of the recent
    tail that has unanswered tool calls), through the whole compaction: the turn budget would cut
    after the assistant whose call has no result, and the cut lands just before that assistant,
    which stays in the kept tail with its call (the plan; whether the summary then fits is the
    success condition's business, R-CMP-8)."""
    from iris.compaction import (
        CompactionEnvironment,
        CompactionRequest,
        ExtractiveSummariser,
        compact,
        thresholds,
    )
    from iris.config import parse_config
    from iris.prompts import PromptSnapshot

    big = "line of code here\n" * 300
    h = [user("Build the thing. " * 20), said("plan " + big), call("open", text="reading"),
         said("waiting " + big), user("go on")]
    cfg = parse_config({"compaction": {"input_budget_tokens": 20000, "threshold": 0.3}})
    env = CompactionEnvironment(config=cfg, thresholds=thresholds(cfg), prompts=PromptSnapshot.defaults(),
                                summariser=ExtractiveSummariser(), work_dir=tmp_path, estimator=EST)
    out = compact(CompactionRequest(history=tuple(h[:-1]), current_request=h[-1],
                                    request_tokens=EST.request_tokens(h)), env)
    from iris.compaction.records import PlanDecision

    (plan,) = [d for d in out.decisions if isinstance(d, PlanDecision)]
    assert plan.cut_index == 2 and "oversized turn" in plan.reason
    assert any(b.id == "open" for m in h[plan.cut_index:] for b in m.tool_calls)


def _first_unanswered_assistant(h):
    idx = index_session(h)
    return min(g.assistant_message for g in idx.groups if not g.closed)


BIG = "line of code here\n" * 300

# Each documented case of the rule "an assistant message with an unanswered call pulls the cut to
# just before it" (reference §2.3; R-CMP-5: a call never separated from its result): the history,
# the profile, the recent target (the tail budget), the cut expected and a word of its reason.
UNANSWERED_CASES = {
    # the turn path would keep the last 6 turns, starting after the interrupted call
    "turn budget would cut after it": (
        [user("Port the parser."), user("Plan first."), call("p", text="reading"),
         user("continue"), *[m for n in range(3, 9) for m in turn(n)]],
        "continuation", 14400, 2, "oversized turn"),
    # the largest safe suffix within the tail budget would start after it
    "token budget would cut after it": (
        [user("Port the parser."), said("plan"), call("p", text="reading"), said("waiting"),
         call("a"), result("a", BIG), said("small")],
        "continuation", 50, 2, "smallest safe tail kept"),
    # the cut would fall between the assistant's call and its (missing) result
    "between the call and its missing result": (
        [user("Build the thing. " * 20), said("plan " + BIG), call("open", text="reading"),
         said("waiting " + BIG)],
        "continuation", 1000, 2, "oversized turn"),
    "the last message": (
        [*turn(0), *turn(1), user("next"), call("z")], "continuation", 10, 9,
        "smallest safe tail kept"),
    "several, the earliest pulls": (
        [user("go"), said("plan"), call("o1"), user("go on"), call("a"), result("a"), call("o2"),
         user("and then"), said("ok")],
        "continuation", 14400, 2, "oversized turn"),
    "a pending call with a user message after": (
        [user("go"), said("plan"), call("a"), result("a", BIG), call("p"),
         user("stop, do X instead")],
        "continuation", 100, 4, "largest safe suffix within the tail budget"),
    "auto picks continuation": (
        [user("go"), said("plan"), call("a"), result("a", BIG), call("p"),
         user("stop, do X instead")],
        "auto", 100, 4, "largest safe suffix within the tail budget"),
    "archival, the assistant not the last": (
        [user("go"), said("plan"), call("o1"), user("go on"), call("a"), result("a"), call("o2"),
         user("and then"), said("ok")],
        "archival", 14400, 2, "unanswered calls stay in the tail"),
    "archival, the last assistant": (
        [user("go"), said("plan"), call("a"), result("a", BIG), call("p"),
         user("stop, do X instead")],
        "archival", 14400, 4, "unanswered calls stay in the tail"),
}


@pytest.mark.parametrize("case", sorted(UNANSWERED_CASES))
def test_r_cmp_5_an_unanswered_call_pulls_the_cut_to_just_before_its_assistant(case):
    """R-CMP-5 (reference §2.3: the cut moves before any assistant message with unanswered
    calls), for each way the cut is chosen: the turn path, the largest safe suffix within the
    token budget, no fitting suffix, the assistant last, several of them, a user message after
    the pending call, ``auto`` and the archival profile (which keeps no raw tail otherwise). The
    cut lands just before the earliest such assistant, which stays in the tail with its call; the
    same history with those assistants saying their text instead of calling is cut after it."""
    h, profile, recent, expected, reason = UNANSWERED_CASES[case]
    plan = choose_cut(h, profile=profile, input_budget=20000, recent_target=recent,
                      estimator=EST)
    assert plan.cut_index == expected == _first_unanswered_assistant(h), plan
    assert reason in plan.reason
    unanswered = set(index_session(h).unanswered_calls)
    kept = {b.id for m in h[plan.cut_index:] for b in m.tool_calls}
    assert unanswered <= kept
    pending = {g.assistant_message for g in index_session(h).groups if not g.closed}
    plain = [said(m.text or "calling") if i in pending else m for i, m in enumerate(h)]
    unpulled = choose_cut(plain, profile=profile, input_budget=20000, recent_target=recent,
                          estimator=EST)
    assert unpulled.cut_index is not None and unpulled.cut_index > expected, unpulled


def test_r_cmp_5_archival_profile_keeps_an_interrupted_call_in_the_tail():
    """R-CMP-5 (reference §2.3) under the archival profile, which keeps no raw tail otherwise:
    the user interrupted call c2 and the conversation went on; the cut is pulled to just before
    the assistant holding c2 (not past it, archiving the call without its result). Only an agent
    profile (``archive_orphans``: the agent compacted in the middle of the call) archives it."""
    h = [user("port the parser"), call("c1"), result("c1"), call("c2"), user("continue"),
         call("c3"), result("c3"), user("and the lexer"), call("c4"), result("c4")]
    plan = choose_cut(h, profile="archival", input_budget=100000, recent_target=15000,
                      estimator=EST)
    assert plan.cut_index == 3 and plan.reason == "archival: unanswered calls stay in the tail"
    agent = choose_cut(h, profile="archival", input_budget=100000, recent_target=15000,
                       estimator=EST, archive_orphans=True)
    assert agent.cut_index == len(h) and agent.reason == "archival: no raw tail"


@pytest.mark.parametrize("profile", ["continuation", "archival"])
def test_r_cmp_5_a_pull_that_leaves_only_the_task_anchor_is_no_new_cut(profile):
    """R-CMP-5/R-CMP-8: the call right after the original request is unanswered, so the only cut
    it allows archives nothing but the task anchor: no new cut point (never a cut past the
    assistant)."""
    h = [user("Port the parser. " * 50), call("p", text="reading"), user("continue"),
         said("working " + BIG)]
    assert safe_cuts(h) == (1,)
    plan = choose_cut(h, profile=profile, input_budget=20000, recent_target=500, estimator=EST)
    assert plan.cut_index is None and "task anchor" in plan.reason


@pytest.mark.parametrize("agent_rules", [None, "claude-code"])
def test_r_cmp_5_archival_compaction_keeps_an_interrupted_call_unless_an_agent_profile(
        tmp_path, agent_rules):
    """R-CMP-5 through the whole compaction with ``profile: archival``: the interrupted call
    (no result, the conversation went on) pulls the cut to just before its assistant, which the
    applied history keeps after the checkpoint with its call. An agent profile
    (``compaction.agent_rules``: the agent compacted in the middle of the call, R-TWIN-3)
    archives it with the rest and keeps no raw tail."""
    from iris.compaction import (
        CompactionEnvironment,
        CompactionRequest,
        ExtractiveSummariser,
        compact,
        thresholds,
    )
    from iris.compaction.records import PlanDecision
    from iris.config import parse_config
    from iris.prompts import PromptSnapshot

    h = [user("Port the parser. " * 20), call("c1"), result("c1", BIG), said("read it " + BIG),
         call("c2", text="running the tests"), user("continue"), call("c3"), result("c3", BIG),
         said("ported " + BIG), user("and the lexer")]
    fields = {"input_budget_tokens": 20000, "threshold": 0.3, "profile": "archival"}
    cfg = parse_config({"compaction": {**fields, "agent_rules": agent_rules}})
    env = CompactionEnvironment(config=cfg, thresholds=thresholds(cfg),
                                prompts=PromptSnapshot.defaults(),
                                summariser=ExtractiveSummariser(), work_dir=tmp_path,
                                estimator=EST)
    out = compact(CompactionRequest(history=tuple(h), current_request=h[-1],
                                    request_tokens=EST.request_tokens(h)), env)
    (plan,) = [d for d in out.decisions if isinstance(d, PlanDecision)]
    assert out.status == "applied", out.decisions
    calls = [b.id for m in out.history for b in m.tool_calls]
    if agent_rules is None:
        assert plan.cut_index == 4 and out.history[1:] == tuple(h[4:])
        assert calls == ["c2", "c3"]
    else:
        assert plan.cut_index == len(h) and calls == []
