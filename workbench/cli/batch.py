"""``workbench batch``: replay a corpus of sessions under one or more configurations to Parquet.

    workbench batch --config default --config cost-first ~/transcripts --out eval/ --jobs 4
    workbench batch --config cost-first ~/transcripts --out eval/ --dask --jobs 8
    workbench batch --config cost-first /shared/transcripts --out eval/ --scheduler tcp://head:8786

A failing session is recorded with its error and the batch goes on; each failure is printed on
standard error and the exit code is 1 when any session failed (as for a bad command line or
configuration), 0 when all replayed. The tables are read back with DuckDB
(``workbench.corpus.batch.read_table``), pandas, Polars or pyarrow (docs/corpus.md). Needs the
``[corpus]`` extra (pyarrow, DuckDB).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..services.summarisers import CLI_SUMMARISERS
from ..views.terminal import progress_bar

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("batch", help="replay many sessions under one or more configurations to Parquet")
    p.add_argument("paths", nargs="+", metavar="PATH_OR_DIR",
                   help="session files, or directories searched recursively")
    p.add_argument("--config", action="append", metavar="FILE_OR_PRESET",
                   help="a configuration YAML or a preset name; repeat to compare (default: default)")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory for the Parquet tables")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="parallel workers (default 1)")
    p.add_argument("--dask", action="store_true",
                   help="run on a Dask LocalCluster of --jobs workers (extra: [cluster])")
    p.add_argument("--scheduler", metavar="URL", help="run on a running Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--recycle", type=int, default=20, metavar="N",
                   help="replace a pool worker after N sessions (default 20)")
    p.add_argument("--worker-memory", type=int, metavar="MB", help="memory limit per worker")
    p.add_argument("--summariser", "--summarizer", choices=CLI_SUMMARISERS, default="offline",
                   help="who writes compaction summaries, as for `workbench replay`: offline (the "
                        "default), recorded (each session's own) or remote")
    p.set_defaults(handler=_batch)


def _batch(args: argparse.Namespace) -> int:
    from ..corpus.batch import run_batch

    configs = args.config or ["default"]
    with progress_bar("batch") as report:
        summary = run_batch(configs, args.paths, args.out, jobs=args.jobs, dask=args.dask,
                            scheduler=args.scheduler, recycle=args.recycle,
                            worker_memory_mb=args.worker_memory, summariser=args.summariser,
                            progress=lambda done, total, label: report(done / total, label))
    print(f"batch: {summary.sessions} sessions × {len(summary.configurations)} configurations "
          f"= {summary.tasks} replays ({summary.executor}), {len(summary.failed)} failed -> {summary.out}")
    for line in _fidelity_lines(summary.out):
        print(line)
    for failure in summary.failed:
        print(f"  failed {failure['path']} [{failure['configuration']}]: {failure['error']}",
              file=sys.stderr)
    return 1 if summary.failed else 0


def _fidelity_lines(out: str | Path) -> list[str]:
    """What compaction lost, per configuration: the mean recall of needed-later facts over its
    compactions and the agent's own (docs/fidelity.md; per compaction in the ``fidelity`` table)."""
    from ..analysis.fidelity import recall_means
    from ..corpus.batch import read_table

    def pct(value: float | None) -> str:
        return "—" if value is None else f"{value:.0%}"

    lines = []
    for m in recall_means(read_table(out, "fidelity")):
        who = "agent's own" if m["source"] == "recorded" else "replay"
        lines.append(f"  fidelity [{m['configuration']}] {who}: {m['compactions']} compactions, "
                     f"mean recall of needed-later facts {pct(m['mean_recall_needed_later'])}, "
                     f"paths and commands {pct(m['recall_paths_commands'])}")
    return lines
