"""What each compaction lost, where decisions are made (R-FID-2): the Compaction page, the
notebook and the batch output, on built transcripts and on the real Claude Code sessions."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from workbench.services.replay import BUDGET_REPLAY_NAME, budget_96k_config, replay_and_save
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "workbench" / "ui" / "app.py")
PAGE = "../pages/compaction.py"


def test_r_fid_2_compaction_page_shows_recall_and_lost_facts_linked_to_steps(tmp_path):
    """R-FID-2: the Compaction page lists each compaction's recall by kind and its lost facts,
    each with a link that opens the step that needed it (a built session whose agent summary
    dropped the test command it ran again later)."""
    session_id, replay_id = _built_store(tmp_path)
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    recall = next(d.value for d in at.dataframe if "kept of needed" in d.value.columns)
    assert list(recall["compaction"]) == ["agent #1 · step 4"]
    assert recall["commands"].iloc[0] == "0/1 (0%)" and recall["paths"].iloc[0] == "1/2 (50%)"
    assert any("needed 4 of the" in m.value for m in at.markdown)
    lost = next(d.value for d in at.dataframe if "needed at step" in d.value.columns)
    # R-FID-5: the never-recovered loss first; the command came back by running it again
    assert list(lost["fact"]) == ["tests/test_parse.py", "pytest tests/test_parse.py -q"]
    assert list(lost["recovered by"]) == ["never", "re-run"]
    assert lost["recovered at step"].iloc[1] == 6 and lost["recovery tokens"].iloc[1] > 0
    assert any("1 never recovered" in m.value for m in at.markdown)
    first = lost.iloc[0]
    assert first["needed at step"] == 5
    assert "step=5" in first["open"] and replay_id in first["open"] and session_id in first["open"]


def test_r_fid_2_compaction_page_on_a_replay_compaction():
    """R-FID-2: a replay's own compaction gets its row on the Compaction page."""
    with open_store() as store:
        session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        replay_and_save(store, session_id, name=BUDGET_REPLAY_NAME, config=budget_96k_config())
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    recall = next(d.value for d in at.dataframe if "kept of needed" in d.value.columns)
    assert next(iter(recall["compaction"])).startswith("replay #1 · step ")
    assert {"paths", "commands", "instructions"} <= set(recall.columns)
    assert int(recall["needed later"].iloc[0]) > 0


def test_r_fid_2_notebook_fidelity_and_lost_tables():
    """R-FID-2: ``replay.fidelity()`` has a row per compaction and kind plus an ``all`` row whose
    counts add up, typed also without rows; ``replay.lost()`` lists the lost facts with steps."""
    from workbench.notebook import replay, sample_path

    result = replay(sample_path("long_session"), budget_96k_config())
    table = result.fidelity()
    assert set(table["source"]) == {"replay"} and str(table["facts"].dtype) == "int64"
    whole = table[table["kind"] == "all"].iloc[0]
    kinds = table[(table["kind"] != "all") & (table["n"] == whole["n"])]
    assert whole["needed_later"] == kinds["needed_later"].sum() > 0
    assert whole["recall_needed_later"] == whole["needed_later_kept"] / whole["needed_later"]
    lost = result.lost()
    assert len(lost) == whole["needed_later"] - whole["needed_later_kept"]
    assert all(lost["needed_at_step"] >= lost["step"])
    quiet = replay(sample_path("unanswered"))
    assert quiet.fidelity().empty and str(quiet.fidelity()["recall_needed_later"].dtype) == "Float64"


