"""The six stages (R-PREP-1…4): order, statuses, decisions from the branch taken, no extra estimates.

Sessions are built in memory with the real session model; every stage runs for real (reduction,
selection, compaction with the extractive summariser).
"""

from __future__ import annotations

from pathlib import Path

from iris.config import parse_config
from iris.context import ContextContribution, StaticContextSource, load_context_build_input
from iris.preparation import STAGE_NAMES, DroppedTool, Reduced
from iris.preparation.fold import FOLD_MIN_CHARS
from iris.replay import ReplayEnvironment, replay
from iris.session import Message, Session, SessionHeader, TextBlock, ToolCallBlock, ToolResultBlock, Usage
from iris.tokens import TokenEstimator
from record_access import block_text, of_kind, request_of, stage_of

from workbench.importers.native import load_native

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


def user(text: str) -> Message:
    return Message(role="user", content=(TextBlock(text=text),))


def call(cid: str, name: str, **args) -> Message:
    return Message(role="assistant", content=(ToolCallBlock(id=cid, name=name, arguments=args),),
                   usage=Usage(input_tokens=1000, output_tokens=10))


def result(cid: str, text: str) -> Message:
    return Message(role="tool", content=(ToolResultBlock(call_id=cid, text=text),))


def answer(text: str) -> Message:
    return Message(role="assistant", content=(TextBlock(text=text),),
                   usage=Usage(input_tokens=1000, output_tokens=10))


def session(*messages: Message, sid: str = "t") -> Session:
    return Session(header=SessionHeader(session_id=sid), messages=tuple(messages))


BODY = "\n".join(f"{i:>5}\tline {i} of the ledger module: total = amount * rate" for i in range(60))
assert len(BODY) > FOLD_MIN_CHARS


def reread_session() -> Session:
    """The same file read twice with an identical body, then a final answer."""
    return session(user("Look at ledger.py twice"), call("c1", "Read", file_path="ledger.py"),
                   result("c1", BODY), call("c2", "Read", file_path="ledger.py"),
                   result("c2", BODY), answer("done"))


def test_r_prep_1_one_preparation_per_assistant_response_with_identity():
    """R-PREP-1: every before-model step has a record with budget, lines, ids and phase."""
    s = reread_session()
    r = replay(s)
    assert [p.step_index for p in r.preparations] == [0, 1, 2]
    assert [p.response_message_index for p in r.preparations] == [1, 3, 5]
    for p in r.preparations:
        assert p.phase == "ready" and p.error is None
        assert p.session_id == "t" and p.run_id == "t:run-0" and p.activation == "replay"
        assert p.configuration_snapshot_id == r.configuration_snapshot_id
        assert p.input_budget == r.thresholds.input_budget
        assert p.pressure_line == r.thresholds.pressure_line
        assert p.final_request_ref is None  # no evidence sink: no external reference (R-PREP-1)
        assert p.message_count == len(request_of(r, p).messages)


def test_r_prep_2_six_stages_in_order_with_whole_request_tokens():
    """R-PREP-2: the six stages in order; each stage starts where the previous one ended."""
    r = replay(reread_session())
    for p in r.preparations:
        assert tuple(s.name for s in p.stages) == STAGE_NAMES
        assert p.stages[0].before_input_tokens == 0
        for a, b in zip(p.stages, p.stages[1:]):
            assert a.after_input_tokens == b.before_input_tokens
        assert p.stages[-1].after_input_tokens == p.final_input_tokens


def test_r_prep_2_fold_collapses_identical_reread_to_read_back_note():
    """R-PREP-2/R-PREP-4: the earlier identical body becomes a note naming result:N:B of the later
    copy; the durable history keeps both copies."""
    s = reread_session()
    r = replay(s)
    last = r.preparations[2]
    fold = stage_of(last, "fold_repeats")
    assert fold.status == "entered"
    (d,) = fold.decisions
    assert d.kind == "folded-repeat"
    assert (d.ref, d.read_back, d.tool_name) == ("result:2:0", "result:4:0", "Read")
    assert d.tokens_after < d.tokens_before
    request = request_of(r, last)
    folded = [i for i, m in enumerate(request.marks) if "folded" in m.marks]
    assert [request.marks[i].history_index for i in folded] == [2]
    assert "result:4:0" in request.messages[folded[0]].text
    assert block_text(s.messages[2].content[0]) == BODY  # durable history untouched


def test_r_prep_2_fold_skipped_without_context_read():
    """R-PREP-3: with the context policy off there is no read-back: the fold stage is skipped."""
    cfg = parse_config({"context_policy": {"enabled": False}})
    p = replay(reread_session(), cfg).preparations[2]
    assert stage_of(p, "fold_repeats").status == "skipped"
    assert "context policy disabled" in stage_of(p, "fold_repeats").note


def _contribution_source() -> StaticContextSource:
    filler = "note " * 400
    return StaticContextSource((
        ContextContribution(key="goal", text="Ship the ledger fix", required=True),
        ContextContribution(key="tips", text=filler, required=False, priority=50),
        ContextContribution(key="hints", text=filler, required=False, priority=10),
        ContextContribution(key="extra", text=filler, required=False, priority=50),
    ))


