"""Corpus evaluation: ``replay_one`` as the unit of work, the same Parquet tables from the serial
runner, the process pool and a real Dask ``LocalCluster``, failing sessions recorded with their
error, and the ``workbench batch`` command."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.corpus.batch import expand_paths, read_table, run_batch
from workbench.corpus.tables import SCHEMAS, TABLES, replay_one, to_arrow

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Two samples in nested folders, one unreadable file and one file of another kind."""
    root = tmp_path_factory.mktemp("corpus")
    (root / "team-a").mkdir()
    (root / "team-b" / "deep").mkdir(parents=True)
    shutil.copy(SAMPLES / "bugfix.jsonl", root / "team-a" / "bugfix.jsonl")
    shutil.copy(SAMPLES / "unanswered.jsonl", root / "team-b" / "deep" / "unanswered.jsonl")
    (root / "team-b" / "broken.jsonl").write_text('{"type": "header"\n', encoding="utf-8")
    (root / "team-a" / "notes.txt").write_text("not a session", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def serial(corpus, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("serial")
    run_batch(["default", "cost-first"], [corpus], out)
    return out


def _frame(out: Path, table: str):
    frame = read_table(out, table)
    return frame.drop(columns=["seconds"]) if table == "sessions" else frame


def test_replay_one_is_picklable_and_returns_the_four_tables():
    assert pickle.loads(pickle.dumps(replay_one)) is replay_one
    tables = replay_one(str(SAMPLES / "long_session.jsonl"), "cost-first")
    assert set(tables) == set(TABLES)
    row = tables["sessions"][0]
    assert row["error"] is None and row["steps"] == len(tables["steps"]) > 0
    assert row["compactions"] == len(row["replay_compaction_steps"]) > 0
    assert row["tokens_saved"] == row["tokens_recorded"] - sum(
        s["whole_request_tokens"] if s["whole_request_tokens"] is not None else s["final_tokens"]
        for s in tables["steps"] if s["recorded_request_tokens"] is not None)
    assert sum(d["count"] for d in tables["decisions"] if d["kind"] == "compaction-applied") == row["compactions"]
    for name, rows in tables.items():
        assert to_arrow(name, rows).schema == SCHEMAS[name]


def test_directories_are_searched_recursively_for_session_files(corpus):
    names = [p.name for p in expand_paths([corpus])]
    assert names == ["bugfix.jsonl", "broken.jsonl", "unanswered.jsonl"]


def test_a_failing_session_is_recorded_and_the_batch_goes_on(serial):
    sessions = _frame(serial, "sessions")
    assert len(sessions) == 6  # 3 files x 2 configurations
    failed = sessions[sessions["error"].notna()]
    assert sorted(failed["configuration"]) == ["cost-first", "default"]
    assert all("broken.jsonl" in e for e in failed["error"])
    assert set(sessions[sessions["error"].isna()]["session"]) == {"bugfix-tally-march", "unanswered-coverage"}
    manifest = json.loads((serial / "manifest.json").read_text())
    assert manifest["tasks"] == 6 and len(manifest["failed"]) == 2


def test_tables_are_partitioned_by_configuration_and_session(serial):
    parts = sorted(p.relative_to(serial).as_posix() for p in (serial / "steps").rglob("*.parquet"))
    assert "steps/cost-first/bugfix-tally-march/part-0.parquet" in parts
    assert len(parts) == 6
    cost_first = read_table(serial, "steps", where="configuration = 'cost-first'")
    assert set(cost_first["configuration"]) == {"cost-first"} and len(cost_first) > 0


def test_process_pool_writes_the_same_tables(corpus, serial, tmp_path):
    summary = run_batch(["default", "cost-first"], [corpus], tmp_path, jobs=2, recycle=1)
    assert summary.executor == "processes" and summary.tasks == 6
    for table in TABLES:
        assert _frame(tmp_path, table).equals(_frame(serial, table)), table


def test_dask_local_cluster_writes_the_same_tables(corpus, serial, tmp_path):
    pytest.importorskip("distributed")
    summary = run_batch(["default", "cost-first"], [corpus], tmp_path, jobs=2, dask=True)
    assert summary.executor == "dask"
    for table in TABLES:
        assert _frame(tmp_path, table).equals(_frame(serial, table)), table


def test_workbench_batch_command(corpus, tmp_path, capsys):
    assert main(["batch", "--config", "cost-first", str(corpus / "team-a"), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 sessions × 1 configurations = 1 replays (serial), 0 failed" in out
    assert list(read_table(tmp_path, "sessions")["session"]) == ["bugfix-tally-march"]
    assert main(["batch", "--config", "no-such-preset", str(corpus), "--out", str(tmp_path)]) == 1
    assert "no-such-preset" in capsys.readouterr().err


def test_notebook_batch_and_load_batch(corpus, serial, tmp_path):
    import workbench as wb

    result = wb.batch(["default", "cost-first"], [corpus / "team-a"], tmp_path)
    assert list(result.sessions()["session"]) == ["bugfix-tally-march"] * 2
    totals = result.totals()
    assert list(totals["configuration"]) == ["cost-first", "default"]
    assert totals["tokens_sent"].dtype == "int64"
    assert "2 configurations" in repr(result) and "<table" in result._repr_html_()
    loaded = wb.load_batch(serial)
    figure = loaded.figure().to_dict()
    assert figure["layout"]["title"]["text"].startswith("Tokens saved")
    assert len(figure["data"]) == 2  # one panel per configuration
    with pytest.raises(FileNotFoundError, match="not a batch output directory"):
        wb.load_batch(tmp_path / "nothing-here")


def test_corpus_views_keep_types_when_empty(serial):
    from workbench.views.corpus import corpus_totals, largest_differences

    sessions = read_table(serial, "sessions")
    empty = sessions.iloc[:0]
    assert corpus_totals(empty)["tokens_sent"].dtype == "int64"
    assert largest_differences(empty, "default", "cost-first")["tokens_sent_a"].dtype == "int64"
    diff = largest_differences(sessions, "default", "cost-first")
    assert set(diff["session"]) == {"bugfix-tally-march", "unanswered-coverage"}
    assert list(diff["tokens_sent_change"].abs()) == sorted(diff["tokens_sent_change"].abs(), reverse=True)
    assert diff["link"].iloc[0].startswith("step-through?session=")


def test_corpus_page_loads_a_batch(serial):
    from streamlit.testing.v1 import AppTest

    page = Path(__file__).resolve().parents[2] / "pages" / "corpus.py"
    at = AppTest.from_file(str(page), default_timeout=60).run()
    assert "No batch loaded" in at.info[0].value
    at.text_input(key="corpus_dir").input(str(serial)).run()
    assert not at.exception
    totals = at.dataframe[0].value
    assert list(totals["configuration"]) == ["cost-first", "default"]
    assert at.get("plotly_chart")
    differences = at.dataframe[-1].value
    assert set(differences["session"]) == {"bugfix-tally-march", "unanswered-coverage"}
    assert "could not be replayed" in at.expander[0].label
    at.text_input(key="corpus_dir").input(str(serial / "missing")).run()
    assert "holds no batch tables" in at.warning[0].value
