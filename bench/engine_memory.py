"""Python memory of one replay, with and without the final requests and archive texts kept.

For ``synth_session(responses=N)``: the session's own size in memory (tracemalloc while it is
built), then one replay with ``keep_bodies=True`` (the default: every final request and archive
text in the result) and one with ``keep_bodies=False`` (requests only to a sink that drops them,
archives only to the replay's folder). For each: the peak above the start and what the result
keeps, in MB and as a multiple of the session.

Usage::

    .venv/bin/python bench/engine_memory.py [N] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from iris.replay import ReplayEnvironment, ReplayObservers, ReplayOptions, replay
from iris.tokens import TokenEstimator
from measure import retained_size
from synth import synth_session


class _DropSink:
    """Receives every request and keeps none (what a streaming store would do after writing)."""

    def save(self, preparation, request) -> None:
        return None


def _one(session, keep_bodies: bool) -> dict:
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    result = replay(session, observers=ReplayObservers(sink=None if keep_bodies else _DropSink()),
                    environment=ReplayEnvironment(estimator=TokenEstimator()),
                    options=ReplayOptions(keep_bodies=keep_bodies))
    gc.collect()
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return {"peak_mb": round((peak - start) / 1e6, 1), "result_mb": round((kept - start) / 1e6, 1)}


def measure(responses: int) -> dict:
    session, size = retained_size(lambda: synth_session(responses=responses))
    rows = {"responses": responses, "session_mb": round(size / 1e6, 1)}
    for keep in (True, False):
        row = _one(session, keep)
        row["peak_x_session"] = round(row["peak_mb"] * 1e6 / size, 2)
        rows[f"keep_bodies_{str(keep).lower()}"] = row
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("responses", nargs="?", type=int, default=2000)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    row = measure(args.responses)
    print(json.dumps(row, indent=2))
    if args.json:
        args.json.write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
