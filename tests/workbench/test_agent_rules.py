"""The agent profiles keyed by the agent's version (R-TWIN-7) and what they keep and count across
the agent's compactions (R-TWIN-3): the rule row chosen from the recorded version and model (an
unknown version falls back and says so), Claude Code 1.0.x compactions recognised, an orphaned
call at the boundary archived by the no-tail profile (the default profile still keeps it in its
tail), files restored from edits and writes, Codex's initial context re-sent, and the count
across the agent's compaction (no calibration learned on the agent's compacted requests, the
agent's own ``preTokens`` at its step, the files each side re-attached left out of the shared
window's offset)."""

from __future__ import annotations

import json
from pathlib import Path

from iris.compaction.agent_rules import parse_version, resolve_agent_rule
from iris.compaction.config import RestoreReads
from iris.compaction.cut import choose_cut
from iris.compaction.restore import restored_reads
from iris.reduction.toolkinds import ToolKindMap
from iris.replay import replay
from iris.session import (
    Message,
    ModelLimits,
    RecordedCompaction,
    Session,
    SessionHeader,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)
from iris.tokens import default_estimator

from workbench.analysis.replay_report import replay_report
from workbench.importers import load_session
from workbench.services.presets import load_preset
from workbench.views.recorded import TRIGGER_BASES

WORDS = 20000  # tokens of each user message: " alpha" is one cl100k token
OVERHEAD = 1000


def _user(text: str, **kw) -> Message:
    return Message(role="user", content=(TextBlock(text=text),), **kw)


def _growing(steps: int, *, version: str | None, model: str = "claude-opus-4-5",
             compactions: dict[int, tuple[str, str, int | None]] | None = None,
             after_factor: float = 1.0, words: int = WORDS) -> Session:
    """``steps`` turns of a ``words``-token user message and a reply whose provider prompt is the
    history so far plus 1,000. ``compactions``: step → (trigger, source, preTokens) of the
    agent's compactions before that step (a summary, then prompts restart from it);
    ``after_factor`` scales the prompts the agent reported after its first compaction."""
    messages: list[Message] = []
    recorded: list[RecordedCompaction] = []
    size, factor = OVERHEAD, 1.0
    for k in range(steps):
        if compactions and k in compactions:
            trigger, source, pre = compactions[k]
            recorded.append(RecordedCompaction(at_message=len(messages), trigger=trigger,
                                               pre_tokens=pre, source=source))
            messages.append(_user("AGENT SUMMARY: the parser is ported; next the lexer. " * 8,
                                  is_compaction_summary=True))
            size, factor = OVERHEAD + 200, after_factor
        messages.append(_user(f"task {k}" + " alpha" * words))
        size += words + 10
        messages.append(Message(role="assistant", content=(TextBlock(text=f"done {k}"),),
                                usage=Usage(input_tokens=round(size * factor), output_tokens=10)))
    return Session(header=SessionHeader(session_id="grow", model=model, agent_version=version),
                   messages=tuple(messages), compactions=tuple(recorded))


def test_r_twin_7_versions_parse_and_pick_their_row():
    """R-TWIN-7: Claude Code up to 2.1.20 has the older row, 2.1.21 on the newer; Codex rows by
    ``cli_version`` (pre-release suffixes ignored)."""
    assert parse_version("0.104.0-alpha.1") == (0, 104, 0) and parse_version("x") is None
    assert resolve_agent_rule("claude-code", "2.1.5", "claude-opus-4-5").rule.last == "2.1.20"
    assert resolve_agent_rule("claude-code", "2.1.20", None).rule.last == "2.1.20"
    newer = resolve_agent_rule("claude-code", "2.1.21", "claude-opus-4-6")
    assert newer.exact and newer.rule.first == "2.1.21"
    assert resolve_agent_rule("codex", "0.142.4", "gpt-5.5").exact
    # The 2.1.21 rule holds until the next documented change (2.1.86): no gap between the rows.
    between = resolve_agent_rule("claude-code", "2.1.83", "claude-opus-4-6")
    assert between.exact and between.rule.first == "2.1.21"
    assert resolve_agent_rule("claude-code", "2.1.86", "claude-opus-4-6").rule.first == "2.1.86"


