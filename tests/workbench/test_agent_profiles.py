"""The agent profiles ``claude-code`` and ``codex`` (R-TWIN-3): the agent's own budget and
trigger, what it keeps after a compaction, recorded manual compactions applied at their step; and
the recorded summary as the output of the agent's own compaction (R-TWIN-4, R-REAL-6). Built
sessions here; the real transcripts in tests/workbench/test_agent_profiles_real.py."""

from __future__ import annotations

from iris.compaction import RecordedSummariser, SummaryRequest, thresholds
from iris.compaction.checkpoint import Checkpoint, CheckpointSection, RetainedMessage
from iris.compaction.config import RestoreReads
from iris.compaction.restore import restored_reads
from iris.config import config_hash, default_config, parse_config
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
from workbench.services.presets import load_preset, preset_text

WORDS = 20000  # tokens of each user message: " alpha" is one cl100k token
OVERHEAD = 1000


def _user(text: str, **kw) -> Message:
    return Message(role="user", content=(TextBlock(text=text),), **kw)


def _reply(k: int, prompt: int) -> Message:
    return Message(role="assistant", content=(TextBlock(text=f"done {k}"),),
                   usage=Usage(input_tokens=prompt, output_tokens=10))


def _codex_like(steps: int, compact_at: int) -> Session:
    """A rollout-like session: recorded window 258,400, 25,000-token turns (user message, reply);
    the agent compacted before step ``compact_at`` (the summary, then prompts restart)."""
    messages: list[Message] = []
    compactions: list[RecordedCompaction] = []
    size = OVERHEAD
    for k in range(steps):
        if k == compact_at:
            compactions.append(RecordedCompaction(at_message=len(messages), pre_tokens=size,
                                                  source="codex:compacted"))
            messages.append(_user("CODEX SUMMARY " * 40, is_compaction_summary=True))
            size = OVERHEAD + 100
        messages.append(_user(f"please do task {k}" + " beta" * 2000))
        size += 25000
        messages.append(Message(role="assistant", content=(TextBlock(text=" gamma" * 23000),),
                                usage=Usage(input_tokens=size, output_tokens=10)))
    return Session(header=SessionHeader(session_id="cx", model="gpt-5.3-codex",
                                        source_format="codex",
                                        limits=ModelLimits(context=258400)),
                   messages=tuple(messages), compactions=tuple(compactions))


def _growing(steps: int, compact_at: int, trigger: str = "auto") -> Session:
    """``steps`` turns of a 20,000-token user message and a reply whose provider prompt is the
    history so far plus 1,000; the agent compacted before step ``compact_at`` (``manual``: its
    user typed /compact): a summary message, then prompts restart from it."""
    messages: list[Message] = []
    compactions: list[RecordedCompaction] = []
    size = OVERHEAD
    for k in range(steps):
        if k == compact_at:
            compactions.append(RecordedCompaction(at_message=len(messages), trigger=trigger,
                                                  pre_tokens=size, source="test"))
            messages.append(_user("AGENT SUMMARY: the parser is ported; next the lexer. " * 8,
                                  is_compaction_summary=True))
            size = OVERHEAD + 200
        messages.append(_user(f"task {k}" + " alpha" * WORDS))
        size += WORDS + 10
        messages.append(_reply(k, size))
    return Session(header=SessionHeader(session_id="grow", model="claude-opus-4-6"),
                   messages=tuple(messages), compactions=tuple(compactions))


def test_r_twin_3_presets_are_agent_profiles_without_reduction_or_policy():
    """R-TWIN-3: both profiles turn the engine's reduction and context policy off, keep no raw
    tail and name their rule's source document."""
    for name in ("claude-code", "codex"):
        config = load_preset(name)
        assert config.reduction.enabled is False and config.context_policy.enabled is False
        assert config.compaction.profile == "archival" and config.compaction.apply_recorded_manual
        assert "docs/profiles.md" in preset_text(name)


def test_r_twin_3_claude_code_line_is_the_window_minus_33000():
    """R-TWIN-3: Claude Code compacts at 200,000 − 20,000 − 13,000 = 167,000 (0.835)."""
    t = thresholds(load_preset("claude-code"), None, "claude-opus-4-6")
    assert (t.input_budget, t.threshold_line, t.pressure_line) == (200000, 167000, 167000)
    assert t.reminder_line is None


def test_r_twin_3_codex_budget_is_the_recorded_window_and_the_line_90_percent_of_the_full():
    """R-TWIN-3: the rollout records 258,400 (95 % of 272,000): that is the budget, with no
    output reservation (the default would take 64,000 off), and Codex compacts at 244,800."""
    limits = ModelLimits(context=258400)
    t = thresholds(load_preset("codex"), limits, "gpt-5.3-codex")
    assert (t.input_budget, t.budget_source, t.threshold_line) == (258400, "session", 244800)
    assert "full window 272,000" in t.budget_detail
    assert thresholds(default_config(), limits).input_budget == 194400


