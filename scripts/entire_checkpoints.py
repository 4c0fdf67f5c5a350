"""Extract the agent transcripts an Entire CLI checkpoint branch holds, one file per session, to
check the agent profiles on them (``workbench twin-check OUT``).

The Entire CLI copies the agent's live transcript into ``<2-hex>/<10-hex>/<n>/full.jsonl`` of
the branch ``entire/checkpoints/v1`` at each commit, so a session appears once per commit; the
largest copy is the transcript as it stood last. Blobs the clone does not hold (a partial clone)
are skipped and counted.

    git clone --filter=blob:limit=8m --no-checkout https://github.com/entireio/cli entire
    python scripts/entire_checkpoints.py entire OUT [--ref entire/checkpoints/v1]
    workbench twin-check OUT
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def _session_id(text: bytes) -> str | None:
    """The transcript's session id: Claude Code ``sessionId``, Codex ``session_meta.payload.id``."""
    for line in text.splitlines()[:200]:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        if isinstance(data.get("sessionId"), str):
            return data["sessionId"]
        payload = data.get("payload")
        if data.get("type") == "session_meta" and isinstance(payload, dict) and payload.get("id"):
            return str(payload["id"])
    return None


def extract(repo: Path, out: Path, ref: str = "entire/checkpoints/v1") -> tuple[int, int]:
    """Write the largest copy of each session's transcript to ``out/<session id>.jsonl``;
    returns (sessions written, copies missing from the clone)."""
    largest: dict[str, tuple[int, str]] = {}
    missing = 0
    for row in _git(repo, "ls-tree", "-r", "-l", ref).decode().splitlines():
        meta, path = row.split("\t", 1)
        _mode, _kind, blob, size = meta.split()
        if not path.endswith("/full.jsonl"):
            continue
        if not size.isdigit():
            missing += 1
            continue
        try:
            text = _git(repo, "cat-file", "-p", blob)
        except subprocess.CalledProcessError:
            missing += 1
            continue
        session = _session_id(text) or path.replace("/", "-")
        if int(size) > largest.get(session, (-1, ""))[0]:
            largest[session] = (int(size), blob)
    out.mkdir(parents=True, exist_ok=True)
    for session, (_size, blob) in largest.items():
        (out / f"{session}.jsonl").write_bytes(_git(repo, "cat-file", "-p", blob))
    return len(largest), missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("repo", type=Path, help="a clone of a repository with the branch")
    parser.add_argument("out", type=Path, help="folder to write the transcripts to")
    parser.add_argument("--ref", default="entire/checkpoints/v1")
    args = parser.parse_args(argv)
    written, missing = extract(args.repo, args.out, args.ref)
    print(f"{written} session(s) written to {args.out}; {missing} copie(s) not in the clone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
