"""Price the as-recorded replay of every real transcript against its recorded bill (R-TRUTH-1).

The as-recorded replay (``--baseline recorded``) sends what the agent sent, so it must cost what
the session was billed. This script replays every transcript in ``../shared/real-sessions`` and
``../shared/corpus`` (or the files given) with ``baseline="recorded"`` and prints a Markdown table:
the recorded bill, the replay's cost as ``--summary-json`` states it (``cost.replay_usd``), and
the same steps priced by the prompt-cache model alone (every request treated as one the agent did
not send: what a changed request is priced with), each with its difference from the bill.

Usage::

    .venv/bin/python scripts/as_recorded_bill.py                # every real transcript
    .venv/bin/python scripts/as_recorded_bill.py FILE [FILE ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def transcripts() -> list[Path]:
    found: list[Path] = []
    for folder in (SHARED / "real-sessions", SHARED / "corpus"):
        found += sorted(p for p in folder.glob("*/*") if p.suffix not in (".md", ".txt"))
    return found


def pct(value: float | None, bill: float | None) -> str:
    if value is None or not bill:
        return "—"
    return f"{(value - bill) / bill * 100:+.2f} %"


def main(argv: list[str]) -> int:
    from workbench import pricing
    from workbench.importers import load_session
    from workbench.services.replay import stream_replay

    files = [Path(a) for a in argv] or transcripts()
    print("| Transcript | Bill | As-recorded replay | vs bill | Cache model alone | vs bill |")
    print("|---|---|---|---|---|---|")
    sent = pricing._as_recorded
    for path in files:
        session = load_session(path).session
        streamed = stream_replay(session, baseline="recorded", prefixes=True)
        cost = pricing.replay_cost(session, streamed.result, prefixes=streamed.prefixes)
        pricing._as_recorded = lambda _step: False
        try:
            model = pricing.replay_cost(session, streamed.result, prefixes=streamed.prefixes)
        finally:
            pricing._as_recorded = sent
        bill = cost.recorded_billed_usd
        print(f"| `{path.name[:36]}` | {bill if bill is not None else '—'} | {cost.replay_usd} | "
              f"{pct(cost.replay_usd, bill)} | {model.replay_usd} | {pct(model.replay_usd, bill)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
