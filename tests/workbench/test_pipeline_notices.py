"""Pressure notices (R-CMP-11), the compaction grace (R-CMP-12) and the wrap-up grace (R-RED-9)
as the replayed pipeline really applies them.

Sessions are built in memory with recorded provider usage chosen so each line is crossed at a
known step: budget 96,000 → threshold line 76,800, reminder line 57,600. Every stage runs for real.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from iris.config import parse_config
from iris.replay import replay
from iris.session import (
    Message,
    ModelSwitch,
    Session,
    SessionHeader,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)
from record_access import request_of, stage_of

from workbench.importers.native import load_native

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
DRIVEN = parse_config({"compaction": {"input_budget_tokens": 96000, "model_driven": True}})
PLAIN = parse_config({"compaction": {"input_budget_tokens": 96000}})
#: provider prompt tokens of each response: the reading of step k is response k-1's
RAMP = (1000, 50000, 58000, 60000, 70000, 78000, 79000, 80000, 81000)
REMINDER_STEP, THRESHOLD_STEP = 3, 6


def user(text: str) -> Message:
    return Message(role="user", content=(TextBlock(text=text),))


def answer(text: str, prompt_tokens: int = 1000) -> Message:
    return Message(role="assistant", content=(TextBlock(text=text),),
                   usage=Usage(input_tokens=prompt_tokens, output_tokens=10))


def call(cid: str, name: str, **args) -> Message:
    return Message(role="assistant", content=(ToolCallBlock(id=cid, name=name, arguments=args),),
                   usage=Usage(input_tokens=1000, output_tokens=10))


def result(cid: str, text: str) -> Message:
    return Message(role="tool", content=(ToolResultBlock(call_id=cid, text=text),))


def ramp_session(readings=RAMP, sid="ramp", switches=()) -> Session:
    messages = []
    for i, n in enumerate(readings):
        messages += [user(f"question {i}"), answer(f"answer {i}", n)]
    return Session(header=SessionHeader(session_id=sid, model="a"), messages=tuple(messages),
                   model_switches=switches)


def notices_of(p):
    return [d for s in p.stages for d in s.decisions if d.kind == "pressure-notice"]


def notice_keys(r, p):
    request = r.request(p)  # None for a failed step
    return [m.key for m in request.marks if m.origin == "notice"] if request else None


@pytest.fixture(scope="module")
def driven():
    return replay(ramp_session(), DRIVEN)


def test_r_cmp_11_reminder_notice_once_at_the_crossing_step(driven):
    """R-CMP-11: the step whose reading first reaches the reminder line gets one durable notice
    (a synthetic <system-reminder> message, marked), recorded as a pressure-notice decision."""
    found = {p.step_index: notices_of(p) for p in driven.preparations}
    assert all(not found[k] for k in range(REMINDER_STEP))
    (d,) = found[REMINDER_STEP]
    assert (d.notice, d.delivered, d.line, d.reading_tokens) == ("reminder", True, 57600, 58010)
    assert d in stage_of(driven.preparations[REMINDER_STEP], "compaction").decisions
    p = driven.preparations[REMINDER_STEP]
    request = request_of(driven, p)
    last, mark = request.messages[-1], request.marks[-1]
    assert last.role == "user" and last.synthetic and last.text == d.text
    assert last.text.startswith("<system-reminder>") and "keep a safe continuation state" in last.text
    assert (mark.origin, mark.key, mark.marks) == ("notice", "pressure-notice:reminder", ("notice",))
    assert stage_of(p, "compaction").after_input_tokens == stage_of(p, "compaction").before_input_tokens + d.tokens


def test_r_cmp_11_reminder_never_repeats_and_is_replayed_from_history(driven):
    """R-CMP-11: later requests carry the delivered notice from the history; none is added again."""
    for p in driven.preparations[REMINDER_STEP + 1:THRESHOLD_STEP]:
        assert notices_of(p) == []
        assert notice_keys(driven, p) == ["pressure-notice:reminder"]
        request = request_of(driven, p)
        at = [m.key for m in request.marks].index("pressure-notice:reminder")
        # stays where it was delivered: after that step's input, before that step's reply
        assert request.messages[at - 1].text == f"question {REMINDER_STEP}"
        assert request.messages[at + 1].text == f"answer {REMINDER_STEP}"


def test_r_cmp_11_threshold_notice_at_the_threshold_only(driven):
    """R-CMP-11: at the threshold the warning is the one new notice (the reminder is not
    repeated), and it too is never duplicated."""
    (d,) = notices_of(driven.preparations[THRESHOLD_STEP])
    assert (d.notice, d.delivered, d.line) == ("threshold", True, 76800)
    assert "compaction is about to start" in d.text
    for p in driven.preparations[THRESHOLD_STEP:THRESHOLD_STEP + 2]:
        assert notice_keys(driven, p) == ["pressure-notice:reminder", "pressure-notice:threshold"]
    assert notices_of(driven.preparations[THRESHOLD_STEP + 1]) == []
    total = [d.notice for p in driven.preparations for d in notices_of(p)]
    assert total == ["reminder", "threshold"]


def test_r_cmp_12_first_crossing_deferred_by_two_requests_after_a_reminder(driven):
    """R-CMP-12: with model_driven, the first crossing and the next request go out as usual
    (the reminder came earlier in the window); the third enters compaction."""
    stages = [stage_of(p, "compaction") for p in driven.preparations]
    assert stages[THRESHOLD_STEP].status == stages[THRESHOLD_STEP + 1].status == "skipped"
    assert "grace: 2 request(s)" in stages[THRESHOLD_STEP].note
    assert "grace: 1 request(s)" in stages[THRESHOLD_STEP + 1].note
    assert stages[THRESHOLD_STEP + 2].status != "skipped"
    assert "grace of this window is spent" in stages[THRESHOLD_STEP + 2].note


def test_r_cmp_12_no_grace_when_the_threshold_comes_without_a_reminder():
    """R-CMP-12: a jump over the threshold with no earlier reminder compacts at once."""
    r = replay(ramp_session((1000, 78000, 79000), sid="jump"), DRIVEN)
    stage = stage_of(r.preparations[2], "compaction")
    assert stage.status != "skipped" and "no grace" in stage.note
    assert all(d.notice != "reminder" for p in r.preparations for d in notices_of(p))


def test_r_cmp_11_without_model_driven_the_line_is_recorded_not_injected():
    """R-CMP-11 + seed 002: request-side notices only with model_driven; the line reached is
    still recorded once (delivered false) and no grace defers compaction."""
    r = replay(ramp_session(sid="plain"), PLAIN)
    (d,) = notices_of(r.preparations[REMINDER_STEP])
    assert d.notice == "reminder" and not d.delivered and "model_driven" in d.reason
    assert all(notice_keys(r, p) in ([], None) for p in r.preparations)
    assert sum(len(notices_of(p)) for p in r.preparations) == 1
    assert stage_of(r.preparations[THRESHOLD_STEP], "compaction").status != "skipped"


def test_r_cmp_11_model_switch_opens_a_new_window():
    """R-CMP-11/12: a model switch resets the window: the old notice is withdrawn and the line,
    still reached, is reported once in the new window."""
    at = 2 * (REMINDER_STEP + 2)  # the user message of step REMINDER_STEP + 2
    s = ramp_session(RAMP[:6], sid="switch", switches=(ModelSwitch(at_message=at, model="b"),))
    r = replay(s, DRIVEN)
    kinds = [(p.step_index, d.notice) for p in r.preparations for d in notices_of(p)]
    assert kinds == [(REMINDER_STEP, "reminder"), (REMINDER_STEP + 2, "reminder")]
    switched = request_of(r, r.preparations[REMINDER_STEP + 2])
    assert [m.key for m in switched.marks if m.origin == "notice"] == ["pressure-notice:reminder"]
    assert switched.marks[-1].origin == "notice"  # the new window's notice, not the old one


def test_r_cmp_11_an_applied_compaction_resets_the_window():
    """R-CMP-11: after an applied compaction the old notices leave the request, and each window
    (opened by an applied compaction or by the sample's model switch) reports each line at most
    once (the long sample compacts under a 96k budget)."""
    session = load_native(SAMPLES / "long_session.jsonl")
    r = replay(session, DRIVEN)
    applied = [p.step_index for p in r.preparations if p.compaction_applied]
    assert applied
    switched = [next(p.step_index for p in r.preparations if p.response_message_index > s.at_message)
                for s in session.model_switches]
    bounds = sorted({0, *(k + 1 for k in applied), *switched, len(r.preparations)})
    reminders = 0
    for lo, hi in pairwise(bounds):
        window = [d.notice for p in r.preparations[lo:hi] for d in notices_of(p)]
        assert window.count("reminder") <= 1 and window.count("threshold") <= 1
        reminders += window.count("reminder")
    assert reminders >= 2, "a reminder in the first window and again in a later one"
    for k in applied:
        assert notice_keys(r, r.preparations[k]) == []
        nxt = r.preparations[k + 1]
        assert notice_keys(r, nxt) == [f"pressure-notice:{d.notice}" for d in notices_of(nxt)]


LOG = "\n".join(f"tests/test_mod{i}.py::test_case_{i} PASSED [{i}%]" for i in range(120))


def todo_session(status: str, *between: Message) -> Session:
    """Tests run (a long shell log), then the todo list updated, then two replies."""
    todos = [{"content": "run the tests", "status": status, "activeForm": "Running the tests"}]
    return Session(header=SessionHeader(session_id=f"todo-{status}-{len(between)}"), messages=(
        user("run the tests"), call("b1", "Bash", command="pytest -q"), result("b1", LOG),
        call("t1", "TodoWrite", todos=todos), result("t1", "Todos have been updated"),
        *between, answer("all done"), answer("summary sent")))


def shell_decision(p):
    return next(d for d in stage_of(p, "trim_old_bodies").decisions if d.message_index == 2)


def test_r_red_9_wrap_up_grace_after_todos_complete():
    """R-RED-9: after every todo is completed the next request keeps the low-value reduction
    back (wrap_up_grace_requests 1); the request after it reduces as usual."""
    r = replay(todo_session("completed"))
    grace = shell_decision(r.preparations[2])
    assert grace.kind == "kept-recent" and "wrap-up grace" in grace.reason
    later = shell_decision(r.preparations[3])
    assert later.kind == "reduced" and later.rule == "shell_success_age_turns"


def test_r_red_9_no_wrap_up_grace_while_a_todo_is_open():
    """R-RED-9: an unfinished todo list gives no grace: the same log is reduced at once."""
    r = replay(todo_session("in_progress"))
    assert shell_decision(r.preparations[2]).kind == "reduced"


def test_r_red_9_a_new_user_question_ends_the_wrap_up_grace():
    """R-RED-9 + seed 002: a new user question after the completed list resumes normal trimming."""
    r = replay(todo_session("completed", user("one more question")))
    assert shell_decision(r.preparations[2]).kind == "reduced"


def test_r_ui_2_step_through_describes_the_notice(driven):
    """R-UI-2: the step-through's decision table shows the pressure notice with its numbers."""
    from workbench.views.step_through import decision_table

    table = decision_table(driven.preparations[REMINDER_STEP], stage="compaction")
    (row,) = table.loc[table["kind"] == "pressure-notice"].to_dict("records")
    assert row["what"].startswith("reminder line 57,600 reached at 58,010 tokens")
    assert "notice added" in row["what"]
