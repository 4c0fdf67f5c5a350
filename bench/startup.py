"""Whole-process figures for one real session: ``workbench replay PATH`` against the naive baseline.

The naive baseline is what a user could write without the engine: a fresh Python process that
loads the transcript with the same importer and, at every assistant response, encodes the whole
text sent so far with tiktoken. Both sides are timed as separate processes (start-up, imports and
the vocabulary load included), each ``repeats`` times after one warm-up run, and the medians are
compared. The command-line replay runs against a throw-away store (``WORKBENCH_HOME`` in a
temporary folder); byte code is cached under ``PYTHONPYCACHEPREFIX`` in that folder, as an
installed package has it (``PYTHONDONTWRITEBYTECODE`` would add ~0.4 s of compiling to each run).

Also measured: the start-up alone (``workbench --help``-free: importing what ``workbench replay``
imports and loading the vocabulary) and whether pandas, numpy or httpx are imported on that path.

Usage::

    .venv/bin/python bench/startup.py PATH [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The naive baseline, run as ``python -c`` with the transcript path as its argument.
NAIVE = """
import sys
from iris.session import block_text
from iris.vocabulary import cl100k_encoding
from workbench.importers import load_session
session = load_session(sys.argv[1]).session
encoding = cl100k_encoding()
total = 0
for batch in session.index.batches:
    sent = session.messages[:batch.assistant_message]
    text = "\\n".join(block_text(b) for m in sent for b in m.content)
    total += len(encoding.encode_ordinary(text))
print(len(session.index.batches), total)
"""

#: What ``workbench replay`` imports before it reads a transcript, plus the vocabulary load.
STARTUP = """
import json, sys, time
t = time.perf_counter()
try:
    from workbench.cli import _import_sqlite_utils_without_pandas
    _import_sqlite_utils_without_pandas()
except ImportError:  # a version of the workbench before the lazy import
    pass
import workbench.cli.replay, workbench.importers
imported = time.perf_counter()
from iris.vocabulary import cl100k_encoding
cl100k_encoding()
loaded = time.perf_counter()
heavy = sorted(m for m in ("pandas", "numpy", "httpx", "tenacity", "pyarrow") if m in sys.modules)
print(json.dumps({"imports_s": imported - t, "vocabulary_s": loaded - imported, "heavy_modules": heavy}))
"""


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall and CPU seconds (children's user + system) of one process, and its stdout."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed: {done.stderr.strip()[-400:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, done.stdout


def measure(path: Path, repeats: int = 5) -> dict:
    """Medians of ``repeats`` runs of each process; the ratio naive / replay (wall and CPU)."""
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as home:
        # byte code is cached (in a private folder, not the tree) as an installed package has it
        env = {**os.environ, "WORKBENCH_HOME": home, "PYTHONPYCACHEPREFIX": str(Path(home) / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        replay_cmd = [sys.executable, "-m", "workbench.cli", "replay", str(path)]
        naive_cmd = [sys.executable, "-c", NAIVE, str(path)]
        _timed(replay_cmd, env)  # warm: byte code and the vocabulary cache
        rows = {"replay": [], "naive": []}
        for _ in range(repeats):
            rows["replay"].append(_timed(replay_cmd, env)[:2])
            rows["naive"].append(_timed(naive_cmd, env)[:2])
        startup = json.loads(_timed([sys.executable, "-c", STARTUP], env)[2])
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in rows.items()}
    return {"path": str(path), "repeats": repeats,
            "replay_wall_s": round(med["replay"][0], 3), "replay_cpu_s": round(med["replay"][1], 3),
            "naive_wall_s": round(med["naive"][0], 3), "naive_cpu_s": round(med["naive"][1], 3),
            "ratio_wall": round(med["naive"][0] / med["replay"][0], 2),
            "ratio_cpu": round(med["naive"][1] / med["replay"][1], 2),
            "startup": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in startup.items()},
            "load_1m": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    row = measure(args.path, args.repeats)
    print(json.dumps(row, indent=2))
    if args.json:
        args.json.write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
