"""Generate the bundled sample sessions (native JSONL) from a fixed seed, so they can be rebuilt.

    python scripts/generate_samples.py [OUT_DIR]      # default: sample_sessions/

Three sessions of a Claude-Code-style agent working on small Python projects: ``bugfix.jsonl``
(a date-range bug found, reproduced by a failing test and fixed), ``long_session.jsonl`` (a long
refactor whose tool output adds up to more than 300,000 tokens, with a model switch, responses
without usage and recorded dynamic context snapshots) and ``unanswered.jsonl`` (its last tool call
has no result). Tool outputs are computed from in-memory project files (numbered Read output, real
grep matches, edits that change the files: ``sample_recorder.py``), so what the agent reads is
consistent. Provider usage follows Anthropic's convention (uncached ``input_tokens`` + cache reads
+ cache writes), sized from the local estimate of the conversation plus a fixed system-prompt-and-
tools overhead. The scripts of the three sessions are in ``sample_scripts.py``; the project files
they work on in ``sample_projects.py``. Output is byte-for-byte reproducible.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sample_scripts import bugfix_session, long_session, unanswered_session

from workbench.importers.native import dumps_session

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = (("bugfix", bugfix_session), ("long_session", long_session), ("unanswered", unanswered_session))


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "sample_sessions"
    out.mkdir(parents=True, exist_ok=True)
    for name, build in SAMPLES:
        path = out / f"{name}.jsonl"
        path.write_text(dumps_session(build()), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
