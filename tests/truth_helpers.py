"""Stores for the truth-view tests: the long sample with one recorded agent compaction, and the
real Claude Code sessions from ../shared (decompressed into the test's own folder)."""

from __future__ import annotations

import gzip
from pathlib import Path

from iris.session import RecordedCompaction

from workbench.importers import load_session
from workbench.storage.store import Store

ROOT = Path(__file__).resolve().parents[1]
LONG = ROOT / "sample_sessions" / "long_session.jsonl"
#: The step the recorded compaction below lands on (the first response after it).
RECORDED_STEP = 40
RECORDED_PRE_TOKENS = 61_234


def store_long_with_recorded_compaction(store: Store) -> str:
    """The long sample stored with one recorded compaction whose new context starts at the
    message just before step 40's response."""
    session = load_session(LONG).session
    at = session.index.batches[RECORDED_STEP].assistant_message - 1
    session = session.model_copy(update={"compactions": (RecordedCompaction(
        at_message=at, trigger="auto", pre_tokens=RECORDED_PRE_TOKENS,
        source="test:recorded"),)})
    session_id, _ = store.save_session(session, format="native", content_hash="sha256:recorded-test",
                                       source_path=None)
    return session_id


def decompressed(real: Path, name: str, into: Path) -> Path:
    """A real ``.jsonl.gz`` session decompressed into ``into`` (never into the repository)."""
    target = into / name.removesuffix(".gz")
    target.write_bytes(gzip.decompress((real / "claude_code" / name).read_bytes()))
    return target
