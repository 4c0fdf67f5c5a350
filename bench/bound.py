"""Benchmark case ``bound``: replay time and memory against the number of messages (R-BOUND-1).

For each size (``BENCH_BOUND_SIZES``, default 5,000, 20,000 and 100,000 messages) a new process
writes a session of tiny messages (``bench/tiny.py``) as a native transcript, imports it into a
fresh store (``Store.import_file``, the same-run baseline) and replays the stored session as a
summary needs it (``keep_bodies=False``: no request kept in memory). Each size reports wall and
CPU seconds of both, the replay's peak RSS above the loaded session, CPU microseconds per
message, and the replay's CPU per step by tenth of the session (the progress callback's
``process_time`` between steps): flat tenths are a step whose work does not grow with the live
window. The report compares the total CPU of 20,000 and 5,000 messages (linear is 4×) and the CPU
per message of 100,000 and 20,000 (each window between compactions is bounded by the budget, so
per message is flat only when each step is).

    python bench/bound.py bound OUT.json '{"sizes": [5000, 20000, 100000]}'
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import peak_rss_bytes, reset_peak, rss_bytes, timed


def one_size(messages: int, responses: str = "many") -> dict:
    """Import and replay one session of ``messages`` tiny messages in this process."""
    from iris.replay import ReplayObservers, ReplayOptions, replay
    from tiny import tiny_session

    from workbench.importers.native import dump_session
    from workbench.storage.store import Store

    with tempfile.TemporaryDirectory(prefix="bench-bound-") as tmp_name:
        tmp = Path(tmp_name)
        path = tmp / "tiny.jsonl"
        dump_session(tiny_session(messages, "few" if responses == "few" else "many"), path)
        with Store(tmp / "workbench.db") as store:
            imp_wall, imp_cpu, outcome = timed(lambda: store.import_file(path))
            session = store.session(outcome.session_id)
        file_bytes = path.stat().st_size
        reset_peak()
        base = rss_bytes()
        steps: list[float] = []
        last = [time.process_time()]

        def progress(_done: int, _total: int) -> None:
            now = time.process_time()
            steps.append(now - last[0])
            last[0] = now

        wall, cpu, result = timed(lambda: replay(session, observers=ReplayObservers(progress=progress),
                                                 options=ReplayOptions(keep_bodies=False)))
        peak = peak_rss_bytes() - base
    return {"messages": len(session.messages), "steps": len(result.preparations),
            "compactions": len(result.checkpoints), "responses": responses,
            "import_wall": imp_wall, "import_cpu": imp_cpu, "wall": wall, "cpu": cpu,
            "peak_extra": peak, "file_bytes": file_bytes, "tenths_ms": tenths_ms(steps),
            "compaction_steps": [c.step_index for c in result.checkpoints]}


def tenths_ms(steps: list[float]) -> list[float]:
    """Mean CPU per step, in milliseconds, of each tenth of the steps."""
    n = len(steps)
    bounds = [round(n * i / 10) for i in range(11)]
    return [round(sum(steps[a:b]) / (b - a) * 1e3, 3) for a, b in itertools.pairwise(bounds) if b > a]


def case_bound(sizes: list[int]) -> dict:
    """Each size in its own process (a clean peak RSS)."""
    rows = []
    for n in sizes:
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, str(Path(__file__)), "one", str(n)], capture_output=True,
                              text=True, check=False, cwd=HERE.parent)
        if proc.returncode != 0:
            raise RuntimeError(f"bound {n}: exit {proc.returncode}: {proc.stderr[-800:]}")
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"[bench] bound {n:,} messages: {time.perf_counter() - started:.0f} s", flush=True)
    return {"sizes": rows}


def main(argv: list[str]) -> int:
    if argv[0] == "one":
        print(json.dumps(one_size(int(argv[1]))))
        return 0
    case, out = argv[0], Path(argv[1])
    opts = json.loads(argv[2]) if len(argv) > 2 else {}
    if case != "bound":
        raise SystemExit(f"unknown case {case!r}")
    data = case_bound(opts.get("sizes", [5000, 20000, 100000]))
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
