"""The benchmark cases; each runs in its own process (``python bench/cases.py CASE OUT.json``) so
caches, memory high-water marks and imported modules never leak from one case into another.

* ``replay``: the 2,000-response synthetic session, optimised replay (repeated, cold caches) and
  the naive baseline on a prefix of the same session; then the store case on the last replay
  (save, reopen, first step) and a store home the UI case opens.
* ``import``: a 50 MB Claude Code transcript, ``load_session`` against ``json.loads`` of every line.
* ``tokens``: the tool outputs of a synthetic session, estimator cold / warm against raw tiktoken.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from iris.session import Session
from iris.tokens import TokenEstimator
from measure import Stats, peak_rss_bytes, percentile, reset_peak, retained_size, rss_bytes, timed
from synth import synth_session, write_claude_code_transcript


def _prefix(session: Session, steps: int) -> Session:
    """The session up to (and including) its ``steps``-th assistant response."""
    batches = session.index.batches
    if steps >= len(batches):
        return session
    end = batches[steps - 1].assistant_message + 1
    return Session(header=session.header, messages=session.messages[:end])


def _one_replay(session: Session) -> dict:
    from iris.replay import ReplayEnvironment, ReplayObservers, replay

    stamps: list[float] = []
    cpu_stamps: list[float] = []

    def progress(done: int, total: int) -> None:
        stamps.append(time.perf_counter())
        cpu_stamps.append(time.process_time())
    estimator = TokenEstimator()  # cold content cache for every repetition
    reset_peak()
    base = rss_bytes()
    start, cpu_start = time.perf_counter(), time.process_time()
    wall, cpu, result = timed(lambda: replay(session, observers=ReplayObservers(progress=progress),
                                             environment=ReplayEnvironment(estimator=estimator)))
    steps = [b - a for a, b in zip([start, *stamps], stamps)]
    cpu_steps = [b - a for a, b in zip([cpu_start, *cpu_stamps], cpu_stamps)]
    return {"wall": wall, "cpu": cpu, "steps": steps, "cpu_steps": cpu_steps,
            "peak_extra": peak_rss_bytes() - base,
            "archive_bytes": sum(len(t.encode()) for t in result.archives.values()), "stamps": [s - start for s in stamps],
            "cpu_stamps": [s - cpu_start for s in cpu_stamps], "result": result}


def case_replay(responses: int, repeats: int, naive_steps: int, home: Path) -> dict:
    session, size = retained_size(lambda: synth_session(responses))
    runs = [_one_replay(session) for _ in range(repeats)]
    last = runs[-1]["result"]
    per_step = [s * 1000 for s in runs[-1]["steps"]]
    per_step_cpu = [s * 1000 for s in runs[-1]["cpu_steps"]]
    at = min(naive_steps, len(runs[-1]["stamps"])) - 1
    prefix_opt = [r["stamps"][at] for r in runs]
    prefix_cpu = [r["cpu_stamps"][at] for r in runs]
    naive = _naive(_prefix(session, naive_steps))
    out = {
        "responses": len(session.index.batches), "session_bytes": size,
        "session_messages": len(session.messages),
        "tool_output_tokens": sum(TokenEstimator().count_many(
            [b.text for m in session.messages for b in m.content if b.type == "tool_result"])),
        "wall": Stats.of([r["wall"] for r in runs]).as_dict(),
        "cpu": Stats.of([r["cpu"] for r in runs]).as_dict(),
        "step_ms_median": percentile(per_step, 50), "step_ms_p95": percentile(per_step, 95),
        "step_ms_max": max(per_step), "step_ms_p99": percentile(per_step, 99),
        "step_cpu_ms_median": percentile(per_step_cpu, 50),
        "step_cpu_ms_p95": percentile(per_step_cpu, 95),
        "peak_extra": Stats.of([r["peak_extra"] for r in runs]).as_dict(),
        "archive_bytes": runs[-1]["archive_bytes"],
        "compactions": len(last.checkpoints),
        "phases": {ph: sum(1 for p in last.preparations if p.phase == ph) for ph in ("ready", "failed", "cancelled")},
        "naive_steps": naive_steps, "prefix_wall": Stats.of(prefix_opt).as_dict(),
        "prefix_cpu": Stats.of(prefix_cpu).as_dict(), "naive": naive,
    }
    del runs
    out["traced"] = _traced(session)
    out["store"] = case_store(session, last, home)
    return out


def _traced(session: Session) -> dict:
    """One more (untimed) replay under tracemalloc: Python memory at its peak and what the
    result keeps (records, final requests, archive texts), so the peak splits into output and
    working memory."""
    import gc
    import tracemalloc

    from iris.replay import ReplayEnvironment, replay

    estimator = TokenEstimator()
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    result = replay(session, environment=ReplayEnvironment(estimator=estimator))
    gc.collect()
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return {"peak": peak - start, "result": kept - start}


def _naive(session: Session) -> dict:
    from iris.replay import ReplayEnvironment, replay
    from naive import NaiveEstimator, naive_mode

    with naive_mode():
        reset_peak()
        base = rss_bytes()
        wall, cpu, result = timed(lambda: replay(session,
                                                 environment=ReplayEnvironment(estimator=NaiveEstimator())))
    return {"wall": wall, "cpu": cpu, "steps": len(result.preparations), "peak_extra": peak_rss_bytes() - base}


def case_store(session: Session, result, home: Path) -> dict:
    """Save the replay into a fresh store at ``home``, then reopen it as the app does."""
    from iris.config import default_config
    from iris.prompts import PromptSnapshot

    from workbench.importers.native import dump_session
    from workbench.services.replay import bundle_from_replay
    from workbench.storage.store import Store

    home.mkdir(parents=True, exist_ok=True)
    src = dump_session(session, home / "bench-synth.jsonl")
    with Store(home / "workbench.db") as store:
        session_id = store.import_file(src).session_id
        bundle = bundle_from_replay(result, config=default_config(), prompts=PromptSnapshot.defaults())
        save_wall, save_cpu, info = timed(lambda: store.replays.save(bundle, session_id=session_id,
                                                                     name="default"))
    reopen = []
    for _ in range(5):
        def reopen_once():
            with Store(home / "workbench.db") as st:
                replay = st.replays.open(info.id)
                prep = replay.preparation(len(replay) - 1)
                replay.request(prep.final_request_ref)
                return len(replay)
        reopen.append(timed(reopen_once))
    return {"save_wall": save_wall, "save_cpu": save_cpu, "steps": reopen[0][2],
            "db_bytes": (home / "workbench.db").stat().st_size, "session_id": session_id,
            "replay_id": info.id, "reopen_wall": Stats.of([r[0] for r in reopen]).as_dict(),
            "reopen_cpu": Stats.of([r[1] for r in reopen]).as_dict()}


def case_import(megabytes: float, repeats: int) -> dict:
    from workbench.importers import load_session

    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        path = Path(tmp) / "claude-code.jsonl"
        lines = write_claude_code_transcript(path, megabytes=megabytes)
        size = path.stat().st_size

        def baseline():
            with path.open("rb") as fh:
                for line in fh:
                    json.loads(line)

        def measure(fn):
            reset_peak()
            base = rss_bytes()
            wall, cpu, res = timed(fn)
            return wall, cpu, peak_rss_bytes() - base, res

        base = [measure(baseline) for _ in range(repeats)]
        imp = [measure(lambda: load_session(path)) for _ in range(repeats)]
        messages = len(imp[-1][3].session.messages)
        session_bytes = retained_size(lambda: load_session(path))[1]
    return {"file_bytes": size, "lines": lines, "messages": messages, "session_bytes": session_bytes,
            "base_wall": Stats.of([b[0] for b in base]).as_dict(), "base_cpu": Stats.of([b[1] for b in base]).as_dict(),
            "base_peak": Stats.of([b[2] for b in base]).as_dict(),
            "wall": Stats.of([r[0] for r in imp]).as_dict(), "cpu": Stats.of([r[1] for r in imp]).as_dict(),
            "peak_extra": Stats.of([r[2] for r in imp]).as_dict()}


def case_tokens(responses: int, repeats: int) -> dict:
    session = synth_session(responses, seed=23)
    texts = [b.text for m in session.messages for b in m.content if b.type == "tool_result"]
    raw_encoding = TokenEstimator()._encoding
    chars = sum(len(t) for t in texts)
    raw, cold, warm = [], [], []
    total = sum(len(raw_encoding.encode_ordinary(t)) for t in texts)
    for _ in range(repeats):
        raw.append(timed(lambda: [raw_encoding.encode_ordinary(t) for t in texts])[:2])
        est = TokenEstimator()
        cold.append(timed(lambda est=est: [est.count(t) for t in texts])[:2])
        warm.append(timed(lambda est=est: [est.count(t) for t in texts])[:2])
    return {"texts": len(texts), "chars": chars, "tokens": total,
            "raw_wall": Stats.of([r[0] for r in raw]).as_dict(), "raw_cpu": Stats.of([r[1] for r in raw]).as_dict(),
            "cold_wall": Stats.of([r[0] for r in cold]).as_dict(), "cold_cpu": Stats.of([r[1] for r in cold]).as_dict(),
            "warm_wall": Stats.of([r[0] for r in warm]).as_dict(), "warm_cpu": Stats.of([r[1] for r in warm]).as_dict()}


def main(argv: list[str]) -> int:
    case, out = argv[0], Path(argv[1])
    opts = json.loads(argv[2]) if len(argv) > 2 else {}
    if case == "replay":
        data = case_replay(opts.get("responses", 2000), opts.get("repeats", 3), opts.get("naive_steps", 300),
                           Path(opts["home"]))
    elif case == "import":
        data = case_import(opts.get("megabytes", 50), opts.get("repeats", 3))
    elif case == "tokens":
        data = case_tokens(opts.get("responses", 400), opts.get("repeats", 5))
    else:
        raise SystemExit(f"unknown case {case!r}")
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
