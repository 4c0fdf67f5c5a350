"""Following a file never rewrites what is stored (R-LIVE-2): a watched transcript that is replaced
by another one, truncated, or renamed over with a different beginning becomes a new session; the
stored session keeps its messages and its saved replay, and `workbench watch` says so. Real Claude
Code transcripts from ../shared/real-sessions, the real command line in subprocesses."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.importers import load_session
from workbench.services.live import Watcher
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FIRST = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
OTHER = "8463c716-a2ea-4c14-9efa-87158ebd9f20"


def _lines(real_sessions: Path, session: str) -> list[bytes]:
    with gzip.open(real_sessions / "claude_code" / f"{session}.jsonl.gz", "rb") as fh:
        return fh.read().splitlines(keepends=True)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "workbench.cli", *args], check=False,
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def _edited(lines: list[bytes]) -> list[bytes]:
    """The transcript with the text of its first user prompt changed (same session id, another
    beginning)."""
    out = list(lines)
    for i, line in enumerate(out):
        record = json.loads(line)
        message = record.get("message") or {}
        if record.get("type") == "user" and isinstance(message.get("content"), str):
            message["content"] += " (edited afterwards)"
            out[i] = json.dumps(record).encode() + b"\n"
            return out
    raise AssertionError("no user prompt with plain text content")


def _replace(live: Path, data: bytes) -> None:
    """Another file renamed over the watched one (a new inode, as editors and log rotation do)."""
    fresh = live.with_name(live.name + ".new")
    fresh.write_bytes(data)
    os.replace(fresh, live)


CASES = {
    # the other session's transcript copied over the watched file (same inode, new content)
    "copied over": lambda first, other, live: live.write_bytes(b"".join(other[:300])),
    # the watched file cut to its first 150 lines
    "truncated": lambda first, other, live: live.write_bytes(b"".join(first[:150])),
    # the same session with an edited first prompt, renamed over the file
    "renamed over": lambda first, other, live: _replace(live, b"".join(_edited(first)[:450])),
}


@pytest.mark.parametrize("case", list(CASES))
def test_r_live_2_a_replaced_watched_file_becomes_a_new_session(case: str, real_sessions: Path,
                                                                 tmp_path: Path,
                                                                 workbench_home: Path):
    """R-LIVE-2: import a real transcript, save a replay with --name, change the file so it no
    longer extends what is stored, `watch FILE --once --no-replay`: the stored session's messages
    and its saved replay are as they were, the new content is a separate session (the suffixed
    id the store gives a second content of one session id), and the console says so. Growing the
    new content afterwards updates that new session in place."""
    first, other = _lines(real_sessions, FIRST), _lines(real_sessions, OTHER)
    live = tmp_path / "project" / "live.jsonl"
    live.parent.mkdir()
    live.write_bytes(b"".join(first[:400]))
    _cli(workbench_home, "import", str(live))
    _cli(workbench_home, "replay", FIRST, "--name", "keep")
    with open_store() as store:
        before = store.session(FIRST)
        stored_hash = store.content_hash(FIRST)
        kept = store.replays.find(FIRST, "keep")
        assert kept is not None
        kept_steps = [s.preparation_id for s in store.replays.open(kept.id).steps]

    CASES[case](first, other, live)
    new = load_session(live)
    out = _cli(workbench_home, "watch", str(live), "--once", "--no-replay").stdout

    with open_store() as store:
        assert store.content_hash(FIRST) == stored_hash
        assert store.session(FIRST).messages == before.messages
        replay = store.replays.find(FIRST, "keep")
        assert replay is not None and replay.id == kept.id and replay.step_count == kept.step_count
        assert [s.preparation_id for s in store.replays.open(kept.id).steps] == kept_steps
        # main transcripts only: an import also stores a transcript's sub-agents as its children
        sessions = {s.id: s for s in store.list_sessions() if s.parent_id is None}
        (new_id,) = set(sessions) - {FIRST}
        assert sessions[new_id].content_hash == new.content_hash
        assert store.session(new_id).messages == new.session.messages
        assert not store.replays.list(new_id)
    wanted = OTHER if case == "copied over" else f"{FIRST}-{new.content_hash.split(':')[-1][:8]}"
    assert new_id == wanted
    assert f"no longer extends the stored session {FIRST}" in out, out
    assert f"kept as it was with its replays; stored as a new session {new_id} (" in out, out

    # the new content grows: a later watch follows the new session, in place
    grown = (other[:300] + other[300:360]) if case == "copied over" else None
    if grown is not None:
        live.write_bytes(b"".join(grown))
        again = _cli(workbench_home, "watch", str(live), "--once", "--no-replay").stdout
        assert again.startswith(f"updated: {live} -> {new_id} ("), again
        with open_store() as store:
            assert {s.id for s in store.list_sessions() if s.parent_id is None} == {FIRST, new_id}
            assert store.session(FIRST).messages == before.messages


def test_r_live_2_a_watcher_follows_the_new_session_after_a_truncation(real_sessions: Path,
                                                                        tmp_path: Path):
    """R-LIVE-2: one watcher sees its file cut short, stores the rest as a new session, and then
    follows that new session as the file grows again; the first session stays whole."""
    first = _lines(real_sessions, FIRST)
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"".join(first[:500]))
    with open_store() as store:
        watcher = Watcher(store, [live], replay=False)
        (created,) = watcher.poll()
        whole = store.session(FIRST).messages
        live.write_bytes(b"".join(first[:120]))
        (cut,) = watcher.poll()
        assert cut.created and cut.session_id != FIRST and cut.replaced == FIRST
        live.write_bytes(b"".join(first[:200]))
        (grown,) = watcher.poll()
        assert grown.session_id == cut.session_id and not grown.created and grown.replaced is None
    with open_store() as store:
        assert store.session(FIRST).messages == whole
        assert store.session(cut.session_id).messages == load_session(live).session.messages
        assert created.session_id == FIRST and len(store.list_sessions()) == 2


def test_r_live_2_importing_other_content_of_a_stored_session_id_adds_a_session(
        real_sessions: Path, tmp_path: Path):
    """R-LIVE-2: the import path follows the same rule: a file whose session id is stored with
    other content (here the stored file cut short) is stored beside it under the suffixed id; the
    stored session is not touched."""
    first = _lines(real_sessions, FIRST)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(first[:400]))
    with open_store() as store:
        stored = store.import_file(path)
        whole = store.session(FIRST).messages
        path.write_bytes(b"".join(first[:150]))
        again = store.import_file(path)
    cut = load_session(path)
    assert stored.session_id == FIRST and again.created
    assert again.session_id == f"{FIRST}-{cut.content_hash.split(':')[-1][:8]}"
    with open_store() as store:
        assert store.session(FIRST).messages == whole
        assert store.session(again.session_id).messages == cut.session.messages