def test_r_prep_4_dropped_optional_in_r_dyn_4_order_with_priority_reason():
    """R-PREP-4/R-DYN-4: under pressure the lowest priority goes first, then the later of equal
    priority; the reason names the priority; required entries are kept-required."""
    cfg = parse_config({"compaction": {"input_budget_tokens": 1000}})
    s = session(user("fix it"), answer("ok"))
    p = replay(s, cfg, environment=ReplayEnvironment(context_source=_contribution_source())).preparations[0]
    drop = stage_of(p, "drop_optional")
    assert drop.status == "entered"
    dropped = [d for d in drop.decisions if d.kind == "dropped-optional"]
    assert [d.key for d in dropped] == ["hints", "extra"]
    assert "priority 10" in dropped[0].reason and "later entry" in dropped[1].reason
    assert p.final_contribution_keys == ("goal", "tips")
    assert "contribution:goal" in p.protected_sources
    required = [d for d in stage_of(p, "assembly").decisions if d.kind == "kept-required"]
    assert [d.key for d in required] == ["goal"]
    assert drop.after_input_tokens < drop.before_input_tokens


def test_r_prep_3_drop_stage_skipped_when_nothing_is_optional():
    """R-PREP-3: a stage with nothing to decide is not entered."""
    p = replay(reread_session()).preparations[0]
    assert stage_of(p, "drop_optional").status == "skipped"


def test_r_pol_1_deferred_tools_are_dropped_until_used():
    """R-POL-1/R-PREP-2: with deferred_tools, schemas of tools not used yet are left out."""
    cfg = parse_config({"context_policy": {"deferred_tools": True}})
    tools = [{"name": "Read", "description": "read a file", "parameters": {}},
             {"name": "WebFetch", "description": "fetch a URL", "parameters": {}}]
    r = replay(reread_session(), cfg, environment=ReplayEnvironment(tools=tools))
    first, last = r.preparations[0], r.preparations[2]
    runner = ("context_read", "context_search")  # the runner's read-back tools are never deferred
    assert first.final_tools == runner
    drops = stage_of(first, "drop_optional").decisions
    dropped_tools = of_kind(drops, DroppedTool)
    assert dropped_tools == list(drops)  # only tool schemas are left out here
    assert {d.tool_name for d in dropped_tools} == {"Read", "WebFetch"}
    assert last.final_tools == ("Read", *runner)
    assert request_of(r, last).dropped == ("WebFetch",)


def test_r_prep_4_trim_decisions_carry_category_rule_and_reference():
    """R-PREP-4: reduced/trimmed decisions come from the reduction engine's branch, with the rule,
    and the final request marks the shortened messages."""
    s = load_native(SAMPLES / "bugfix.jsonl")
    r = replay(s)
    decisions = [(p, d) for p in r.preparations for d in stage_of(p, "trim_old_bodies").decisions]
    changed = [(p, d) for p, d in decisions if d.kind in ("reduced", "trimmed")]
    assert changed, "the bugfix sample has old bodies that get shortened"
    p, d = changed[0]
    assert isinstance(d, Reduced), d  # the first shortened body carries its rule
    assert d.ref == f"result:{d.message_index}:{d.block_index}"
    assert d.rule and d.reason and d.tokens_after < d.tokens_before
    request = request_of(r, p)
    marked = {m.history_index for m in request.marks if {"reduced", "trimmed"} & set(m.marks)}
    assert d.message_index in marked
    assert any(d.kind == "kept-recent" for _, d in decisions)


def test_r_prep_3_compaction_skipped_below_the_line_applied_when_committed():
    """R-PREP-3: compaction is skipped below the threshold and applied only when committed."""
    s = load_native(SAMPLES / "long_session.jsonl")
    default = replay(s)
    assert {stage_of(p, "compaction").status for p in default.preparations} == {"skipped"}
    small = replay(s, parse_config({"compaction": {"input_budget_tokens": 96000}}))
    statuses = [stage_of(p, "compaction").status for p in small.preparations]
    assert "applied" in statuses
    applied = small.preparations[statuses.index("applied")]
    kinds = [d.kind for d in stage_of(applied, "compaction").decisions]
    assert kinds == ["compaction-plan", "compaction-candidate", "compaction-applied"]
    assert applied.compaction_applied
    st = stage_of(applied, "compaction")
    assert st.after_input_tokens < st.before_input_tokens <= applied.input_budget