def test_r_twin_7_session_with_version_2_1_5_compacts_at_the_older_line():
    """R-TWIN-7: a Claude Code 2.1.5 session (claude-opus-4-5, max output 64,000) compacts at
    200,000 − 32,000 − 13,000 = 155,000; the same session recorded by 2.1.39 at 167,000. The
    budget's detail names the row and the version (the CLI's "budget source" line and
    ``--summary-json``'s ``input_budget_detail``)."""
    old = _growing(17, version="2.1.5", words=10000)
    new = _growing(17, version="2.1.39", words=10000)
    r_old, r_new = replay(old, load_preset("claude-code")), replay(new, load_preset("claude-code"))
    assert r_old.thresholds.threshold_line == 155000 and r_new.thresholds.threshold_line == 167000
    # at step k: response k − 1 reported 1,000 + 10,010 k + 10 output, and the step's 10,000-word
    # message adds about 15,000 (JSON bytes / 4): 156,150 at step 14, 166,160 at 15, 176,170 at 16
    assert [c.step_index for c in r_old.checkpoints][:1] == [14]
    assert [c.step_index for c in r_new.checkpoints][:1] == [16]
    detail = replay_report(old, r_old).input_budget_detail
    assert "agent rule Claude Code 1.0–2.1.20 (version 2.1.5 recorded)" in detail
    assert "window − 45,000" in detail


def test_r_twin_7_an_unknown_version_uses_the_nearest_documented_rule_and_says_so():
    """R-TWIN-7: a version beyond every documented range gets the nearest row, a session with no
    recorded version the newest one; either way the replay says so."""
    future = replay(_growing(3, version="3.0.0"), load_preset("claude-code"))
    assert future.thresholds.threshold_line == 167000
    assert "version 3.0.0 is outside the documented ranges; the nearest documented rule is used" \
        in future.thresholds.budget_detail
    older = resolve_agent_rule("claude-code", "0.2.9", None)
    assert not older.exact and older.rule.first == "1.0.0"
    none = replay(_growing(3, version=None), load_preset("claude-code"))
    assert "no agent version recorded; the newest documented rule is used" \
        in none.thresholds.budget_detail
    cli = resolve_agent_rule("codex", "0.20.0", "gpt-5")
    assert not cli.exact and "outside the documented ranges" in cli.note


def _line(**fields) -> str:
    return json.dumps({"sessionId": "s1", "cwd": "/w", "version": "1.0.89",
                       "timestamp": "2025-08-20T10:00:00Z", "isSidechain": False, **fields})


def test_r_twin_7_claude_code_1_0_compaction_is_a_recorded_compaction(tmp_path: Path):
    """R-TWIN-7: Claude Code 1.0.x writes no compact_boundary: its compaction is an
    ``isCompactSummary`` user message with a null ``parentUuid``. A strict import places it and
    records a compaction at that message; the header records the agent's version."""
    usage = {"input_tokens": 10, "cache_read_input_tokens": 154000, "output_tokens": 50}
    lines = [
        _line(type="user", uuid="u1", parentUuid=None,
              message={"role": "user", "content": "port the parser"}),
        _line(type="assistant", uuid="a1", parentUuid="u1",
              message={"role": "assistant", "id": "m1", "model": "claude-sonnet-4-20250514",
                       "content": [{"type": "text", "text": "working"}], "usage": usage}),
        _line(type="user", uuid="u2", parentUuid=None, isCompactSummary=True,
              message={"role": "user", "content": "This session is being continued from a "
                       "previous conversation that ran out of context. Summary: parser."}),
        _line(type="user", uuid="u3", parentUuid="u2",
              message={"role": "user", "content": "go on"}),
        _line(type="assistant", uuid="a2", parentUuid="u3",
              message={"role": "assistant", "id": "m2", "model": "claude-sonnet-4-20250514",
                       "content": [{"type": "text", "text": "done"}],
                       "usage": {"input_tokens": 9000, "output_tokens": 5}}),
    ]
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = load_session(path).session
    assert session.header.agent_version == "1.0.89"
    (compaction,) = session.compactions
    summary = session.messages[compaction.at_message]
    assert summary.is_compaction_summary and compaction.trigger == "auto"
    assert compaction.summary is not None and "Summary: parser." in compaction.summary
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "user", "assistant"]
    rule = resolve_agent_rule("claude-code", session.header.agent_version, session.header.model)
    assert rule.exact and rule.rule.last == "2.1.20"


