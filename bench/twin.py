"""The corpus check as a bench case (``make bench`` case ``twin``): ``workbench twin-check`` on
``../shared/corpus`` (R-TWIN-3, R-TWIN-8, R-TWIN-9), its table of recorded compactions and files,
the shares against the issue's targets, and how long the check took. Skipped (written as such)
when the corpus is absent.

Run as ``python bench/twin.py twin OUT.json '{"corpus": PATH}'``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The development corpus (its SOURCE.txt says what it holds).
CORPUS = HERE.parents[1] / "shared" / "corpus"


def measure(corpus: Path) -> dict:
    from workbench.corpus.twin_check import twin_check

    if not corpus.is_dir():
        return {"skipped": f"{corpus} absent"}
    wall, cpu = time.perf_counter(), time.process_time()
    report = twin_check([corpus])
    return {"corpus": str(corpus), "wall": time.perf_counter() - wall,
            "cpu": time.process_time() - cpu, **report.model_dump(mode="json")}


def main() -> int:
    name, out, raw = sys.argv[1], Path(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "{}"
    options = json.loads(raw)
    if name != "twin":
        raise SystemExit(f"unknown case {name!r}")
    result = measure(Path(options.get("corpus") or CORPUS))
    out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