def test_r_twin_3_budget_never_below_a_prompt_the_agent_sent():
    """R-TWIN-3: with budget_covers_recorded a derived budget below the largest recorded prompt
    is raised to it (and says so); an explicit input_budget_tokens is kept."""
    config = load_preset("codex")
    t = thresholds(config, ModelLimits(context=200000), recorded_prompt=209950)
    assert t.input_budget == 209950 and "largest prompt the agent sent" in t.budget_detail
    explicit = parse_config({"compaction": {"input_budget_tokens": 100000,
                                            "budget_covers_recorded": True}})
    assert thresholds(explicit, None, recorded_prompt=209950).input_budget == 100000


def test_r_twin_3_new_knobs_leave_existing_configurations_unchanged_and_are_validated():
    """R-TWIN-3: the new compaction fields at their defaults do not change a configuration's
    hash (stored replays keep their ids); an invalid value names its field."""
    explicit = parse_config({"compaction": {
        "reserve_output": True, "effective_window_percent": 100, "budget_covers_recorded": False,
        "apply_recorded_manual": False, "checkpoint_form": "structured",
        "restore_recent_reads": None}})
    assert config_hash(explicit) == config_hash(parse_config({}))
    for field, bad in (("effective_window_percent", 0), ("checkpoint_form", "short"),
                       ("restore_recent_reads", {"files": 0})):
        try:
            parse_config({"compaction": {field: bad}})
        except Exception as exc:  # noqa: BLE001 -- the message is what is checked
            assert f"compaction.{field}" in str(exc)
        else:
            raise AssertionError(f"{field}: {bad!r} accepted")


def test_r_twin_3_claude_code_compacts_where_its_line_is_crossed():
    """R-TWIN-3: Claude Code counts the last response and its estimate of the messages since
    (JSON bytes / 4): response 6 reports 141,070 + 10 output, and the step-7 user message adds
    about 30,000 (≥ 167,000; at step 6: 121,070 + 30,000 is below): the profile compacts at step
    7, where the agent did; the default 0.8 line (160,000), on the provider's count alone, later."""
    session = _growing(11, compact_at=7)
    profile = replay(session, load_preset("claude-code"))
    default = replay(session, parse_config({"context_policy": {"enabled": False},
                                            "reduction": False}))
    assert [c.step_index for c in profile.checkpoints] == [7]
    assert [c.step_index for c in default.checkpoints][:1] == [8]
    summary = replay_report(session, profile)
    assert [(c.step, c.trigger) for c in summary.compactions] == [(7, "auto")]
    applied = profile.checkpoints[0]
    assert applied.first_kept_message is None  # no raw tail: the summary alone
    assert not applied.checkpoint_text.startswith("[Context Summary]")


def test_r_twin_3_a_recorded_manual_compaction_is_applied_at_its_step():
    """R-TWIN-3: the user typed /compact before step 4 (far below the line): the profile
    compacts there as a manual compaction; the default configuration does not."""
    session = _growing(6, compact_at=4, trigger="manual")
    profile = replay(session, load_preset("claude-code"))
    assert [c.step_index for c in profile.checkpoints] == [4]
    prep = profile.preparations[4]
    stage = prep.stage("compaction")
    assert stage is not None and "asked for a compaction here (manual" in stage.note
    summary = replay_report(session, profile)
    assert summary.compactions[0].trigger == "manual"
    assert [(c.step, c.trigger) for c in summary.recorded_compactions] == [(4, "manual")]
    plain = replay(session, parse_config({"context_policy": {"enabled": False},
                                          "reduction": False}))
    assert [c.step_index for c in plain.checkpoints] == []


def test_r_twin_4_the_agents_summary_is_used_as_written_at_its_own_compaction():
    """R-TWIN-4: replaying the manual compaction with the recorded summariser, the checkpoint
    is the agent's summary as written, and the record says which summary it is."""
    session = _growing(6, compact_at=4, trigger="manual")
    result = replay(session, load_preset("claude-code"), summariser=RecordedSummariser(session))
    (applied,) = result.checkpoints
    assert applied.checkpoint_text.startswith("AGENT SUMMARY: the parser is ported")
    reasons = [d.reason for s in result.preparations[4].stages for d in s.decisions
               if d.kind == "compaction-candidate"]
    assert any("the agent's own summary of its compaction at step 4 (message 8)" in r
               and "used as written" in r for r in reasons)


def _summary_request(session: Session, step: int, form: str = "summary") -> SummaryRequest:
    """The summary request of a compaction at ``step`` archiving everything before it."""
    end = session.index.batches[step].assistant_message
    head = tuple(m for m in session.messages[:end] if not m.is_compaction_summary)
    return SummaryRequest(system_prompt="s", input_text="i", head=head, max_tokens=5000,
                          step_index=step, checkpoint_form=form)  # type: ignore[arg-type]