def _call(call_id: str, name: str = "Bash", **arguments) -> Message:
    return Message(role="assistant", content=(ToolCallBlock(id=call_id, name=name,
                                                            arguments=arguments or {"c": 1}),))


def _result(call_id: str, text: str = "ok") -> Message:
    return Message(role="user", content=(ToolResultBlock(call_id=call_id, text=text),))


def test_r_twin_3_an_orphaned_call_does_not_pin_the_no_tail_profiles_cut():
    """R-TWIN-3: the agent compacted in the middle of call c2 (its result is not in the file)
    and went on. An agent profile's archival cut (``archive_orphans``: ``compaction.agent_rules``
    set) archives that call with the rest (no raw tail); the default profile, and the archival
    profile without agent rules, still keep an assistant whose call is unanswered, and what
    follows, in the tail (seed behaviour, R-CMP-5); the last assistant's own unanswered call
    stays in every tail."""
    history = [_user("port the parser"), _call("c1"), _result("c1"), _call("c2"),
               _user("continue"), _call("c3"), _result("c3"), _user("and the lexer"),
               _call("c4"), _result("c4")]
    estimator = default_estimator()
    archival = choose_cut(history, profile="archival", input_budget=100000, recent_target=15000,
                          estimator=estimator, archive_orphans=True)
    assert archival.cut_index == len(history) and archival.reason == "archival: no raw tail"
    default = choose_cut(history, profile="auto", input_budget=100000, recent_target=15000,
                         estimator=estimator, archive_orphans=True)
    assert default.cut_index is not None and default.cut_index <= 3
    pending = [*history, _call("c5")]
    last = choose_cut(pending, profile="archival", input_budget=100000, recent_target=15000,
                      estimator=estimator, archive_orphans=True)
    assert last.cut_index == len(pending) - 1


def test_r_twin_3_restored_files_come_from_reads_edits_and_writes():
    """R-TWIN-3: an edit or a write makes a file recent like a read; a write restores its
    content, an edit its replacement applied to the text the read showed."""
    read = [_call("r1", "Read", file_path="/src/a.py"),
            _result("r1", "     1→def a():\n     2→    return 1"),
            _call("r2", "Read", file_path="/src/b.py"), _result("r2", "     1→B = 1")]
    edit = [_call("e1", "Edit", file_path="/src/a.py", old_string="return 1",
                  new_string="return 2"), _result("e1", "The file /src/a.py has been updated.")]
    write = [_call("w1", "Write", file_path="/src/c.py", content="C = 3\nD = 4"),
             _result("w1", "File created successfully at: /src/c.py")]
    rule = RestoreReads(files=5, tokens_per_file=5000, total_tokens=50000)
    out = restored_reads([*read, *edit, *write], (), rule, kinds=ToolKindMap(),
                         estimator=default_estimator())
    paths = [m.text.split('"')[1] for m in out]
    assert paths == ["/src/c.py", "/src/a.py", "/src/b.py"]
    assert "     1→C = 3\n     2→D = 4" in out[0].text
    assert "return 2" in out[1].text and "return 1" not in out[1].text


