"""Corpus evaluation: every session file under every configuration, in parallel, to Parquet.

The unit of work is :func:`workbench.corpus.tables.replay_one`; this module only fans it out and writes
what comes back. Three executors run the same tasks and produce the same tables:

* ``serial`` (``jobs=1``): in this process;
* ``processes`` (``jobs>1``): a process pool whose workers are recycled after ``recycle`` tasks
  (so caches cannot grow without bound) and may be given an address-space limit in MB;
* ``dask``: a Dask ``distributed`` cluster: ``scheduler="tcp://host:8786"`` for a running one, or a
  ``LocalCluster`` of ``jobs`` single-threaded worker processes. Dask is the optional extra
  ``context-workbench[cluster]``.

Workers never open the SQLite store. The driver writes each result as it arrives into
``OUT/<table>/<configuration>/<session>/part-0.parquet`` (tables and columns in
:data:`workbench.corpus.tables.SCHEMAS`) plus ``OUT/manifest.json``; :func:`read_table` reads a table
back with DuckDB. Every file holds its ``configuration`` and ``session`` columns, and the folder
names are plain (no ``key=value``): a Hive-style folder name would make pandas, pyarrow and Polars
add the same column again from the path and fail on the duplicate (or guess its type), so each
reader opens ``OUT/<table>`` as it is.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iris.errors import IrisError
from iris.safe_files import write_file

#: The one line a missing ``[corpus]`` extra gives, as ``[app]`` and ``[cluster]`` do for theirs.
CORPUS_EXTRA = ("corpus evaluation needs pyarrow and DuckDB, which are an optional extra: "
                "pip install 'context-workbench[corpus]'")
try:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if importlib.util.find_spec("duckdb") is None:
        raise ImportError("duckdb")
except ImportError as exc:
    raise IrisError(CORPUS_EXTRA) from exc

from .tables import TABLES, replay_one, to_arrow

__all__ = ["CORPUS_EXTRA", "BatchOutcome", "expand_paths", "read_table", "run_batch"]
#: ``(sessions done, sessions in all, label)`` after each finished replay.
BatchProgress = Callable[[int, int, str], object]


@dataclass
class BatchOutcome:
    """What a batch did: where it wrote, how many tasks ran and which ones failed."""

    out: Path
    configurations: list[str]
    sessions: int
    tasks: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    executor: str = "serial"


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, and every session file below each directory (recursively, sorted; the
    same files ``workbench import DIR`` takes)."""
    from ..importers.files import session_files

    files: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        files += session_files(path) if path.is_dir() else [path]
    return files


def run_batch(configs: Sequence[Any], paths: Iterable[str | Path], out: str | Path, *,
              jobs: int = 1, dask: bool = False, scheduler: str | None = None, recycle: int = 20,
              worker_memory_mb: int | None = None, summariser: str | None = None,
              progress: BatchProgress | None = None) -> BatchOutcome:
    """Replay every file of ``paths`` under each of ``configs`` (compaction summaries by the
    summariser named ``summariser``: offline, the default, recorded or remote) and write the
    tables to ``out``."""
    from ..services.presets import resolve_config

    files = expand_paths(paths)
    labels = _labels(configs)
    resolved = [resolve_config(c) for c in configs]  # bad configuration: fail before any work
    tasks = [(str(f), cfg, label, summariser) for label, cfg in zip(labels, resolved) for f in files]
    executor = "dask" if (dask or scheduler) else "processes" if jobs > 1 else "serial"
    if executor == "dask":
        _dask_client()  # a missing extra fails before the output folder exists
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    summary = BatchOutcome(target, labels, len(files), executor=executor)
    runner = {"serial": _serial, "processes": _processes, "dask": _dask}[executor]
    written: set[tuple[str, str]] = set()
    for done, tables in enumerate(runner(tasks, jobs=jobs, scheduler=scheduler, recycle=recycle,
                                         worker_memory_mb=worker_memory_mb), start=1):
        _write(target, tables, written)
        row = tables["sessions"][0]
        if row["error"]:
            summary.failed.append({"configuration": row["configuration"], "path": row["path"],
                                   "error": row["error"]})
        if progress:
            progress(done, len(tasks), f"{row['configuration']} · {row['session']}")
    summary.tasks = len(tasks)
    write_file(target / "manifest.json", json.dumps({
        "configurations": labels, "sessions": [str(f) for f in files], "tasks": len(tasks),
        "executor": executor, "failed": summary.failed}, indent=2) + "\n", root=target)
    return summary


def _labels(configs: Sequence[Any]) -> list[str]:
    from ..services.presets import config_label

    labels = [config_label(c) for c in configs]
    if len(set(labels)) < len(labels):
        raise ValueError(f"two configurations share a name: {labels}; rename a file")
    return labels


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _folder(name: str) -> str:
    """A folder name for a key: safe characters only, and no leading ``.`` or ``_`` (Parquet
    readers skip such folders as hidden)."""
    safe = _UNSAFE.sub("_", name)
    return safe if safe[:1] not in ("", ".", "_") else f"x{safe}"


def _part_dir(root: Path, table: str, configuration: str, session: str) -> Path:
    return root / table / _folder(configuration) / _folder(session)


