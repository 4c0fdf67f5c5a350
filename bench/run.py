"""``make bench``: run every benchmark case in its own process and write ``bench/RESULTS.md``.

Options (environment): ``BENCH_RESPONSES`` (2000), ``BENCH_REPEATS`` (3), ``BENCH_NAIVE_STEPS``
(300), ``BENCH_IMPORT_MB`` (50), ``BENCH_CASES`` (``replay,import,tokens,ui``). Raw figures are kept
in ``bench/results.json`` next to the report.
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


def _case(name: str, script: str, args: list[str], tmp: Path) -> dict:
    out = tmp / f"{name}.json"
    started = time.perf_counter()
    print(f"[bench] {name} …", flush=True)
    proc = subprocess.run([sys.executable, str(HERE / script), *args, str(out)]
                          if script == "ui.py" else [sys.executable, str(HERE / script), name, str(out), *args],
                          cwd=HERE.parent, check=False)
    if proc.returncode != 0 or not out.is_file():
        raise RuntimeError(f"{name}: exit code {proc.returncode}")
    print(f"[bench] {name} done in {time.perf_counter() - started:.0f} s", flush=True)
    return json.loads(out.read_text(encoding="utf-8"))


def main() -> int:
    env = os.environ
    cases = env.get("BENCH_CASES", "replay,import,tokens,ui").split(",")
    responses = int(env.get("BENCH_RESPONSES", 2000))
    meta = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "load_before": load_note(), "errors": []}
    started = time.perf_counter()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp_name:
        tmp = Path(tmp_name)
        home = tmp / "home"
        jobs = {
            "replay": ("cases.py", [json.dumps({"responses": responses, "repeats": int(env.get("BENCH_REPEATS", 3)),
                                                "naive_steps": int(env.get("BENCH_NAIVE_STEPS", 300)),
                                                "home": str(home)})]),
            "import": ("cases.py", [json.dumps({"megabytes": float(env.get("BENCH_IMPORT_MB", 50))})]),
            "tokens": ("cases.py", [json.dumps({"responses": 400})]),
        }
        for name in cases:
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
    meta["load_after"] = load_note()
    meta["duration"] = time.perf_counter() - started
    (HERE / "results.json").write_text(json.dumps({"meta": meta, **results}, indent=1), encoding="utf-8")
    (HERE / "RESULTS.md").write_text(render(results, meta), encoding="utf-8")
    print((HERE / "RESULTS.md").read_text(encoding="utf-8"))
    return 1 if meta["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