def test_r_prep_3_rejected_summary_fails_the_step_and_keeps_old_state():
    """R-PREP-3/R-CMP-8: a summary that is not small enough is rejected; the run ends (failed) and
    the durable history stays as it was. (The responses carry no usage, so the local estimate
    triggers only with ``trigger_without_usage``; the retained budget keeps the big first message
    whole, so the checkpoint stays over the pressure line.)"""
    big = "x " * 30000
    s = session(user("please " + big), Message(role="assistant", content=(TextBlock(text="ok"),)),
                user("and now?"), answer("fine"))
    r = replay(s, parse_config({"compaction": {"input_budget_tokens": 20000,
                                               "retain_recent_tokens": 40000,
                                               "trigger_without_usage": True}}))
    anchor_only = r.preparations[0]  # only the task anchor: no new cut point, over the hard limit
    assert anchor_only.phase == "failed" and anchor_only.error is not None
    assert "hard input limit" in anchor_only.error.message
    first = r.preparations[1]
    assert first.phase == "failed" and first.error is not None
    assert first.error.stage == "compaction"
    st = stage_of(first, "compaction")
    assert st.status == "rejected"
    assert [d.kind for d in st.decisions][-1] == "compaction-rejected"
    assert "pressure line" in first.error.message
    assert first.final_request_ref is None and stage_of(first, "final_selection").status == "skipped"
    assert len(r.preparations) == 2  # the replay goes on


def test_r_prep_3_no_cut_point_is_a_candidate_plan():
    """R-PREP-3/R-CMP-8: over the line with nothing to cut: the plan stays a candidate."""
    src = StaticContextSource((ContextContribution(key="big", text="word " * 6000),))
    s = session(answer("hello, how can I help?"))  # step 0 has no history to cut
    p = replay(s, parse_config({"compaction": {"input_budget_tokens": 5000,
                                               "trigger_without_usage": True}}),
               environment=ReplayEnvironment(context_source=src)).preparations[0]
    st = stage_of(p, "compaction")
    assert st.status == "candidate"
    assert st.decisions[0].kind == "compaction-plan" and st.decisions[0].cut_index is None


def test_r_prep_4_no_extra_estimator_calls_for_display():
    """R-PREP-4: a second identical replay encodes nothing new (every count is a cached reuse),
    and the recorded final tokens equal a fresh whole-request estimate of the final request."""
    s = load_native(SAMPLES / "bugfix.jsonl")
    est = TokenEstimator()
    first = replay(s, environment=ReplayEnvironment(estimator=est))
    calls = est.encode_calls
    second = replay(s, environment=ReplayEnvironment(estimator=est))
    assert est.encode_calls == calls
    assert second.preparations == first.preparations
    for p in first.preparations[::7]:
        request = request_of(first, p)
        assert est.request_tokens(request.messages, request.tools) == p.final_input_tokens


def test_r_prep_2_context_yaml_messages_are_assembled_and_protected():
    """R-PREP-2: assembly puts the context.yaml messages first; they are protected sources."""
    s = load_native(SAMPLES / "bugfix.jsonl")
    ctx = load_context_build_input(SAMPLES / "bugfix.context.yaml")
    p = replay(s, environment=ReplayEnvironment(context_input=ctx)).preparations[1]
    assert p.protected_sources[0] == "context:system"
    request = replay(s, environment=ReplayEnvironment(context_input=ctx)).request(p)
    assert request is not None
    assert request.messages[0].role == "system" and request.marks[0].origin == "context"


def test_r_cmp_3_budget_follows_the_model_switch_limits():
    """R-CMP-3: after a recorded model switch the budget comes from the new model's limits."""
    from iris.session import ModelLimits, ModelSwitch

    s = Session(header=SessionHeader(session_id="sw", model="a",
                                     limits=ModelLimits(context=200000, output=64000)),
                messages=(user("hi"), answer("one"), user("again"), answer("two")),
                model_switches=(ModelSwitch(at_message=2, model="b",
                                            limits=ModelLimits(input=50000)),))
    r = replay(s)
    assert [p.input_budget for p in r.preparations] == [136000, 50000]
    assert r.preparations[1].pressure_line == 40000


def test_r_tok_3_after_a_recorded_compaction_the_local_estimate_triggers():
    """R-TOK-3/R-PREP-6: provider usage decides while it measured the replayed history; once the
    recorded agent compacted, its small readings no longer describe the replay's request."""
    big = "ledger " * 40000
    tiny = Usage(input_tokens=100, output_tokens=5)
    base = (user("please read " + big), Message(role="assistant", content=(TextBlock(text="ok"),),
                                                  usage=tiny))
    summary = Message(role="user", content=(TextBlock(text="Summary of the earlier work"),),
                      is_compaction_summary=True)
    last = Message(role="assistant", content=(TextBlock(text="done"),), usage=tiny)
    cfg = parse_config({"compaction": {"input_budget_tokens": 40000}})
    plain = replay(session(*base, user("next"), last), cfg).preparations[1]
    assert stage_of(plain, "compaction").status == "skipped"
    assert "105 < threshold line" in stage_of(plain, "compaction").note  # provider: 100 + 5 output
    # the reading of the response before the compaction still measured the replayed history;
    # the one after it (tiny) measured the agent's compacted context, not the replay's
    after = replay(session(*base, summary, user("next"), last, user("more"), last),
                   cfg).preparations[2]
    assert stage_of(after, "compaction").status != "skipped"
    assert "basis: calibrated_local" in stage_of(after, "compaction").note
    assert after.trigger_basis == "calibrated_local" and after.trigger_tokens is not None
    assert after.trigger_tokens >= 40000 * 0.8
