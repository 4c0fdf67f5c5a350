"""``make bench``: run every benchmark case in its own process and write ``bench/RESULTS.md``.

Options (environment): ``BENCH_RESPONSES`` (2000), ``BENCH_REPEATS`` (2), ``BENCH_NAIVE_STEPS``
(200), ``BENCH_IMPORT_MB`` (50), ``BENCH_STORE_IMPORT_MB`` (20), ``BENCH_MEMORY_RESPONSES`` (10000),
``BENCH_CORPUS_SESSIONS`` (200), ``BENCH_CORPUS_RESPONSES`` (10), ``BENCH_REAL`` (a real Claude Code
session under ``../shared/real-sessions``), ``BENCH_CODEX`` (a real Codex rollout there),
``BENCH_BOUND_SIZES`` (``5000,20000,100000``: the message counts of the ``bound`` case),
``BENCH_SAVE_BOUND_STEPS`` (``1000,2000,4000``: the step counts of the ``save_bound`` case),
``BENCH_FLOOR_REPEATS`` (5: runs of each side of the floor cases), ``BENCH_CORPUS`` (the folder
the ``twin`` case checks, default ``../shared/corpus``), ``BENCH_CASES`` (all of
:data:`DEFAULT_CASES`; ``ui`` is the older step-through case on the synthetic replay).

Cases can also be named as arguments (``python bench/run.py floor_process peer``). A run that does
not measure every case (some named, or one failed) keeps the other cases' figures from
``bench/results.json``, each with the date and load of the run that measured it, and writes the
report from the whole set.
Raw figures are kept in ``bench/results.json`` next to the report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import load_note
from report import render

#: A real Claude Code session of ``../shared/real-sessions`` (143 responses).
REAL = HERE.parents[1] / "shared" / "real-sessions" / "claude_code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"
DEFAULT_CASES = ("replay,import,tokens,startup,memory,save_memory,store_import,import_process,corpus,ui_real,ui_clicks,bound,"
                 "save_bound,"
                 "report_html,"
                 "outside,floor_process,floor_inprocess,peer,twin")
#: The real Codex rollout of the ``outside`` and floor cases.
CODEX = REAL.parents[1] / "codex_rollout" / "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"


def _case(name: str, script: str, args: list[str], tmp: Path) -> dict:
    out = tmp / f"{name}.json"
    started = time.perf_counter()
    print(f"[bench] {name} …", flush=True)
    argv = ([*args, str(out)] if script in ("ui.py", "ui_real.py", "ui_clicks.py") else [name, str(out), *args])
    proc = subprocess.run([sys.executable, str(HERE / script), *argv], cwd=HERE.parent, check=False)
    if proc.returncode != 0 or not out.is_file():
        raise RuntimeError(f"{name}: exit code {proc.returncode}")
    print(f"[bench] {name} done in {time.perf_counter() - started:.0f} s", flush=True)
    return json.loads(out.read_text(encoding="utf-8"))


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


#: The cases the hand-written notes of ``meta["later"]`` are about (measured apart from a full run).
LATER_NOTES_ABOUT = ("bound", "report_html", "outside")


def _merge(results: dict, meta: dict) -> tuple[dict, dict]:
    """This run's cases plus the earlier figures of every default case it did not measure (not
    named, or failed), each earlier one with the date and load of its own run (``meta["cases"]``)."""
    path = HERE / "results.json"
    previous = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    old_meta = previous.pop("meta", {})
    kept = [name for name in DEFAULT_CASES.split(",") if name not in results and name in previous]
    if not kept:
        return results, meta
    old_cases = old_meta.get("cases", {})
    merged, dates = {}, {}
    for name in [*DEFAULT_CASES.split(","), *results]:
        if name in results:
            merged[name], dates[name] = results[name], meta["cases"].get(name, {"date": meta["date"]})
        elif name in kept:
            merged[name] = previous[name]
            dates[name] = old_cases.get(name, {"date": old_meta.get("date", "?"), "load": old_meta.get("load_before", "")})
    later = old_meta.get("later", []) if set(kept) & set(LATER_NOTES_ABOUT) else []
    ran = set(meta.get("ran", ()))
    errors = [*meta["errors"], *(e for e in old_meta.get("errors", []) if e.split(":")[0] not in ran)]
    return merged, {**meta, "cases": dates, "later": later, "errors": errors, "kept": kept}


def main(argv: list[str] | None = None) -> int:
    env = os.environ
    named = sys.argv[1:] if argv is None else argv
    cases = named or env.get("BENCH_CASES", DEFAULT_CASES).split(",")
    responses = int(env.get("BENCH_RESPONSES", 2000))
    real = env.get("BENCH_REAL", str(REAL))
    codex = env.get("BENCH_CODEX", str(CODEX))
    floor_repeats = int(env.get("BENCH_FLOOR_REPEATS", 5))
    meta = {"date": _stamp(), "load_before": load_note(), "errors": [], "cases": {}, "ran": cases}
    started = time.perf_counter()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp_name:
        tmp = Path(tmp_name)
        home = tmp / "home"
        jobs = {
            "replay": ("cases.py", [json.dumps({"responses": responses, "repeats": int(env.get("BENCH_REPEATS", 2)),
                                                "naive_steps": int(env.get("BENCH_NAIVE_STEPS", 200)),
                                                "home": str(home)})]),
            "import": ("cases.py", [json.dumps({"megabytes": float(env.get("BENCH_IMPORT_MB", 50))})]),
            "tokens": ("cases.py", [json.dumps({"responses": 400})]),
            "startup": ("targets.py", [json.dumps({"real": real})]),
            "memory": ("targets.py", [json.dumps({"responses": int(env.get("BENCH_MEMORY_RESPONSES", 10000))})]),
            "save_memory": ("targets.py", [json.dumps({"sizes": [int(n) for n in env.get(
                "BENCH_SAVE_MEMORY_SIZES", "2000,10000").split(",")]})]),
            "store_import": ("targets.py", [json.dumps({"real": real,
                                                        "megabytes": float(env.get("BENCH_STORE_IMPORT_MB", 20))})]),
            "import_process": ("import_cases.py", [json.dumps({"paths": {"claude_code": real, "codex": codex},
                                                                "repeats": floor_repeats})]),
            "corpus": ("targets.py", [json.dumps({"sessions": int(env.get("BENCH_CORPUS_SESSIONS", 200)),
                                                  "responses": int(env.get("BENCH_CORPUS_RESPONSES", 10))})]),
            "ui_real": ("ui_real.py", [real]),
            "ui_clicks": ("ui_clicks.py", [real]),
            "report_html": ("report_open.py", [json.dumps({"real": real})]),
            "outside": ("outside.py", [json.dumps({"real": [codex, real]})]),
            "floor_process": ("floor_cases.py", [json.dumps({"paths": {"claude_code": real, "codex": codex},
                                                              "repeats": floor_repeats})]),
            "floor_inprocess": ("floor_cases.py", [json.dumps({"paths": {"claude_code": real, "codex": codex},
                                                                "repeats": floor_repeats})]),
            "peer": ("floor_cases.py", [json.dumps({"path": real, "repeats": 3})]),
            "twin": ("twin.py", [json.dumps({"corpus": env.get("BENCH_CORPUS", "")})]),
            "bound": ("bound.py", [json.dumps({"sizes": [int(n) for n in env.get(
                "BENCH_BOUND_SIZES", "5000,20000,100000").split(",")]})]),
            "save_bound": ("save_bound.py", [json.dumps({"steps": [int(n) for n in env.get(
                "BENCH_SAVE_BOUND_STEPS", "1000,2000,4000").split(",")]})]),
        }
        for name in cases:
            if name not in jobs and name != "ui":
                meta["errors"].append(f"{name}: no such case (the cases: {DEFAULT_CASES},ui)")
                continue
            load, date = load_note(), _stamp()
            try:
                if name == "ui":
                    store = results.get("replay", {}).get("store")
                    if store is None:
                        raise RuntimeError("ui: needs the replay case (its store) in the same run")
                    results[name] = _case(name, "ui.py", [str(home), store["session_id"], store["replay_id"],
                                                          str(store["steps"])], tmp)
                else:
                    script, args = jobs[name]
                    results[name] = _case(name, script, args, tmp)
            except Exception as exc:  # noqa: BLE001 (one failed case is reported, the others still run)
                meta["errors"].append(f"{name}: {exc}")
            else:
                meta["cases"][name] = {"date": date, "load": f"{load}; at its end {load_note()}"}
    meta["load_after"] = load_note()
    meta["duration"] = time.perf_counter() - started
    results, meta = _merge(results, meta)
    (HERE / "results.json").write_text(json.dumps({"meta": meta, **results}, indent=1), encoding="utf-8")
    (HERE / "RESULTS.md").write_text(render(results, meta), encoding="utf-8")
    print((HERE / "RESULTS.md").read_text(encoding="utf-8"))
    return 1 if meta["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
