"""The ``recorded`` summariser never uses a summary written after the step being compacted
(R-PREP-7): the nearest earlier recorded summary, or an extractive checkpoint, and a note in the
compaction records that says which."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.compaction import RecordedSummariser, SummaryRequest, validate_summary
from iris.config import parse_config
from iris.replay import replay
from iris.session import Message, RecordedCompaction, Session, SessionHeader, TextBlock

from workbench.importers import load_session
from workbench.services.summarisers import summariser_options


def _user(text: str, **kw) -> Message:
    return Message(role="user", content=(TextBlock(text=text),), **kw)


def _assistant(text: str) -> Message:
    return Message(role="assistant", content=(TextBlock(text=text),))


MESSAGES = (
    _user("Port the parser to Rust."),                                    # 0
    _assistant("Reading parser.py."),                                     # 1
    _user("EARLY: parser read, lexer next.", is_compaction_summary=True),  # 2
    _assistant("Lexer ported."),                                          # 3
    _user("continue"),                                                    # 4
    _assistant("Tests ported."),                                          # 5
    _user("LATE: everything ported and released.", is_compaction_summary=True),  # 6
    _user("continue"),                                                    # 7
    _assistant("Released."),                                              # 8
)


def _request(head) -> SummaryRequest:
    return SummaryRequest(system_prompt="sys", input_text="in", head=tuple(head), max_tokens=800)


def _session(messages=MESSAGES, compactions=()) -> Session:
    return Session(header=SessionHeader(session_id="s"), messages=messages,
                   compactions=compactions)


def test_r_prep_7_nearest_earlier_summary_not_the_nearest_later_one():
    """R-REAL-6: Head ends at message 4 (cut 5): the later summary at 6 is nearer, the earlier at 2 is used."""
    result = RecordedSummariser(_session()).summarise(_request(MESSAGES[:5]), timeout_seconds=1)
    assert result.kind == "recorded"
    assert "EARLY" in result.text and "LATE" not in result.text
    assert result.note == "recorded summary of message 2, the nearest written before message 5"
    validate_summary(result.text)


def test_r_prep_7_only_a_later_summary_falls_back_to_extractive_with_a_note():
    """R-REAL-6."""
    result = RecordedSummariser(_session()).summarise(_request(MESSAGES[:1]), timeout_seconds=1)
    assert result.kind == "extractive"
    assert "EARLY" not in result.text and "LATE" not in result.text
    assert "no recorded summary was written before message 1" in result.note
    assert "message 2, came later and is not used" in result.note
    validate_summary(result.text)


def test_r_prep_7_a_repeated_message_never_moves_the_cut_later():
    """The head ends with 'continue' (messages 4 and 7): the cut is after message 4, so the
    summary recorded at 6 is still in the future."""
    head = (*MESSAGES[3:4], MESSAGES[4])
    result = RecordedSummariser(_session()).summarise(_request(head), timeout_seconds=1)
    assert "LATE" not in result.text and "message 2" in result.note


def test_r_prep_7_messages_the_replay_added_are_skipped_and_unknown_heads_fall_back():
    """A pressure notice at the head's end is not a recorded message: the cut is placed after
    the last recorded one. A head with no recorded message falls back with its own note."""
    notice = _user("[context pressure notice]", synthetic=True)
    result = RecordedSummariser(_session()).summarise(_request((*MESSAGES[:5], notice)),
                                                      timeout_seconds=1)
    assert "message 2, the nearest written before message 5" in result.note
    alien = RecordedSummariser(_session()).summarise(_request((notice,)), timeout_seconds=1)
    assert alien.kind == "extractive" and "could not be placed" in alien.note
    assert "EARLY" not in alien.text and "LATE" not in alien.text


def test_r_prep_7_recorded_compaction_summary_field_follows_the_same_rule():
    messages = tuple(m for m in MESSAGES if not m.is_compaction_summary)
    session = _session(messages, (RecordedCompaction(at_message=5, summary="FROM THE FUTURE"),))
    result = RecordedSummariser(session).summarise(_request(messages[:3]), timeout_seconds=1)
    assert result.kind == "extractive" and "FROM THE FUTURE" not in result.text
    later = RecordedSummariser(session).summarise(_request(messages[:6]), timeout_seconds=1)
    assert later.kind == "recorded" and "FROM THE FUTURE" in later.text


def test_r_prep_7_encrypted_summary_placeholder_is_not_a_summary():
    session = _session((_user("Go."), _assistant("ok"),
                        _user("[compaction summary: encrypted, 17 chars]",
                              is_compaction_summary=True)))
    assert not RecordedSummariser(session).available
    assert summariser_options(session) == ("extractive",)
    # R-TWIN-9: an unreadable summary is no summary to offer: the offline one, with a note
    fallback = RecordedSummariser(session).summarise(_request(session.messages[:2]), timeout_seconds=1)
    assert fallback.kind == "extractive"
    assert "not readable" in fallback.note or "no readable summary" in fallback.note
    validate_summary(fallback.text)
    with pytest.raises(Exception, match="no recorded compaction summary"):
        RecordedSummariser(_session((_user("Go."), _assistant("ok")))).summarise(
            _request((_user("Go."),)), timeout_seconds=1)
    assert "recorded" in summariser_options(_session())


def test_r_prep_7_real_session_early_compaction_notes_the_fallback(real_sessions):
    """R-REAL-6: A real Claude Code session (recorded compaction at message 160), replayed with a 60k
    budget: the replay compacts long before it, and the candidate record says why the recorded
    summary was not used; the checkpoint does not contain the agent's later summary."""
    path = real_sessions / "claude_code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"
    if not Path(path).is_file():
        pytest.skip("real Claude Code session absent")
    session = load_session(path).session
    (recorded,) = session.compactions
    config = parse_config({"compaction": {"input_budget_tokens": 60000}})
    result = replay(session, config, summariser=RecordedSummariser(session))
    first = result.checkpoints[0]
    assert result.preparations[first.step_index].response_message_index < recorded.at_message
    reasons = [d.reason for p in result.preparations for s in p.stages for d in s.decisions
               if d.kind == "compaction-candidate"]
    assert any("came later and is not used" in r for r in reasons)
    assert recorded.summary is not None and recorded.summary[:200] not in first.checkpoint_text
    assert "session is being continued" not in first.checkpoint_text
