"""Benchmark cases of the corpus-evaluation targets; each runs in its own process
(``python bench/targets.py CASE OUT.json OPTIONS_JSON``), like ``bench/cases.py``.

* ``startup``: ``workbench replay`` of a real session (a new process each time, start-up included)
  against a naive process that loads the same transcript and re-encodes the whole text before
  every assistant response (also a new process).
* ``memory``: peak RSS of an in-process replay of a long synthetic session against the memory the
  loaded session itself keeps; then the total replay CPU of 501, 2,001 and that session's 10,001
  responses, the fitted exponent, and the per-step CPU median at the session's start and end.
* ``save_memory``: peak RSS above the loaded session of replaying a stored session and saving it
  as the app and the CLI do (streamed into the store), against the previous whole-replay save and
  the engine alone keeping nothing (``bench/save_memory.py``, one process per path and size).
* ``store_import``: ``Store.import_file`` of a Claude Code transcript into a fresh store against
  ``json.loads`` of its lines; then the store size against the transcript once a real session and
  its default replay are saved.
* ``corpus``: ``workbench batch`` of many small sessions, serially, through the process pool and
  through a Dask ``LocalCluster`` (new processes, start-up included); the three outputs compared.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from measure import Stats, peak_rss_bytes, percentile, reset_peak, retained_size, rss_bytes, timed

WORKBENCH = [sys.executable, "-m", "workbench.cli"]


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """``(wall, cpu)`` seconds of one command in a new process (CPU of the process and its
    children, e.g. pool workers); its error output on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[2:5])}…: exit {proc.returncode}: {proc.stderr[-800:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _stats(runs: list[tuple[float, float]]) -> dict:
    return {"wall": Stats.of([r[0] for r in runs]).as_dict(), "cpu": Stats.of([r[1] for r in runs]).as_dict()}


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "WORKBENCH_HOME": str(home)}


NAIVE_SCRIPT = """
import sys, time
from iris.vocabulary import cl100k_encoding
from iris.session import block_text
from workbench.importers import load_session
session = load_session(sys.argv[1]).session
encoding = cl100k_encoding()
texts = [" ".join(block_text(b) for b in m.content) for m in session.messages]
for batch in session.index.batches:
    len(encoding.encode_ordinary("\\n".join(texts[:batch.assistant_message])))
"""


def case_startup(path: str, repeats: int, naive_repeats: int) -> dict:
    """Real session, new process each time: ``workbench replay FILE`` vs the naive re-encode."""
    from workbench.importers import load_session

    session = load_session(path).session
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        env = _env(Path(tmp))
        replay = [_run([*WORKBENCH, "replay", path], env) for _ in range(repeats)]
        naive = [_run([sys.executable, "-c", NAIVE_SCRIPT, path], env) for _ in range(naive_repeats)]
        bare = [_run([sys.executable, "-c", "pass"], env) for _ in range(repeats)]
        imports = [_run([sys.executable, "-X", "importtime", "-c", "import workbench.cli"], env)
                   for _ in range(1)]
    return {"path": Path(path).name, "responses": len(session.index.batches),
            "messages": len(session.messages), "replay": _stats(replay), "naive": _stats(naive),
            "python": _stats(bare), "cli_import": _stats(imports)}


def case_memory(responses: int, scaling: list[int]) -> dict:
    """Peak RSS above the loaded session during one in-process replay, and the per-step figures
    of that replay (median, p99); then the total cost against the session's length (see
    :func:`scaling_figures`)."""
    from iris.replay import ReplayEnvironment, ReplayObservers, replay
    from iris.tokens import TokenEstimator
    from synth import synth_session

    session, size = retained_size(lambda: synth_session(responses))
    stamps: list[float] = []
    cpu_stamps: list[float] = []

    def progress(done: int, total: int) -> None:
        stamps.append(time.perf_counter())
        cpu_stamps.append(time.process_time())
    reset_peak()
    base = rss_bytes()
    observers = ReplayObservers(progress=progress)
    start, cpu_start = time.perf_counter(), time.process_time()
    wall, cpu, result = timed(lambda: replay(session, observers=observers,
                                             environment=ReplayEnvironment(estimator=TokenEstimator())))
    peak = peak_rss_bytes() - base
    steps = [(b - a) * 1000 for a, b in zip([start, *stamps], stamps)]
    cpu_steps = [(b - a) * 1000 for a, b in zip([cpu_start, *cpu_stamps], cpu_stamps)]
    out = {"responses": len(session.index.batches), "session_bytes": size,
           "peak_extra": peak, "wall": wall, "cpu": cpu,
           "step_ms_median": percentile(steps, 50), "step_ms_p99": percentile(steps, 99),
           "compactions": len(result.checkpoints)}
    del result
    out["scaling"] = scaling_figures(cpu, cpu_steps, scaling)
    return out


def scaling_figures(cpu: float, cpu_steps: list[float], shorter: list[int]) -> dict:
    """Total replay CPU of sessions of ``shorter`` responses (the same generator and seed, each
    replayed in this process after the long one) and of the long one; the exponent ``k`` of
    ``total ∝ steps^k`` fitted by least squares on the logarithms; the per-step CPU median of the
    long session's first and last ``window`` steps (flat per-step cost: the same)."""
    import math

    from iris.replay import ReplayEnvironment, replay
    from iris.tokens import TokenEstimator
    from synth import synth_session

    totals = []
    for n in shorter:
        short = synth_session(n)
        steps = len(short.index.batches)
        totals.append({"steps": steps, "cpu": timed(lambda short=short: replay(
            short, environment=ReplayEnvironment(estimator=TokenEstimator())))[1]})
        del short
    totals.append({"steps": len(cpu_steps), "cpu": cpu})
    xs = [math.log(t["steps"]) for t in totals]
    ys = [math.log(t["cpu"]) for t in totals]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    exponent = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    window = min(500, len(cpu_steps) // 4)
    return {"totals": totals, "exponent": exponent, "window": window,
            "start_ms": percentile(cpu_steps[:window], 50), "end_ms": percentile(cpu_steps[-window:], 50),
            "start_p95_ms": percentile(cpu_steps[:window], 95), "end_p95_ms": percentile(cpu_steps[-window:], 95)}


def _store_import_once(path: Path, tmp: Path, i: int) -> tuple[float, float]:
    from workbench.storage.store import Store

    with Store(tmp / f"store-{i}.db") as store:
        wall, cpu, _ = timed(lambda: store.import_file(path))
    return wall, cpu


def case_store_import(megabytes: float, repeats: int, real: str) -> dict:
    from synth import write_claude_code_transcript

    with tempfile.TemporaryDirectory(prefix="bench-store-import-") as tmp_name:
        tmp = Path(tmp_name)
        path = tmp / "claude-code.jsonl"
        write_claude_code_transcript(path, megabytes=megabytes)

        def baseline() -> None:
            with path.open("rb") as fh:
                for line in fh:
                    json.loads(line)
        base = [timed(baseline)[:2] for _ in range(repeats)]
        imp = [_store_import_once(path, tmp, i) for i in range(repeats)]
        size = store_size(real, tmp / "size")
        file_bytes = path.stat().st_size
    return {"file_bytes": file_bytes,
            "base_wall": Stats.of([b[0] for b in base]).as_dict(), "base_cpu": Stats.of([b[1] for b in base]).as_dict(),
            "wall": Stats.of([r[0] for r in imp]).as_dict(), "cpu": Stats.of([r[1] for r in imp]).as_dict(),
            "size": size}


def store_size(path: str, home: Path) -> dict:
    """Bytes of a store holding one real session and its ``default`` replay, against the
    transcript (uncompressed)."""
    from workbench.services.replay import replay_and_save
    from workbench.storage.store import Store

    raw = gzip.decompress(Path(path).read_bytes()) if path.endswith(".gz") else Path(path).read_bytes()
    home.mkdir(parents=True)
    with Store(home / "workbench.db") as store:
        sid = store.import_file(path).session_id
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        session_only = (home / "workbench.db").stat().st_size
        replay_and_save(store, sid)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    files = [p for p in home.iterdir() if p.name.startswith("workbench.db") and not p.name.endswith(".lock")]
    return {"path": Path(path).name, "transcript_bytes": len(raw), "session_only_bytes": session_only,
            "store_bytes": sum(p.stat().st_size for p in files)}


def case_corpus(sessions: int, responses: int, jobs: int) -> dict:
    """``workbench batch`` over ``sessions`` synthetic sessions: serial, process pool, Dask."""
    from synth import synth_session

    from workbench.importers.native import dump_session

    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp_name:
        tmp = Path(tmp_name)
        corpus = tmp / "corpus"
        corpus.mkdir()
        for i in range(sessions):
            dump_session(synth_session(responses, seed=1000 + i, session_id=f"corpus-{i:03d}"),
                         corpus / f"s{i:03d}.jsonl")
        env = _env(tmp / "home")
        runs = {}
        for name, extra in (("serial", ["--jobs", "1"]), ("pool", ["--jobs", str(jobs)]),
                            ("dask", ["--jobs", str(jobs), "--dask"])):
            out = tmp / f"out-{name}"
            wall, cpu = _run([*WORKBENCH, "batch", "--config", "default", str(corpus), "--out", str(out),
                              *extra], env)
            runs[name] = {"wall": wall, "cpu": cpu, "tables": _tables(out)}
            shutil.rmtree(out, ignore_errors=True)
    same = runs["pool"]["tables"] == runs["dask"]["tables"]
    return {"sessions": sessions, "responses": responses, "jobs": jobs, "cpus": os.cpu_count(),
            "runs": {k: {"wall": v["wall"], "cpu": v["cpu"], "rows": v["tables"]} for k, v in runs.items()},
            "pool_equals_dask": same}


def _tables(out: Path) -> dict[str, int]:
    """Row count per table of a batch output (read with pyarrow)."""
    import pyarrow.dataset as ds

    counts = {}
    for table in sorted(p.name for p in out.iterdir() if p.is_dir()):
        counts[table] = ds.dataset(out / table, format="parquet", partitioning="hive").count_rows()
    return counts


def main(argv: list[str]) -> int:
    case, out = argv[0], Path(argv[1])
    opts = json.loads(argv[2]) if len(argv) > 2 else {}
    if case == "startup":
        data = case_startup(opts["real"], opts.get("repeats", 3), opts.get("naive_repeats", 1))
    elif case == "memory":
        data = case_memory(opts.get("responses", 10000), opts.get("scaling", [500, 2000]))
    elif case == "save_memory":
        from save_memory import run

        data = {"runs": [row for n in opts.get("sizes", [2000, 10000])
                         for row in run(n, opts.get("paths", ["whole", "streamed", "engine"]))]}
    elif case == "store_import":
        data = case_store_import(opts.get("megabytes", 20), opts.get("repeats", 3), opts["real"])
    elif case == "corpus":
        data = case_corpus(opts.get("sessions", 200), opts.get("responses", 20), opts.get("jobs", 2))
    else:
        raise SystemExit(f"unknown case {case!r}")
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
