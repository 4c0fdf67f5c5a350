"""Figures outside the replay loop (``make bench`` case ``outside``), each against a same-run
baseline:

* store size: a real transcript imported and given the default replays the app makes
  (``workbench replay --defaults``), the store file (after a WAL checkpoint) against the
  transcript's bytes (uncompressed), with the bytes of each table and its indexes;
* native import: the native JSONL of the synthetic session (``responses`` responses),
  ``load_native`` and ``Store.import_file`` against ``json.loads`` of every line (CPU, medians).

Run as ``python bench/outside.py outside OUT.json '{"real": [PATH, ...], "responses": 2000}'``.
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def store_with_defaults(transcript: str, home: Path) -> dict:
    """Bytes of a store holding ``transcript`` and its default replays, by table."""
    env = {**os.environ, "WORKBENCH_HOME": str(home)}
    cli = [sys.executable, "-m", "workbench.cli"]
    subprocess.run([*cli, "import", "--quiet", transcript], env=env, check=True, cwd=HERE.parent)
    subprocess.run([*cli, "replay", "--defaults"], env=env, check=True, cwd=HERE.parent, capture_output=True)
    db = home / "workbench.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        owner = dict(conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')"))
        tables: collections.Counter[str] = collections.Counter()
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            tables[owner.get(name, name)] += size
        replays = conn.execute("SELECT count(*), sum(step_count) FROM replays").fetchone()
    raw = Path(transcript).read_bytes()
    raw = gzip.decompress(raw) if transcript.endswith(".gz") else raw
    return {"path": Path(transcript).name, "transcript_bytes": len(raw), "store_bytes": db.stat().st_size,
            "replays": replays[0], "steps": replays[1], "tables": dict(tables.most_common())}


def native_import(responses: int, tmp: Path, repeats: int = 5) -> dict:
    from synth import synth_session

    from workbench.importers.native import dump_session, load_native
    from workbench.storage.store import Store

    path = dump_session(synth_session(responses), tmp / "native.jsonl")

    def cpu(action) -> float:
        start = time.process_time()
        action()
        return time.process_time() - start

    def baseline() -> None:
        with path.open("rb") as fh:
            for line in fh:
                json.loads(line)
    runs: dict[str, list[float]] = {"json": [], "load": [], "store": []}
    for k in range(repeats):  # interleaved, so load on the machine falls on all three alike
        runs["json"].append(cpu(baseline))
        runs["load"].append(cpu(lambda: load_native(path)))
        with Store(tmp / f"store-{k}.db") as store:
            runs["store"].append(cpu(lambda store=store: store.import_file(path)))
    return {"file_bytes": path.stat().st_size, "responses": responses,
            **{k: statistics.median(v) for k, v in runs.items()}}


def case_outside(real: list[str], responses: int = 2000) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-outside-") as tmp_name:
        tmp = Path(tmp_name)
        stores = [store_with_defaults(p, tmp / f"home-{i}") for i, p in enumerate(real)]
        return {"stores": stores, "native": native_import(responses, tmp)}


if __name__ == "__main__":
    name, out = sys.argv[1], Path(sys.argv[2])
    if name != "outside":
        raise SystemExit(f"unknown case {name!r}")
    args = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    out.write_text(json.dumps(case_outside(**args), indent=1), encoding="utf-8")
