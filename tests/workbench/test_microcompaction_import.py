"""Claude Code ``microcompact_boundary`` lines are imported as recorded microcompactions and
round-trip through the native format and the store (R-TWIN-1, R-TWIN-8). Transcripts are built
here line by line; the real one is read from ../shared when present."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from claude_builders import asst, call, line, result, user, write
from iris.errors import SessionFormatError

from workbench.importers import load_session
from workbench.importers.native import dumps_session, parse_native_lines
from workbench.storage.store import Store

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "claude_code"


def micro(uuid: str, parent: str, ids: list[str], pre: int = 52000, saved: int = 24000) -> dict:
    return line("system", uuid, parent, subtype="microcompact_boundary", content="Context microcompacted",
                isMeta=False, level="info",
                microcompactMetadata={"trigger": "auto", "preTokens": pre, "tokensSaved": saved,
                                      "compactedToolIds": ids, "clearedAttachmentUUIDs": []})


def built() -> list[dict]:
    """Two Read calls and one Bash call answered, a microcompact boundary clearing the first two,
    then one more response."""
    return [
        user("u1", None, "Look at the parser"),
        asst("a1", "u1", "msg_1", call("toolu_1", "Read", file_path="/w/a.py")),
        result("r1", "a1", "toolu_1", "x" * 4000),
        asst("a2", "r1", "msg_2", call("toolu_2", "Read", file_path="/w/b.py")),
        result("r2", "a2", "toolu_2", "y" * 4000),
        asst("a3", "r2", "msg_3", call("toolu_3", "Bash", command="make test")),
        result("r3", "a3", "toolu_3", "passed"),
        micro("m1", "r3", ["toolu_1", "toolu_2"]),
        asst("a4", "m1", "msg_4", "The parser is fine."),
    ]


def test_r_twin_8_microcompact_boundary_imports_strictly_with_its_metadata(tmp_path):
    """R-TWIN-8: the boundary is kept as a recorded microcompaction at the message after it, with
    the agent's trigger, preTokens, tokensSaved and the cleared call ids; strict import accepts it."""
    session = load_session(write(tmp_path / "s.jsonl", built())).session
    (mc,) = session.microcompactions
    assert (mc.trigger, mc.pre_tokens, mc.tokens_saved) == ("auto", 52000, 24000)
    assert mc.call_ids == ("toolu_1", "toolu_2")
    assert mc.source == "claude_code:microcompact_boundary"
    assert session.messages[mc.at_message].id == "msg_4"
    assert [m.id for m in session.messages if m.role == "assistant"] == ["msg_1", "msg_2", "msg_3", "msg_4"]


def test_r_twin_1_microcompaction_round_trips_through_native_and_store(tmp_path):
    """R-TWIN-1: the native format and the store give the same microcompaction back."""
    session = load_session(write(tmp_path / "s.jsonl", built())).session
    again = parse_native_lines(dumps_session(session).splitlines())
    assert again.microcompactions == session.microcompactions and again == session
    with Store(tmp_path / "wb.sqlite") as store:
        sid = store.import_file(tmp_path / "s.jsonl").session_id
        assert store.session(sid).microcompactions == session.microcompactions


def test_r_twin_8_bad_microcompact_metadata_is_refused_in_strict_mode(tmp_path):
    """R-TWIN-8: a compactedToolIds that is not a list of strings names its field."""
    rows = built()
    rows[7]["microcompactMetadata"]["compactedToolIds"] = "toolu_1"
    with pytest.raises(SessionFormatError, match="compactedToolIds"):
        load_session(write(tmp_path / "s.jsonl", rows))


def test_r_twin_1_session_without_microcompaction_serialises_as_before(tmp_path):
    """R-TWIN-1: a session with no microcompaction has no such field in its native form (stored
    sessions and their hashes stay as they were)."""
    rows = [r for r in built() if r["uuid"] != "m1"]
    rows[-1]["parentUuid"] = "r3"
    session = load_session(write(tmp_path / "s.jsonl", rows)).session
    assert session.microcompactions == ()
    assert "microcompaction" not in dumps_session(session)


def test_r_twin_8_real_microcompact_boundaries_are_kept():
    """R-TWIN-8: the 2.1.20 corpus session records two microcompactions, each just before a
    compaction; both are imported with every cleared id, at the compaction's message."""
    path = next(iter(sorted(CORPUS.glob("70d782f7-*.jsonl.gz"))), None)
    if path is None:
        pytest.skip("../shared/corpus is not present")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        raw = [json.loads(x) for x in f]
    recorded = [r["microcompactMetadata"] for r in raw if r.get("subtype") == "microcompact_boundary"]
    session = load_session(path).session
    assert len(session.microcompactions) == len(recorded) == 2
    for mc, meta in zip(session.microcompactions, recorded, strict=True):
        assert mc.call_ids == tuple(meta["compactedToolIds"])
        assert (mc.pre_tokens, mc.tokens_saved) == (meta["preTokens"], meta["tokensSaved"])
    assert [m.at_message for m in session.microcompactions] == [c.at_message for c in session.compactions]