def test_r_fid_2_batch_writes_a_fidelity_table_and_prints_the_mean_per_configuration(
        tmp_path, capsys):
    """R-FID-2: `workbench batch` with two configurations writes the ``fidelity`` table (a row per
    compaction and kind) and prints the mean recall per configuration and the agent's own."""
    from test_fidelity import SUMMARY, _session

    from workbench.cli import main
    from workbench.corpus.batch import read_table
    from workbench.importers.native import dump_session

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    dump_session(_session(SUMMARY), corpus / "built.jsonl")
    (corpus / "long.jsonl").write_bytes((ROOT / "sample_sessions" / "long_session.jsonl").read_bytes())
    tight = tmp_path / "tight.yaml"
    tight.write_text("compaction:\n  input_budget_tokens: 96000\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["batch", str(corpus), "--config", "default", "--config", str(tight),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    table = read_table(out, "fidelity")
    agent = table[(table["source"] == "recorded") & (table["kind"] == "commands")]
    assert set(agent["configuration"]) == {"default", "tight"}
    assert list(agent["needed_later"]) == [1, 1] and list(agent["needed_later_kept"]) == [0, 0]
    replayed = table[(table["source"] == "replay") & (table["kind"] == "all")]
    assert set(replayed["configuration"]) == {"tight"} and (replayed["needed_later"] > 0).all()
    assert "fidelity [default] agent's own: 1 compactions, mean recall of needed-later facts 50%" \
        in printed
    assert "fidelity [tight] replay: 1 compactions" in printed


def _built_store(tmp_path):
    """The built session (its agent summary drops a command needed at step 5) in the store with
    a default replay: (session id, replay id)."""
    from test_fidelity import SUMMARY, _session

    from workbench.importers.native import dump_session

    path = dump_session(_session(SUMMARY), tmp_path / "built.jsonl")
    with open_store() as store:
        session_id = store.import_file(path).session_id
        info, _ = replay_and_save(store, session_id, name="default")
    return session_id, info.id


def test_r_fid_2_why_panel_of_a_compaction_step_shows_what_it_lost(tmp_path):
    """R-FID-2: on the Step-through page, the step the agent compacted at has a Why part with its
    recall and lost facts (linked to the step that needed each); another step has none."""
    session_id, replay_id = _built_store(tmp_path)

    def at_step(step: int) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=90)
        at.query_params["session"] = session_id
        at.query_params["replay"] = replay_id
        at.query_params["step"] = str(step)
        at.run()
        return at.switch_page("../pages/step_through.py").run()

    at = at_step(4)
    assert not at.exception, at.exception
    assert [e.label for e in at.expander if e.label.startswith("Compaction — what it lost")] == [
        "Compaction — what it lost (agent #1 · step 4)"]
    lost = next(d.value for d in at.dataframe if "needed at step" in d.value.columns)
    assert list(lost["needed at step"]) == [5, 5] and "step=5" in lost["open"].iloc[0]
    other = at_step(2)
    assert not other.exception
    assert not [e for e in other.expander if e.label.startswith("Compaction — what it lost")]


def test_r_fid_2_templates_rerun_shows_the_loss_of_both_checkpoints(workbench_home, long_store):
    """R-FID-2: a Templates-page re-run of the compaction step shows what the original and the
    edited checkpoint lost side by side (with the offline summariser an edited template leaves
    the extractive checkpoint, and so its loss, unchanged)."""
    from store_helpers import copy_store

    copy_store(long_store, workbench_home)
    with open_store() as store:
        session_id = store.list_sessions()[0].id
        replay = store.replays.find(session_id, BUDGET_REPLAY_NAME)
    assert replay is not None
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.selectbox(key="wb_replay").select(replay.id).run()
    at.switch_page("../pages/templates.py").run()
    source = at.text_area(key="tpl_src_compaction").value
    at.text_area(key="tpl_src_compaction").input((source or "") + "\nKEEP EVERY PATH.\n").run()
    at.button(key="tpl_rerun_step").click().run()
    assert not at.exception, at.exception
    assert any(m.value == "##### What the checkpoint lost: original vs edited" for m in at.markdown)
    pair = next(d.value for d in at.dataframe if list(d.value.columns) == ["facts", "original",
                                                                           "edited"])
    assert list(pair["facts"])[:3] == ["all", "paths", "commands"]
    assert list(pair["original"]) == list(pair["edited"]) and pair["original"].iloc[0] != "—"
    # R-FID-6: the page says the offline summariser did not read the edited template
    assert any("Templates not compared" in w.value for w in at.warning)


def test_r_fid_2_side_by_side_names_what_an_edit_fixed():
    """R-FID-2: two checkpoints of one compaction (A drops the test command, B names it): the pair
    table shows the recall of each and the lost list says B kept what A lost."""
    from iris.fidelity import applied_loss_record
    from test_fidelity import SUMMARY, _session

    from workbench.views.fidelity import loss_side_by_side, lost_by_either

    session = _session(SUMMARY)
    a, b = (applied_loss_record(session, n=1, step=4, archived=range(9), first_kept=None,
                                checkpoint=text)
            for text in (SUMMARY, SUMMARY + " Ran pytest tests/test_parse.py -q."))
    pair = loss_side_by_side(a, b, labels=("A", "B")).set_index("facts")
    assert pair.loc["commands", "A"] == "0/1 (0%)" and pair.loc["commands", "B"] == "1/1 (100%)"
    lost = lost_by_either(a, b, labels=("A", "B"))
    row = lost[lost["kind"] == "commands"].iloc[0]
    assert row["fact"] == "pytest tests/test_parse.py -q" and row["needed at step"] == 5
    assert not row["A kept"] and row["B kept"]
    assert set(loss_side_by_side(a, None, labels=("A", "B"))["B"]) == {"—"}