def _write(root: Path, tables: dict[str, list], written: set[tuple[str, str]]) -> None:
    row = tables["sessions"][0]
    session = row["session"]
    key = (row["configuration"], session)
    n = 1
    while key in written:  # the same session id in two files: keep both
        n += 1
        key = (row["configuration"], f"{session}-{n}")
    written.add(key)
    for name in TABLES:
        sink = pa.BufferOutputStream()
        pq.write_table(to_arrow(name, tables[name]), sink)
        # atomic, and never through a link planted in the output folder
        write_file(_part_dir(root, name, *key) / "part-0.parquet", sink.getvalue().to_pybytes(),
                   root=root)


# ------------------------------------------------------------------------------ executors


def _serial(tasks: list[tuple], **_: Any) -> Iterator[dict[str, list]]:
    for path, cfg, label, summariser in tasks:
        yield replay_one(path, cfg, label=label, summariser=summariser)


def _limit_memory(megabytes: int | None) -> None:
    """Worker initializer: cap the address space, so a runaway session fails alone."""
    if megabytes:
        import resource

        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _processes(tasks: list[tuple], *, jobs: int, recycle: int, worker_memory_mb: int | None,
               **_: Any) -> Iterator[dict[str, list]]:
    context = _pool_context()
    # Workers are recycled by a fresh pool for every ``jobs × recycle`` tasks: the executor's own
    # ``max_tasks_per_child`` hangs on Python 3.11 once its workers have exited (no replacement is
    # started; seen with 200 sessions, 2 jobs, recycle 20: the batch stopped after 40).
    round_size = max(1, jobs * recycle)
    for first in range(0, len(tasks), round_size):
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_limit_memory,
                                 initargs=(worker_memory_mb,)) as pool:
            futures = {pool.submit(replay_one, path, cfg, label=label, summariser=summariser):
                       (path, label) for path, cfg, label, summariser in tasks[first:first + round_size]}
            for future in as_completed(futures):
                yield _result_or_error(future, *futures[future])


def _pool_context() -> Any:
    """forkserver (workers start from a process that has the engine imported) unless its Unix
    socket, made in the temporary directory, would exceed the 108-byte limit: then spawn."""
    import multiprocessing
    import tempfile

    if len(os.fsencode(tempfile.gettempdir())) > 60:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["workbench.corpus.tables", "iris.replay", "workbench.pricing"])
    return context


def _result_or_error(future: Any, path: str, label: str) -> dict[str, list]:
    """A worker that died (memory limit, crash) is recorded like any failing session."""
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - BrokenProcessPool, MemoryError, a killed worker
        from .tables import SCHEMAS

        row: dict[str, object] = {c: None for c in SCHEMAS["sessions"].names}
        row.update(configuration=label, session=Path(path).name, path=path,
                   error=f"worker failed: {type(exc).__name__}: {exc}")
        return {"sessions": [row], **{name: [] for name in TABLES if name != "sessions"}}


def _dask(tasks: list[tuple], *, jobs: int, scheduler: str | None, worker_memory_mb: int | None,
          **_: Any) -> Iterator[dict[str, list]]:
    client_class = _dask_client()
    from distributed import LocalCluster
    from distributed import as_completed as dask_completed

    cluster = None
    if scheduler is None:
        memory = f"{worker_memory_mb}MB" if worker_memory_mb else "auto"
        # dashboard_address=None turns the dashboard off (distributed's documented value; its
        # annotation says str only).
        cluster = LocalCluster(n_workers=max(jobs, 1), threads_per_worker=1, processes=True,
                               dashboard_address=None,  # pyright: ignore[reportArgumentType]
                               memory_limit=memory, host="127.0.0.1", worker_dashboard_address=None)
    client = client_class(cluster if cluster is not None else scheduler)
    try:
        futures = {client.submit(replay_one, path, cfg, label=label, summariser=summariser,
                                 pure=False): (path, label)
                   for path, cfg, label, summariser in tasks}
        for future in dask_completed(futures):
            yield _result_or_error(future, *futures[future])
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _dask_client() -> Any:
    """Dask's ``Client`` class, or the one-line error of the missing ``[cluster]`` extra."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise IrisError("Dask is an optional extra: pip install 'context-workbench[cluster]'") from exc
    return Client


# ------------------------------------------------------------------------------ reading


def read_table(out: str | Path, table: str, *, where: str = "") -> Any:
    """Table ``table`` of a batch output directory as a pandas DataFrame, read with DuckDB
    (``where`` is an optional SQL condition, e.g. ``"configuration = 'cost-first'"``)."""
    import duckdb

    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; choose one of {', '.join(TABLES)}")
    files = sorted(str(p) for p in (Path(out) / table).glob("*/*/part-0.parquet"))
    if not files:
        return to_arrow(table, []).to_pandas()
    condition = f"WHERE {where}" if where else ""
    with duckdb.connect() as con:
        frame = con.execute(
            f"SELECT * FROM read_parquet(?, hive_partitioning = false, union_by_name = true) "
            f"{condition} ORDER BY ALL", [files]).df()
    return frame


def default_jobs() -> int:
    """Worker count when ``--jobs`` is not given: the machine's cores."""
    return os.cpu_count() or 1