def test_r_twin_3_codex_resends_its_initial_context_after_the_summary():
    """R-TWIN-3: Codex 0.14x rebuilds the history as its initial context (developer
    instructions, AGENTS.md), the user messages and the summary: the profile's first request
    after its compaction carries the AGENTS.md message again, after the checkpoint."""
    agents = _user("# AGENTS.md instructions for /w\n" + " delta" * 3000, synthetic=True)
    developer = Message(role="system", content=(TextBlock(text="<permissions instructions>"),),
                        synthetic=True)
    messages: list[Message] = [developer, agents]
    recorded: list[RecordedCompaction] = []
    size = 10000
    for k in range(12):
        if k == 10:  # the agent compacted here: its summary, then prompts restart
            recorded.append(RecordedCompaction(at_message=len(messages), pre_tokens=size,
                                               source="codex:compacted"))
            messages.append(_user("CODEX SUMMARY " * 40, is_compaction_summary=True))
            size = 10000
        messages.append(_user(f"please do task {k}" + " beta" * 2000))
        size += 24000
        messages.append(Message(role="assistant", content=(TextBlock(text=" gamma" * 22000),),
                                usage=Usage(input_tokens=size, output_tokens=10)))
    session = Session(header=SessionHeader(session_id="cx", model="gpt-5.5", source_format="codex",
                                           limits=ModelLimits(context=258400),
                                           agent_version="0.142.4"),
                      messages=tuple(messages), compactions=tuple(recorded))
    result = replay(session, load_preset("codex"))
    assert [c.step_index for c in result.checkpoints] == [10]
    applied = result.checkpoints[0]
    prep = result.preparations[applied.step_index]
    request = result.request(prep)
    assert request is not None
    texts = [m.text for m in request.messages]
    at = next(i for i, t in enumerate(texts) if t.startswith("please do task")
              and "## Current User Request" in t)
    assert any(t.startswith("# AGENTS.md instructions") for t in texts[at + 1:])
    assert "<permissions instructions>" in texts[at + 1:]


def test_r_twin_3_no_calibration_is_learned_on_the_agents_compacted_requests():
    """R-TWIN-3: the agent compacted early (below the profile's line) and afterwards reported
    prompts 1.6 × what its compacted history holds. The replay, which has not compacted, keeps
    the ratio learned on the history it holds: its count stays the uncompacted history's (the
    calibrated local estimate: 8 messages of about 20,000 tokens at step 7, 9 at step 8), and it
    compacts where that crosses 167,000 (step 8), not earlier on an inflated ratio."""
    session = _growing(10, version="2.1.39", model="claude-opus-4-6", after_factor=1.6,
                       compactions={4: ("auto", "test", 85000)})
    result = replay(session, load_preset("claude-code"))
    assert [c.step_index for c in result.checkpoints][:1] == [8]
    assert abs(result.preparations[7].calibration_ratio - 1.0) < 0.05


def test_r_twin_3_the_agents_own_count_decides_at_its_compaction():
    """R-TWIN-3: at the step of the agent's automatic compaction the replay compares the
    agent's own count (``preTokens``, which holds what the transcript never recorded, such as
    the result of a call the agent compacted in the middle of) and compacts there."""
    session = _growing(10, version="2.1.39", model="claude-opus-4-6",
                       compactions={6: ("auto", "claude_code:compact_boundary", 167400)})
    result = replay(session, load_preset("claude-code"))
    assert [c.step_index for c in result.checkpoints][:1] == [6]
    stage = result.preparations[6].stage("compaction")
    assert stage is not None and "the agent's own count of this request 167,400" in stage.note
    assert result.preparations[6].trigger_basis == "agent_count"
    assert TRIGGER_BASES["agent_count"] == "the agent's own count, recorded with its compaction"


