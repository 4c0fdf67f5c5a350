"""The ``sessions`` row an import writes counts responses and tool calls as the session's index
does (R-SES-4), without building the index."""

from __future__ import annotations

from pathlib import Path

import workbench as wb
from workbench.importers import load_session
from workbench.storage.store import Store


def _paths(real_sessions: Path) -> list[Path]:
    real = [p for p in sorted(real_sessions.rglob("*")) if p.is_file() and p.suffix in (".jsonl", ".gz", ".json")]
    return [*real, *(wb.sample_path(n) for n in ("long_session", "bugfix", "unanswered"))]


def test_r_ses_4_stored_counts_match_the_index(real_sessions, tmp_path):
    """R-SES-4: for every real transcript and sample, the stored response and tool call counts
    are those of ``session.index`` (compaction-provided copies are not responses)."""
    paths = _paths(real_sessions)
    assert len(paths) >= 6
    with Store(tmp_path / "wb.db") as store:
        for path in paths:
            session = load_session(path).session
            sid = store.import_file(path).session_id
            row = store.row_of(sid)
            assert (row.response_count, row.tool_call_count) == (
                len(session.index.batches), len(session.index.calls)), path.name


def test_r_ses_4_counts_skip_compaction_provided_copies(tmp_path):
    """R-SES-4: a compaction-provided assistant copy adds its calls but no response."""
    from iris.session import Message, Session, SessionHeader, ToolCallBlock

    messages = (Message(role="user", content=()),
                Message(role="assistant", content=(ToolCallBlock(id="a", name="Read", arguments={}),)),
                Message(role="assistant", compaction_provided=True,
                        content=(ToolCallBlock(id="b", name="Read", arguments={}),)))
    session = Session(header=SessionHeader(session_id="s"), messages=messages)
    assert (len(session.index.batches), len(session.index.calls)) == (1, 2)
    with Store(tmp_path / "wb.db") as store:
        sid, _ = store.save_session(session, format="native", content_hash="sha256:0", source_path=None)
        row = store.row_of(sid)
    assert (row.response_count, row.tool_call_count) == (1, 2)