def test_r_twin_4_own_compaction_is_its_step_or_the_next_never_earlier():
    """R-TWIN-4 / R-REAL-6: the summary written for step 4 is the output at steps 4 and 5
    (verbatim with a summary form), the nearest earlier one later on (not verbatim), and never
    at step 3."""
    session = _growing(8, compact_at=4, trigger="manual")
    summariser = RecordedSummariser(session)
    for step in (4, 5):
        own = summariser.summarise(_summary_request(session, step), timeout_seconds=5)
        assert own.verbatim and own.kind == "recorded" and "at step 4" in own.note
    later = summariser.summarise(_summary_request(session, 7), timeout_seconds=5)
    assert not later.verbatim and "recorded summary of message 8, the nearest" in later.note
    assert "AGENT SUMMARY" in later.text
    early = summariser.summarise(_summary_request(session, 3), timeout_seconds=5)
    assert early.kind == "extractive" and "AGENT SUMMARY" not in early.text
    assert "came later and is not used" in early.note
    structured = summariser.summarise(_summary_request(session, 4, "structured"),
                                      timeout_seconds=5)
    assert not structured.verbatim and structured.text.startswith("## Current User Request")


def _read(call_id: str, path: str, lines: range) -> tuple[Message, Message]:
    body = "\n".join(f"{n:>6}→line {n} of {path}" for n in lines)
    call = Message(role="assistant", content=(ToolCallBlock(id=call_id, name="Read",
                                                            arguments={"file_path": path}),))
    return call, Message(role="user", content=(ToolResultBlock(call_id=call_id, text=body),))


def test_r_twin_3_claude_code_restores_the_most_recently_read_files():
    """R-TWIN-3: up to 5 most recently read files, newest first, each the lines its reads
    showed (merged); a file over the per-file tokens comes back as a reference naming it, not
    its text (Claude Code's compact_file_reference); a file read in the kept tail is skipped."""
    history: list[Message] = []
    for i in range(7):
        history += _read(f"c{i}", f"/src/f{i}.py", range(1, 11))
    history += _read("c7", "/src/f2.py", range(11, 21))  # f2 read again: newest, lines merged
    tail = list(_read("c8", "/src/f6.py", range(1, 3)))
    rule = RestoreReads(files=5, tokens_per_file=5000, total_tokens=50000)
    out = restored_reads(history, tail, rule, kinds=ToolKindMap(), estimator=default_estimator())
    paths = [m.text.split('"')[1] for m in out]
    assert paths == ["/src/f2.py", "/src/f5.py", "/src/f4.py", "/src/f3.py", "/src/f1.py"]
    assert "line 1 of /src/f2.py" in out[0].text and "line 20 of /src/f2.py" in out[0].text
    small = RestoreReads(files=5, tokens_per_file=30, total_tokens=50000)
    cut = restored_reads(history, (), small, kinds=ToolKindMap(), estimator=default_estimator())
    assert all("line 1 of" not in m.text for m in cut)
    assert "/src/f2.py was read before the conversation was summarised" in cut[0].text
    assert "over the 30-token limit" in cut[0].text


def test_r_twin_3_checkpoint_forms_render_what_the_agent_keeps():
    """R-TWIN-3: ``summary`` is the summary alone; ``summary_with_user_messages`` the recent
    user messages, then the summary (Codex); ``structured`` keeps its runtime sections."""
    base = {"mode": "archival", "summariser": "recorded",
            "sections": (CheckpointSection(title="Progress", body="ported"),),
            "retained": (RetainedMessage(text="please port the lexer"),)}
    assert Checkpoint(**base, form="summary").render() == "## Progress\nported\n"
    codex = Checkpoint(**base, form="summary_with_user_messages").render()
    assert codex.index("please port the lexer") < codex.index("## Progress")
    assert Checkpoint(**base).render().startswith("[Context Summary]")
    verbatim = Checkpoint(**{**base, "sections": ()}, form="summary", summary_text="As written.")
    assert verbatim.render() == "As written.\n"


def test_r_twin_3_codex_compacts_at_90_percent_of_the_full_window_keeping_user_messages():
    """R-TWIN-3: prompts grow by 25,000 a turn; response 8 reports 226,000 + 10 (< 244,800),
    response 9 251,000: the codex profile compacts at step 10, where the agent did, and keeps
    the recent user messages before the summary, no raw tail; the default budget (194,400)
    would sit below prompts the agent sent."""
    session = _codex_like(12, compact_at=10)
    result = replay(session, load_preset("codex"))
    assert (result.thresholds.input_budget, result.thresholds.threshold_line) == (258400, 244800)
    assert [c.step_index for c in result.checkpoints] == [10]
    text = result.checkpoints[0].checkpoint_text
    assert text.startswith("please do task")
    assert text.index("please do task") < text.index("## Current User Request")
