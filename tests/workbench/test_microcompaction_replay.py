"""The claude-code profile replays the agent's microcompactions (R-TWIN-3): a recorded
``microcompact_boundary`` clears exactly its listed results at its step, a version that cleared
without recording it gets Claude Code's documented rule, and each clearing is a decision of the
trim stage. Built sessions here; the real ones from ../shared when present."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from iris.compaction.microcompact import CLEARED_TEXT
from iris.preparation.records import CompactionApplied, Microcompacted
from iris.replay import replay
from iris.replay_options import ReplayOptions
from iris.session import (
    Message,
    RecordedMicrocompaction,
    Session,
    SessionHeader,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)

from workbench.importers import load_session
from workbench.services.presets import load_preset
from workbench.services.summarisers import make_summariser

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "claude_code"


def _session(version: str = "2.1.20", micro: bool = True) -> Session:
    """Four Read/Bash turns, then (``micro``) a recorded clearing of the first two results, then
    a last response."""
    messages = [Message(role="user", content=(TextBlock(text="Look at the parser"),))]
    prompt = 20000
    for n, name in enumerate(("Read", "Bash", "Read", "Bash")):
        prompt += 3000
        messages.append(Message(role="assistant", id=f"msg_{n}",
                                content=(ToolCallBlock(id=f"toolu_{n}", name=name),),
                                usage=Usage(input_tokens=prompt, output_tokens=20)))
        messages.append(Message(role="user", content=(
            ToolResultBlock(call_id=f"toolu_{n}", text=f"line {n} of the output\n" * 600),)))
    at = len(messages)
    messages.append(Message(role="assistant", id="msg_last", content=(TextBlock(text="Done."),),
                            usage=Usage(input_tokens=prompt - 5000, output_tokens=20)))
    recorded = (RecordedMicrocompaction(at_message=at, call_ids=("toolu_0", "toolu_1"),
                                        pre_tokens=24000, tokens_saved=7000,
                                        source="claude_code:microcompact_boundary"),) if micro else ()
    return Session(header=SessionHeader(session_id="mc", model="claude-opus-4-6",
                                        source_format="claude_code", agent_version=version),
                   messages=tuple(messages), microcompactions=recorded)


def _sent_results(result, preparation) -> dict[str, str]:
    request = result.request(preparation)
    assert request is not None
    return {b.call_id: b.text for m in request.messages for b in m.content
            if isinstance(b, ToolResultBlock)}


def _cleared(preparation) -> list[Microcompacted]:
    return [d for s in preparation.stages if s.name == "trim_old_bodies" for d in s.decisions
            if isinstance(d, Microcompacted)]


def test_r_twin_3_recorded_microcompaction_clears_exactly_the_listed_results_at_its_step():
    """R-TWIN-3: at the step of the recorded clearing the trim stage clears toolu_0 and toolu_1
    (the placeholder is what the request carries), the two later results stay whole, and the
    decision states the agent's tokensSaved next to the replay's estimate."""
    result = replay(_session(), load_preset("claude-code"))
    last = result.preparations[-1]
    (decision,) = _cleared(last)
    assert decision.source == "recorded" and decision.call_ids == ("toolu_0", "toolu_1")
    assert decision.agent_tokens_saved == 7000 and decision.agent_pre_tokens == 24000
    assert decision.estimate_saved == 2 * -(-len("line 0 of the output\n" * 600) // 4)
    assert decision.tokens_after < decision.tokens_before
    sent = _sent_results(result, last)
    assert sent["toolu_0"] == sent["toolu_1"] == CLEARED_TEXT
    assert CLEARED_TEXT not in (sent["toolu_2"], sent["toolu_3"])
    assert all(not _cleared(p) for p in result.preparations[:-1])
    assert all(CLEARED_TEXT not in _sent_results(result, p).values() for p in result.preparations[:-1])


def test_r_twin_3_microcompaction_off_or_unrecorded_later_version_sends_the_results_whole():
    """R-TWIN-3: with ``microcompact: off`` the recorded clearing is not applied; a 2.1.39
    transcript that records none gets no rule either."""
    config = load_preset("claude-code")
    off = config.model_copy(update={"compaction": config.compaction.model_copy(update={"microcompact": "off"})})
    for session, cfg in ((_session(), off), (_session("2.1.39", micro=False), config)):
        result = replay(session, cfg)
        last = result.preparations[-1]
        assert not _cleared(last) and CLEARED_TEXT not in _sent_results(result, last).values()


def _corpus(name: str) -> Path:
    path = next(iter(sorted(CORPUS.glob(f"{name}-*.jsonl.gz"))), None)
    if path is None:
        pytest.skip("../shared/corpus is not present")
    return path


def _profile_replay(path: Path):
    session = load_session(path).session
    result = replay(session, load_preset("claude-code"), summariser=make_summariser("recorded", session),
                    options=ReplayOptions(keep_bodies=False))
    return session, result


def test_r_twin_3_real_recorded_microcompactions_clear_the_listed_ids_and_agree_with_the_agent():
    """R-TWIN-3: 70d782f7 (Claude Code 2.1.20) records two clearings, each just before an
    automatic compaction. The replay clears exactly the listed ids at that step; what its
    estimate leaves of the clearable results is the agent's preTokens − tokensSaved within 1 %;
    its estimate of what was saved is the agent's tokensSaved within 10 % (Claude Code counts a
    few results longer than the transcript's text); and the request the compaction then starts
    from is the compaction's own preTokens (counted before the clearing) minus tokensSaved
    within 5 %."""
    session, result = _profile_replay(_corpus("70d782f7"))
    assert len(session.microcompactions) == 2
    for recorded, comp in zip(session.microcompactions, session.compactions, strict=True):
        step = next(p for p in result.preparations if _cleared(p)
                    and set(_cleared(p)[0].call_ids) == set(recorded.call_ids))
        (decision,) = _cleared(step)
        assert decision.missing_ids == ()
        assert recorded.pre_tokens is not None and recorded.tokens_saved is not None
        expected_left = recorded.pre_tokens - recorded.tokens_saved
        assert abs(decision.estimate_left - expected_left) <= 0.01 * expected_left
        assert abs(decision.estimate_saved - recorded.tokens_saved) <= 0.10 * recorded.tokens_saved
        applied = [d for s in step.stages if s.name == "compaction" for d in s.decisions
                   if isinstance(d, CompactionApplied)]
        assert applied, "the agent compacted at this step and so does the profile"
        assert comp.pre_tokens is not None
        agent_after_clearing = comp.pre_tokens - recorded.tokens_saved
        if recorded is session.microcompactions[0]:  # the second window carries the first's offset
            assert abs(applied[0].tokens_before - agent_after_clearing) <= 0.05 * agent_after_clearing


def test_r_twin_3_rule_clears_where_an_unrecording_version_did():
    """R-TWIN-3: 44df7d08 (Claude Code 2.1.5) records no clearing, but its prompt fell by about
    25,000 tokens twice without a compaction (the cache read only the first ~33,500 tokens). The
    rule fires at exactly those two steps and nowhere else."""
    path = _corpus("44df7d08")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        assert not any(json.loads(x).get("subtype") == "microcompact_boundary" for x in f)
    session, result = _profile_replay(path)
    responses = [m for m in session.messages if m.role == "assistant" and m.usage is not None
                 and m.usage.is_trusted]
    by_id = {m.id: m.usage.prompt_tokens for m in responses if m.usage is not None}
    cuts = {c.at_message for c in session.compactions}
    fell: list[int] = []
    last: tuple[int, int] | None = None  # (prompt, message index) of the previous response
    for p in result.preparations:
        prompt = by_id.get(session.messages[p.response_message_index].id)
        if prompt is None:
            continue
        if last is not None and prompt < last[0] - 10000 and not any(
                last[1] < c <= p.response_message_index for c in cuts):
            fell.append(p.step_index)
        last = (prompt, p.response_message_index)
    ruled = [p.step_index for p in result.preparations if any(d.source == "rule" for d in _cleared(p))]
    assert len(fell) == 2
    assert ruled == fell