def test_r_twin_3_the_agents_own_count_decides_right_after_a_model_switch():
    """R-TWIN-3, R-TOK-5: the user switched models just before the agent compacted. The old
    model's reading triggers nothing in the new window, but the agent's own count of this request
    (``preTokens``) is the new model's: the replay compacts at the agent's step, not later on its
    calibrated estimate."""
    session = _growing(10, version="2.1.39", model="claude-opus-4-6",
                       compactions={6: ("auto", "claude_code:compact_boundary", 167400)})
    first_new = sum(1 for m in session.messages[:session.compactions[0].at_message]
                    if m.role == "assistant")
    assert first_new == 6
    switched = tuple(m.model_copy(update={"model": "claude-sonnet-4-5"})
                     if m.role == "assistant" and i > session.compactions[0].at_message else
                     m.model_copy(update={"model": "claude-opus-4-6"}) if m.role == "assistant"
                     else m for i, m in enumerate(session.messages))
    session = session.model_copy(update={"messages": switched})
    result = replay(session, load_preset("claude-code"))
    assert [c.step_index for c in result.checkpoints][:1] == [6]
    stage = result.preparations[6].stage("compaction")
    assert stage is not None and "display-only" not in stage.note
    assert result.preparations[6].trigger_basis == "agent_count"


def test_r_twin_3_a_partly_read_file_counts_whole_towards_the_per_file_limit():
    """R-TWIN-3: Claude Code re-reads a restored file whole; a read that showed lines 191–200
    of a file shows a tenth of it, so the file counts ten times what was shown towards the
    per-file limit and comes back as a reference; the same lines read from line 1 fit."""
    body = "\n".join(f"{n:>6}→value_{n} = compute({n}, {n + 1})" for n in range(191, 201))
    part = [_call("p1", "Read", file_path="/src/big.py", offset=191, limit=10),
            _result("p1", body)]
    whole = [_call("w1", "Read", file_path="/src/small.py"),
             _result("w1", "\n".join(f"{n:>6}→value_{n} = compute({n}, {n + 1})"
                                     for n in range(1, 11)))]
    estimator = default_estimator()
    shown = estimator.count(body)
    rule = RestoreReads(files=5, tokens_per_file=shown * 3, total_tokens=50000)
    out = restored_reads([*part, *whole], (), rule, kinds=ToolKindMap(), estimator=estimator)
    texts = {m.text.split('"')[1]: m.text for m in out}
    assert "value_1 = compute" in texts["/src/small.py"]
    assert "value_191" not in texts["/src/big.py"]
    assert "/src/big.py was read before the conversation was summarised" in texts["/src/big.py"]


def test_r_twin_3_a_smaller_window_overhead_after_a_compaction_becomes_the_overhead():
    """R-TWIN-3: a transcript that starts mid-session makes the first response's overhead hold
    history the file does not have; after the agent's compaction the window's overhead is
    smaller, and that is what every request carries from then on."""
    from iris.compaction.calibration import Calibration

    start = Calibration().observe(0, 10000, 130000)
    assert start.overhead == 120000
    after = start.observe(5, 5000, 45000, new_window=True)
    assert after.overhead == after.window_overhead == 40000 and after.overhead_step == 5
    larger = start.observe(5, 5000, 140000, new_window=True)
    assert larger.overhead == 120000 and larger.window_overhead == 135000


def test_r_twin_7_a_trigger_value_of_the_users_own_is_replaced_and_the_note_says_so():
    """R-TWIN-7: the version's row sets the trigger fields; a value the configuration holds of its
    own (``reserved: 60000`` written over the ``claude-code`` preset for a "what if") is replaced,
    and the note says so and how to keep it. The preset's own values give no such note, for the
    newest version and for an older one whose row differs."""
    from iris.compaction.agent_rules import apply_agent_rule
    from iris.frozen import UNCHANGED

    preset = load_preset("claude-code")
    what_if = preset.evolve(**UNCHANGED, compaction=preset.compaction.evolve(**UNCHANGED,
                                                                            reserved=60_000))
    header = SessionHeader(session_id="w", model="claude-opus-4-6", agent_version="2.1.39")
    applied, note = apply_agent_rule(what_if, header)
    assert applied.compaction.reserved == 33_000
    assert "reserved 60,000 is replaced by the rule's" in note
    assert "agent_rules: null" in note
    for version, reserved in (("2.1.39", 33_000), ("2.1.5", 45_000)):
        applied, note = apply_agent_rule(preset, header.evolve(**UNCHANGED, agent_version=version))
        assert applied.compaction.reserved == reserved
        assert "replaced" not in note


