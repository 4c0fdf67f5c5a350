"""Benchmark case ``save_bound``: CPU of saving a replay against the replay itself, by the number
of steps (R-BOUND-2).

For each size (``BENCH_SAVE_BOUND_STEPS``, default 1,000, 2,000 and 4,000 steps) a new process
stores a session of tiny messages (``bench/tiny.py``, three messages a step, no recorded window:
the default budget, so every request holds the whole history, the case whose save grew with the
square of the steps) in a fresh store, reads it back, and replays it twice in that process:
plainly (``stream_replay`` keeping each step's figures, nothing saved: the same-run baseline)
and streamed into the store as ``workbench replay --name`` and the app save it. Each size
reports both CPU times, what saving added per step, and the save against the replay; the last
row compares the largest size with the smallest: per step, a linear save costs the same at
every size (checked: the save's CPU relative to the replay's grows ≤ 1.3×; the raw CPU per step
of the save and of what it adds are stated beside it).

    python bench/save_bound.py save_bound OUT.json '{"steps": [1000, 2000, 4000]}'
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import timed


def one_size(steps: int) -> dict:
    """Replay and save one session of ``steps`` steps in this process."""
    from tiny import tiny_session

    from workbench.services.replay import stream_replay
    from workbench.storage.store import Store

    with tempfile.TemporaryDirectory(prefix="bench-save-bound-") as tmp, \
            Store(Path(tmp) / "workbench.db") as store:
        session_id, _ = store.save_session(tiny_session(3 * steps + 1), format="native",
                                           content_hash=f"save-bound-{steps}", source_path=None)
        session = store.session(session_id)
        stream_replay(tiny_session(31))  # imports, vocabulary and templates loaded before
        plain_wall, plain_cpu, _ = timed(lambda: stream_replay(session))
        wall, cpu, saved = timed(lambda: stream_replay(session, store=store,
                                                       session_id=session_id, name="bench"))
        info = saved.info
    assert info is not None
    return {"steps": info.step_count, "messages": len(session.messages),
            "compactions": info.compactions_applied, "plain_wall": plain_wall,
            "plain_cpu": plain_cpu, "wall": wall, "cpu": cpu}


def case_save_bound(sizes: list[int]) -> dict:
    """Each size in its own process."""
    rows = []
    for n in sizes:
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, str(Path(__file__)), "one", str(n)],
                              capture_output=True, text=True, check=False, cwd=HERE.parent)
        if proc.returncode != 0:
            raise RuntimeError(f"save_bound {n}: exit {proc.returncode}: {proc.stderr[-800:]}")
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"[bench] save_bound {n:,} steps: {time.perf_counter() - started:.0f} s", flush=True)
    return {"sizes": rows, **linearity(rows)}


def linearity(rows: list[dict]) -> dict:
    """The largest size against the smallest: CPU per step of the save, of what saving added to
    the replay, and of the save relative to the replay."""
    first, last = rows[0], rows[-1]

    def per_step(r: dict, key: str) -> float:
        return r[key] / r["steps"]

    def added(r: dict) -> float:
        return (r["cpu"] - r["plain_cpu"]) / r["steps"]

    relative = (last["cpu"] / last["plain_cpu"]) / (first["cpu"] / first["plain_cpu"])
    return {"save_per_step_growth": per_step(last, "cpu") / per_step(first, "cpu"),
            "added_per_step_growth": added(last) / max(added(first), 1e-9),
            "replay_per_step_growth": per_step(last, "plain_cpu") / per_step(first, "plain_cpu"),
            "save_vs_replay_growth": relative, "linear": relative <= 1.3}


def main(argv: list[str]) -> int:
    if argv[0] == "one":
        print(json.dumps(one_size(int(argv[1]))))
        return 0
    case, out = argv[0], Path(argv[1])
    opts = json.loads(argv[2]) if len(argv) > 2 else {}
    if case != "save_bound":
        raise SystemExit(f"unknown case {case!r}")
    data = case_save_bound(opts.get("steps", [1000, 2000, 4000]))
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