def test_r_fid_2_configuration_compare_scores_each_side_and_the_agent(tmp_path):
    """R-FID-2: a Configuration comparison carries what each side's compactions lost and what the
    agent's own lost; the table names the run of each row."""
    from iris.prompts import PromptSnapshot

    from workbench.services.compare import compare_choices, compare_pair
    from workbench.services.presets import load_preset
    from workbench.views.fidelity import runs_recall_table

    session_id, _ = _built_store(tmp_path)
    with open_store() as store:
        long_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
        saved, _ = replay_and_save(store, long_id, name=BUDGET_REPLAY_NAME,
                                   config=budget_96k_config())
        options = {"editor": load_preset("default"), "templates": PromptSnapshot.defaults(),
                   "cache": {}, "progress": lambda f, label: None}
        long = compare_pair(store, long_id, f"replay:{saved.id}", "preset:default",
                            choices=compare_choices(store, long_id), **options)
        built = compare_pair(store, session_id, "preset:default", "preset:cost-first",
                             choices=compare_choices(store, session_id), **options)
    a, b = long.runs
    assert [r.step for r in a.fidelity] == [c.step for c in a.compactions] and a.fidelity
    assert b.fidelity == () and long.agent_losses == ()
    assert [r.source for r in built.agent_losses] == ["recorded"]
    table = runs_recall_table([(a.label, a.fidelity), (b.label, b.fidelity),
                               ("agent", built.agent_losses)])
    assert list(table["run"]) == [a.label, "agent"]
    assert table["compaction"].iloc[1] == "agent #1 · step 4"


def test_r_fid_2_html_report_has_what_compaction_lost(tmp_path):
    """R-FID-2: the HTML report lists each compaction's recall and the lost facts with the step
    that needed each (the built session's agent summary dropped the test command)."""
    from test_fidelity import SUMMARY, _session

    from workbench.report import build_report

    html = build_report(_session(SUMMARY))
    section = html.split("<h2>What compaction lost</h2>", 1)[1].split("<h2>", 1)[0]
    assert "agent #1 · step 4" in section
    assert "pytest tests/test_parse.py -q" in section and "needed at step" in section
    quiet = build_report(ROOT / "sample_sessions" / "unanswered.jsonl")
    assert "nothing was lost to compaction" in quiet


def test_r_fid_2_corpus_page_shows_the_mean_recall_per_configuration(tmp_path):
    """R-FID-2: the Corpus page of a batch with two configurations lists the mean recall of
    needed-later facts per configuration, the replay's compactions and the agent's own."""
    from test_fidelity import SUMMARY, _session

    from workbench.corpus.batch import run_batch
    from workbench.importers.native import dump_session

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    dump_session(_session(SUMMARY), corpus / "built.jsonl")
    (corpus / "long.jsonl").write_bytes((ROOT / "sample_sessions" / "long_session.jsonl").read_bytes())
    out = tmp_path / "out"
    run_batch(["default", budget_96k_config()], [corpus], out)
    at = AppTest.from_file(str(ROOT / "pages" / "corpus.py"), default_timeout=60).run()
    at.text_input(key="corpus_dir").input(str(out)).run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "compactions of" in d.value.columns)
    rows = {(r["configuration"], r["compactions of"]): r for r in table.to_dict("records")}
    assert rows["default", "agent (recorded)"]["mean recall, needed later"] == "50%"
    replayed = [r for (_, who), r in rows.items() if who == "replay"]
    assert replayed and all(r["compactions"] >= 1 for r in replayed)


def test_r_fid_2_a_dead_worker_still_writes_an_empty_fidelity_table(tmp_path):
    """R-FID-2: a batch worker that died is recorded like a failing session, with every table
    (the fidelity table too) written empty."""
    from concurrent.futures import Future

    from workbench.corpus.batch import _result_or_error, _write, read_table
    from workbench.corpus.tables import TABLES

    future: Future = Future()
    future.set_exception(MemoryError("out of memory"))
    tables = _result_or_error(future, str(tmp_path / "big.jsonl"), "default")
    assert set(tables) == set(TABLES)
    _write(tmp_path / "out", tables, set())
    assert read_table(tmp_path / "out", "fidelity").empty
    assert "worker failed: MemoryError" in read_table(tmp_path / "out", "sessions")["error"].iloc[0]


def test_r_fid_2_notebook_corpus_fidelity(tmp_path):
    """R-FID-2: ``wb.batch(...).fidelity_means()`` gives the mean recall per configuration and the
    agent's own, ``fidelity()`` the per-compaction rows."""
    from test_fidelity import SUMMARY, _session

    from workbench.importers.native import dump_session
    from workbench.notebook.corpus import batch

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    dump_session(_session(SUMMARY), corpus / "built.jsonl")
    result = batch(["default", "cost-first"], [corpus], tmp_path / "out")
    means = result.fidelity_means()
    assert list(means["configuration"]) == ["cost-first", "default"]
    assert set(means["source"]) == {"recorded"} and list(means["mean_recall_needed_later"]) == [0.5, 0.5]
    assert len(result.fidelity()) == 2 * 8  # two configurations × (seven kinds + all)