def _reattaching(*, agent_reattached: int, line: int = 167000) -> tuple[Session, int, int]:
    """A Claude Code 2.1.39 session whose first request writes a file of about 4,800 tokens
    (the file the profile re-attaches after its compaction), then 20,000-token turns up to the
    agent's first compaction and 2,000-token turns after it. After each compaction the agent's
    reported prompts carry ``agent_reattached`` tokens the transcript does not record (its own
    re-attached files). The agent compacts the request that reaches ``line`` (its turn goes into
    the summary, as Claude Code's does). Returns (session, step of the agent's first compaction,
    of its second)."""
    estimator = default_estimator()
    body = "\n".join(f"value_{n} = compute({n})" for n in range(480))
    summary = "AGENT SUMMARY: the parser is ported; next the lexer. " * 8
    messages: list[Message] = [
        _user("write the module"),
        Message(role="assistant", content=(ToolCallBlock(
            id="w1", name="Write", arguments={"file_path": "/src/a.py", "content": body}),),
            usage=Usage(input_tokens=OVERHEAD + 10, output_tokens=10)),
        _result("w1", "File created successfully at: /src/a.py")]
    size = OVERHEAD + sum(estimator.count(m.text) for m in messages) + estimator.count(body)
    recorded: list[RecordedCompaction] = []
    steps: list[int] = []
    k = 1
    while len(steps) < 2:
        words = 20000 if not steps else 2000
        messages.append(_user(f"task {k}" + " alpha" * words))
        size += words + 10
        if size >= line:  # the agent compacts this request: the summary (and files) alone
            recorded.append(RecordedCompaction(
                at_message=len(messages), trigger="auto", pre_tokens=size,
                source="claude_code:compact_boundary"))
            messages.append(_user(summary, is_compaction_summary=True))
            size = OVERHEAD + estimator.count(summary) + agent_reattached
            steps.append(k)
        messages.append(Message(role="assistant", content=(TextBlock(text=f"done {k}"),),
                                usage=Usage(input_tokens=size, output_tokens=10)))
        size += 5
        k += 1
    header = SessionHeader(session_id="reattach", model="claude-opus-4-6", agent_version="2.1.39")
    first, second = steps
    return Session(header=header, messages=tuple(messages), compactions=tuple(recorded)), first, second


def test_r_twin_3_the_shared_window_leaves_the_files_each_side_re_attached_out():
    """R-TWIN-3: after the agent's compaction the replay re-attaches the file it wrote (about
    4,800 tokens) where the agent re-attached something else of 300 (not in the transcript: only
    in its reported prompts). The shared window's offset compares the rest of the two requests,
    so the replay's second compaction comes at the agent's step (its request, bigger by about
    4,500, would have crossed the line two turns earlier), and the stage note names both sides'
    re-attached figures."""
    import re

    from iris.compaction import RecordedSummariser

    session, first, second = _reattaching(agent_reattached=300)
    result = replay(session, load_preset("claude-code"), summariser=RecordedSummariser(session))
    steps = [c.step_index for c in result.checkpoints]
    assert steps[0] == first and second - 1 <= steps[1] <= second  # ±1: Claude Code's estimate
    stage = result.preparations[steps[1]].stage("compaction")
    assert stage is not None
    found = re.search(r"[+−] ([\d,]+) \(this replay's request minus the agent's, measured at "
                      r"step (\d+).*left out: this replay's ([\d,]+), the agent's ([\d,]+)",
                      stage.note)
    assert found is not None, stage.note
    offset, measured, mine, agents = (int(g.replace(",", "")) for g in found.groups())
    assert measured == first and offset < 200
    assert 4500 < mine < 7000 and abs(agents - 300) < 200
    # the replay's request, bigger by what it re-attached, reached the line turns earlier
    ahead = next(k for k in range(first + 1, len(result.preparations))
                 if result.preparations[k].final_input_tokens + 1000 >= 167000)
    assert ahead < second - 1
