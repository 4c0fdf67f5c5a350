"""Corpus output that every Parquet reader opens (pandas, Polars, DuckDB, pyarrow datasets), the
batch's exit code and failures on standard error, and what a missing extra says (R-UI-9, R-UI-8)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.corpus.batch import read_table, run_batch
from workbench.corpus.tables import SCHEMAS, TABLES

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    shutil.copy(SAMPLES / "bugfix.jsonl", root / "bugfix.jsonl")
    shutil.copy(SAMPLES / "unanswered.jsonl", root / "unanswered.jsonl")
    shutil.copy(SAMPLES / "long_session.jsonl", root / "long_session.jsonl")  # compacts: every table has rows
    (root / "broken.jsonl").write_text('{"type": "header"\n', encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def out(corpus, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("out")
    run_batch(["default", "cost-first"], [corpus], target)
    return target


def _sorted(frame, table: str):
    """A pandas frame in a fixed row order, without the timing column."""
    frame = frame.drop(columns=[c for c in ("seconds",) if c in frame.columns])
    keys = [c for c in ("configuration", "session", "source", "n", "step", "stage", "kind")
            if c in frame.columns]
    return frame.sort_values(keys).reset_index(drop=True)[[c for c in SCHEMAS[table].names if c != "seconds"]]


def _expected(out: Path, table: str):
    return _sorted(read_table(out, table), table)


def _same(frame, expected) -> None:
    assert list(frame.columns) == list(expected.columns)
    assert len(frame) == len(expected) > 0
    assert list(frame["configuration"]) == list(expected["configuration"])
    assert list(frame["session"]) == list(expected["session"])


@pytest.mark.parametrize("table", TABLES)
def test_r_ui_8_pandas_reads_each_table_folder(out, table):
    """``pandas.read_parquet("OUT/<table>")`` reads the folder (no partition column repeated from
    the path) with the same rows and the keys as strings."""
    import pandas as pd

    frame = pd.read_parquet(out / table)
    assert list(frame.columns) == SCHEMAS[table].names
    assert str(frame["configuration"].dtype) in ("object", "string", "str")
    _same(_sorted(frame, table), _expected(out, table))


@pytest.mark.parametrize("table", TABLES)
def test_r_ui_8_pyarrow_dataset_reads_each_table_folder(out, table):
    """``pyarrow.dataset.dataset("OUT/<table>")`` has exactly the table's schema."""
    import pyarrow.dataset as ds

    data = ds.dataset(out / table, format="parquet")
    assert data.schema.equals(SCHEMAS[table], check_metadata=False)
    _same(_sorted(data.to_table().to_pandas(), table), _expected(out, table))


@pytest.mark.parametrize("table", TABLES)
def test_r_ui_8_polars_reads_each_table_folder(out, table):
    """Polars reads the folder (and a glob of its files) with the table's columns."""
    pl = pytest.importorskip("polars")

    folder = pl.read_parquet(out / table)
    files = pl.read_parquet(str(out / table / "**" / "*.parquet"))
    assert folder.columns == SCHEMAS[table].names == files.columns
    assert folder.height == files.height
    assert folder.schema["configuration"] == pl.String
    _same(_sorted(folder.to_pandas(), table), _expected(out, table))


@pytest.mark.parametrize("table", TABLES)
def test_r_ui_8_duckdb_reads_each_table_with_its_own_defaults(out, table):
    """DuckDB's ``read_parquet`` with its default Hive detection reads the files: no duplicate
    column, the same rows."""
    import duckdb

    with duckdb.connect() as con:
        frame = con.execute(f"SELECT * FROM read_parquet('{out / table}/*/*/*.parquet')").df()
    assert list(frame.columns) == SCHEMAS[table].names
    _same(_sorted(frame, table), _expected(out, table))


def _cli(*args: str, hide: tuple[str, ...] = (), cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The real command line in a fresh interpreter, with ``hide`` modules made unimportable (as
    when an extra is not installed)."""
    code = ("import sys\n"
            f"for name in {list(hide)!r}: sys.modules[name] = None\n"
            "from workbench.cli import main\n"
            f"sys.exit(main({list(args)!r}))\n")
    env = {**os.environ, "WORKBENCH_HOME": str((cwd or Path.cwd()) / "home")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300, check=False)


@pytest.mark.slow
def test_r_ui_9_batch_exits_non_zero_and_lists_failures_on_stderr(corpus, tmp_path):
    """A batch with a session that cannot be read: the tables are written, the summary is on
    standard output, the failure on standard error, and the exit code is 1."""
    done = _cli("batch", str(corpus), "--out", str(tmp_path / "eval"), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "4 sessions × 1 configurations = 4 replays (serial), 1 failed" in done.stdout
    assert "failed" in done.stderr and "broken.jsonl [default]" in done.stderr
    assert "broken.jsonl" not in done.stdout
    assert (tmp_path / "eval" / "sessions" / "default").is_dir()
    good = _cli("batch", str(corpus / "bugfix.jsonl"), "--out", str(tmp_path / "ok"), cwd=tmp_path)
    assert good.returncode == 0 and good.stderr == ""


@pytest.mark.slow
def test_r_ui_9_missing_dask_is_one_line_and_leaves_no_output_folder(corpus, tmp_path):
    """``--dask`` without the [cluster] extra: one line naming the extra, no folder created."""
    done = _cli("batch", str(corpus), "--dask", "--out", str(tmp_path / "eval"),
                hide=("distributed",), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == "error: Dask is an optional extra: pip install 'context-workbench[cluster]'\n"
    assert not (tmp_path / "eval").exists()


@pytest.mark.slow
@pytest.mark.parametrize("missing", ["pyarrow", "duckdb"])
def test_r_ui_9_batch_without_the_corpus_extra_is_one_line(corpus, tmp_path, missing):
    """Without pyarrow or DuckDB (the [corpus] extra) ``batch`` says which extra to install, in
    one line, and creates nothing; the rest of the command line works without them."""
    done = _cli("batch", str(corpus), "--out", str(tmp_path / "eval"), hide=(missing,), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == ("error: corpus evaluation needs pyarrow and DuckDB, which are an optional "
                           "extra: pip install 'context-workbench[corpus]'\n")
    assert not (tmp_path / "eval").exists()
    inspect = _cli("inspect", str(SAMPLES / "bugfix.jsonl"), hide=(missing,), cwd=tmp_path)
    assert inspect.returncode == 0 and '"messages"' in inspect.stdout, inspect.stderr
    replay = _cli("replay", str(SAMPLES / "bugfix.jsonl"), "--json", str(tmp_path / "r.json"),
                  hide=(missing,), cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
