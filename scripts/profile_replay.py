"""Measure (and optionally profile) the replay of generated sessions of growing length.

Why: the replay must cost what changes per step, not the whole history. This script replays
``synth_session(responses=N)`` with the default configuration and the offline summariser for
several N and prints total wall/CPU time, per-step median, p95 and p99, the messages and tool
results the engine really worked on, and the machine load, so a quadratic term shows up as a
per-step time that grows with N. It is a measuring tool, not a
test (timings depend on the machine).

Usage::

    .venv/bin/python scripts/profile_replay.py                 # N = 250 500 1000 2000
    .venv/bin/python scripts/profile_replay.py 500 --profile   # pyinstrument tree for N = 500
    .venv/bin/python scripts/profile_replay.py 2000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from iris.replay import ReplayEnvironment, ReplayObservers, replay
from iris.tokens import TokenEstimator
from synth import synth_session


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def measure(responses: int, *, profile: bool = False) -> dict:
    """One cold replay (fresh estimator) of a generated session; figures in milliseconds."""
    session = synth_session(responses=responses)
    stamps: list[float] = []
    cpu_stamps: list[float] = []
    estimator = TokenEstimator()
    profiler = None
    if profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0005)
        profiler.start()
    start, cpu = time.perf_counter(), time.process_time()
    cpu_start = cpu

    def progress(*_: int) -> None:
        stamps.append(time.perf_counter())
        cpu_stamps.append(time.process_time())

    result = replay(session, observers=ReplayObservers(progress=progress),
                    environment=ReplayEnvironment(estimator=estimator))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if profiler is not None:
        profiler.stop()
        print(profiler.output_text(unicode=True, color=False, show_all=False))
    steps = [(b - a) * 1000 for a, b in zip([start, *stamps], stamps)]
    cpu_steps = [(b - a) * 1000 for a, b in zip([cpu_start, *cpu_stamps], cpu_stamps)]
    return {"responses": responses, "steps": len(steps), "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3), "step_ms_median": round(statistics.median(steps), 3),
            "step_ms_p95": round(_percentile(steps, 95), 3),
            "step_ms_p99": round(_percentile(steps, 99), 3), "step_ms_max": round(max(steps), 3),
            "step_cpu_ms_median": round(statistics.median(cpu_steps), 3),
            "step_cpu_ms_p95": round(_percentile(cpu_steps, 95), 3),
            "step_cpu_ms_p99": round(_percentile(cpu_steps, 99), 3),
            "messages_counted": result.messages_counted, "encode_calls": estimator.encode_calls,
            "compactions": len(result.checkpoints),
            "phases": {ph: sum(p.phase == ph for p in result.preparations)
                       for ph in ("ready", "failed", "cancelled")}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[250, 500, 1000, 2000])
    parser.add_argument("--profile", action="store_true", help="print a pyinstrument tree per size")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    rows = []
    for n in args.sizes:
        load = os.getloadavg()
        row = measure(n, profile=args.profile)
        row["load_1m_before"] = round(load[0], 2)
        row["load_1m_after"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
