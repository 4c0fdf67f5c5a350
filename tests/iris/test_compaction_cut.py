"""Cut points (R-CMP-5): tool groups never split, unanswered calls kept, the 6-turn/5% tail,
oversized turns, the archival profile and the `auto` choice."""

from __future__ import annotations

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
