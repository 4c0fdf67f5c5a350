"""``import_process``: ``workbench import FILE`` as a whole process against the floor of an import
(``python bench/floor_import.py FILE``: start Python, parse every line), both new processes,
interleaved; CPU (``wait4`` rusage) and peak RSS of each child, median of the pairs' ratios.

Each import runs into its own store folder holding an empty, already created store (the schema is
made once per store, not per import; one import into a store that does not exist yet is measured
apart as ``first_store``). Then one ``workbench import`` under cProfile.

    python bench/import_cases.py import_process OUT.json '{"paths": {...}, "repeats": 5}'
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from floor_cases import WORKBENCH, _env, _missing, _stats, child
from profiled import profile_module

FLOOR_IMPORT = [sys.executable, str(HERE / "floor_import.py")]


def _empty_store(tmp: Path) -> Path:
    """A store folder whose store was created (and migrated) by ``workbench sessions``."""
    home = tmp / "empty-home"
    subprocess.run([*WORKBENCH, "sessions"], env=_env(WORKBENCH_HOME=str(home)), cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    return home


def import_process_one(path: Path, repeats: int, tmp: Path) -> dict[str, Any]:
    if (skip := _missing(path)) is not None:
        return skip
    empty = _empty_store(tmp)
    runs: dict[str, list[dict[str, float]]] = {"import": [], "floor": []}
    for i in range(repeats + 1):  # the first round warms byte code
        home = tmp / f"home-{path.name}-{i}"
        shutil.copytree(empty, home)
        floor = child([*FLOOR_IMPORT, str(path)], _env())
        ours = child([*WORKBENCH, "import", str(path)], _env(WORKBENCH_HOME=str(home)))
        if i:
            runs["floor"].append(floor)
            runs["import"].append(ours)
    first = child([*WORKBENCH, "import", str(path)], _env(WORKBENCH_HOME=str(tmp / f"new-{path.name}")))
    home = tmp / f"home-{path.name}-profile"
    shutil.copytree(empty, home)
    profile = profile_module("workbench.cli", ["import", str(path)], _env(WORKBENCH_HOME=str(home)),
                             tmp / "import.prof", ROOT)
    ratios = [o["cpu"] / f["cpu"] for o, f in zip(runs["import"], runs["floor"])]
    return {"path": path.name, **{k: _stats(v) for k, v in runs.items()}, "first_store": first,
            "cpu_ratio_runs": ratios, "cpu_ratio": statistics.median(ratios), "profile": profile}


def case_import_process(paths: dict[str, str], repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        return {label: import_process_one(Path(p), repeats, Path(tmp)) for label, p in paths.items()}


def main(argv: list[str]) -> int:
    case, out = argv[0], Path(argv[1])
    opts = json.loads(argv[2]) if len(argv) > 2 else {}
    if case != "import_process":
        raise SystemExit(f"unknown case {case!r}")
    data = case_import_process(opts["paths"], opts.get("repeats", 5))
    out.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
