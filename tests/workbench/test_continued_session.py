"""A transcript that continues a conversation whose start it does not hold (R-TWIN-3, R-TWIN-5):
the first request's unrecorded overhead is the fixed part (system prompt and tools) plus that
history; the agent profile's compaction summarises the history away with the rest, so its first
request after counts the fixed part only, and the next recorded window measures overhead and
ratio afresh (docs/profiles.md, "What the trigger compares")."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.compaction.calibration import Calibration, continued_prefix
from iris.session import Message, RecordedCompaction, Session, SessionHeader, TextBlock, Usage

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "claude_code"
CONTINUED = CORPUS / "0cf3db51-1c73-43bb-8d05-dc02739514a5.jsonl.gz"


def _reply(n: int, read: int, write: int) -> Message:
    return Message(role="assistant", content=(TextBlock(text=f"reply {n}"),), id=f"m{n}",
                   usage=Usage(input_tokens=8, cache_read_tokens=read, cache_write_tokens=write,
                               output_tokens=5, model="claude-opus-4-5"))


def _session(first_read: int, after_reads: tuple[int, ...]) -> Session:
    """Two messages, a reply reading ``first_read`` from the cache, then one recorded compaction
    per ``after_reads`` entry, each followed by a reply reading that much from the cache."""
    messages = [Message(role="user", content=(TextBlock(text="go on"),)), _reply(0, first_read, 20)]
    compactions = []
    for n, read in enumerate(after_reads, 1):
        compactions.append(RecordedCompaction(at_message=len(messages), summary="summary",
                                              source="claude_code:compact_boundary"))
        messages += [Message(role="user", content=(TextBlock(text="summary"),),
                             is_compaction_summary=True), _reply(n, read, 20000)]
    return Session(header=SessionHeader(session_id="s", source_format="claude_code"),
                   messages=tuple(messages), compactions=tuple(compactions))


def test_r_twin_3_continued_prefix_is_the_cache_read_after_a_compaction():
    """R-TWIN-3: the first response read more from the cache than the fixed prefix the provider
    still holds after the agent's compactions (the largest such read: an expired cache reads
    less), so the file continues a history the provider had seen."""
    assert continued_prefix(_session(127765, (27992, 0))) == 27992
    assert continued_prefix(_session(127765, (0, 27992))) == 27992


def test_r_twin_3_a_file_from_the_start_is_not_taken_for_a_continued_one():
    """R-TWIN-3: a session's first request holds nothing before its first message that could be
    cached beyond the fixed prefix; without a recorded compaction nothing can be measured."""
    assert continued_prefix(_session(16500, (28000,))) is None
    assert continued_prefix(_session(0, (28000,))) is None
    assert continued_prefix(_session(127765, ())) is None
    assert continued_prefix(_session(127765, (0,))) is None


def test_r_twin_3_the_files_own_word_decides_whether_it_continues():
    """R-TWIN-3: a resumed session's file starts below a message it does not hold
    (``SessionHeader.continues``, from the first line's ``parentUuid``). Its first response may
    have read nothing from the cache (it had expired, so the whole history was written to it):
    the file's own word makes it a continued one all the same; and a file that says it holds its
    start is not taken for a continued one because its first response read a warm cache."""
    cold = _session(0, (27992,))
    assert continued_prefix(cold) is None
    said = cold.model_copy(update={"header": cold.header.model_copy(update={"continues": True})})
    assert continued_prefix(said) == 27992
    assert continued_prefix(said.model_copy(update={"compactions": ()})) is None
    # a file that says it holds its start is not taken for a continued one for a warm cache
    # (another session's cache of the same start read by its first request)
    warm = _session(127765, (27992,))
    assert continued_prefix(warm) == 27992
    fresh = warm.model_copy(update={"header": warm.header.model_copy(update={"continues": False})})
    assert continued_prefix(fresh) is None


def test_r_twin_3_the_claude_code_importer_says_when_a_file_continues(tmp_path: Path):
    """R-TWIN-3: the first line naming a parent that is not in the file sets ``continues`` (kept
    through the store); a first line without a parent sets it False."""
    import json

    from workbench.importers import load_session
    from workbench.storage.store import open_store

    def write(name: str, first_parent: str | None) -> Path:
        lines = [
            {"type": "system", "subtype": "stop_hook_summary", "uuid": "s0",
             "parentUuid": first_parent, "sessionId": name, "timestamp": "2026-01-01T10:00:00Z"},
            {"type": "user", "uuid": "u1", "parentUuid": "s0", "sessionId": name,
             "version": "2.1.7", "timestamp": "2026-01-01T10:00:01Z",
             "message": {"role": "user", "content": "does this apply to resume too?"}},
            {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": name,
             "timestamp": "2026-01-01T10:00:02Z",
             "message": {"id": "msg_1", "role": "assistant", "model": "claude-opus-4-5",
                         "content": [{"type": "text", "text": "yes"}],
                         "usage": {"input_tokens": 10, "output_tokens": 5,
                                   "cache_read_input_tokens": 0,
                                   "cache_creation_input_tokens": 136153}}}]
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return path

    resumed = load_session(write("resumed", "f00d-not-in-the-file")).session
    assert resumed.header.continues is True
    assert load_session(write("fresh", None)).session.header.continues is False
    with open_store(tmp_path / "store.db") as store:
        stored = store.import_file(tmp_path / "resumed.jsonl").session_id
        assert store.session(stored).header.continues is True


def test_r_twin_3_the_profiles_compaction_folds_the_history_not_in_the_file():
    """R-TWIN-3: the first overhead holds the fixed part and the history not in the file; after
    the replay's compaction the overhead is the fixed part, and the next recorded window measures
    overhead and ratio afresh (its first response at ratio 1, the next sample solves both)."""
    start = Calibration(fixed_prefix=28000).observe(0, 21, 127793).observe(9, 12000, 155000)
    assert start.overhead > 100000 and start.ratio > 1.5  # learned on the continued window
    folded = start.folded()
    assert folded.overhead == 28000 and folded.whole(7000) == round(start.ratio * 7000) + 28000
    window = folded.observe(11, 3600, 50200, new_window=True)
    assert (window.ratio, window.overhead, window.window_overhead) == (1.0, 46600, 46600)
    solved = window.observe(14, 9600, 58000)
    assert solved.ratio == pytest.approx((58000 - 50200) / 6000)
    assert solved.overhead == solved.window_overhead == 50200 - round(solved.ratio * 3600)


def test_r_twin_3_folding_changes_nothing_in_a_file_from_the_start():
    """R-TWIN-3: without a continued history the replay's compaction keeps the calibration, and
    the next window keeps the ratio learned before it (the earlier rule)."""
    start = Calibration().observe(0, 100, 20100).observe(4, 10100, 32600)
    assert start.folded() == start
    after = start.folded().observe(9, 3000, 24000, new_window=True)
    assert after.ratio == start.ratio and after.overhead == start.overhead


@pytest.mark.skipif(not CONTINUED.is_file(), reason="the development corpus is not available")
def test_r_twin_3_continued_corpus_session_first_request_after_its_compaction():
    """R-TWIN-3: on the corpus session that starts 127,722 tokens into its conversation the
    profile's first request after the first compaction is within 15 % of the agent's (it counted
    that history again before: +196 %), and the second compaction lands at the agent's step ±1
    (the ratio of the continued window is no longer carried across, and the replay's restored
    files are not counted twice: 15 steps early before)."""
    from workbench.corpus.twin_check import check_file

    row = check_file(CONTINUED)
    first, second = row.compactions[:2]
    assert first.at_step and first.within_after
    assert second.at_step and second.within_after
    assert row.failed_steps == 0


def test_r_twin_3_the_replays_restored_files_are_not_counted_twice():
    """R-TWIN-3: the first window after the fold measures its overhead on the recorded request,
    which lacks the agent's restored files (they are in that overhead); the replay's requests
    hold their own restored files, so their overhead leaves those out, also once the next
    sample solves the ratio."""
    folded = Calibration(fixed_prefix=28000).observe(0, 21, 127793).folded(restored=4000)
    window = folded.observe(11, 3600, 50200, new_window=True)
    assert window.window_overhead == 46600 and window.overhead == 42600
    solved = window.observe(14, 9600, 58000)
    assert solved.overhead == solved.window_overhead - round(solved.ratio * 4000)
    assert solved.whole(3600 + 4000) == pytest.approx(50200, abs=1)


def test_r_twin_1_a_continued_file_may_open_with_the_result_of_an_earlier_call(tmp_path: Path):
    """R-TWIN-1: a resumed session's file can start with the result of a call its earlier file
    made: strict imports it (kept as an orphan result, with a warning); in a file that holds its
    start, a result for a call no message made stays a strict error."""
    import json

    from iris.errors import SessionFormatError

    from workbench.importers import load_session

    def rows(first_parent: str | None) -> str:
        lines = [
            {"type": "user", "uuid": "r0", "parentUuid": first_parent, "sessionId": "c",
             "timestamp": "2026-01-01T10:00:00Z", "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "toolu_earlier", "content": "found it"}]}},
            {"type": "assistant", "uuid": "a1", "parentUuid": "r0", "sessionId": "c",
             "timestamp": "2026-01-01T10:00:01Z",
             "message": {"id": "msg_1", "role": "assistant", "model": "claude-opus-4-5",
                         "content": [{"type": "text", "text": "The agent found it."}],
                         "usage": {"input_tokens": 10, "output_tokens": 5}}}]
        return "".join(json.dumps(line) + "\n" for line in lines)

    resumed = tmp_path / "resumed.jsonl"
    resumed.write_text(rows("f00d-earlier"), encoding="utf-8")
    loaded = load_session(resumed)
    assert loaded.session.header.continues is True
    assert len(loaded.session.index.orphan_results) == 1
    assert any("continues an earlier conversation" in w.problem for w in loaded.warnings)
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text(rows(None), encoding="utf-8")
    with pytest.raises(SessionFormatError, match="which no assistant message made"):
        load_session(fresh)
