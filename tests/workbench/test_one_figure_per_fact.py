"""One figure per fact (R-TWIN-5, R-REAL-1, R-REAL-2): one compaction of one replay, and that
replay's estimate error and calibration ratio, read from every surface a user compares: the
service and view functions behind Step-through (commit, stage table, header), Usage (the
real-vs-replay answer and the metrics), Compaction (the applied table), Templates (the single-step
re-run table) and Configuration (Compare's answer and compactions table), the HTML report, the
CLI's ``--summary-json``, the notebook's DataFrames and the batch (Parquet) tables. Every surface
must state the same numbers: the whole request as sent before → after the commit, and the same
median, p90 and count of scored responses.

Checked on the long sample at a 96,000 budget (always) and on the real Claude Code session
8463c716 at a 96,000 budget, read from its ``.gz`` (when ../shared is present).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from iris.preparation.records import CompactionApplied
from iris.prompts import PromptSnapshot

from workbench.analysis.figures import estimate_error
from workbench.cli import main
from workbench.corpus.tables import replay_one
from workbench.notebook import replay as notebook_replay
from workbench.report import render_report
from workbench.services.compaction import open_compaction
from workbench.services.compare import choice_run
from workbench.services.replay import load_configuration, replay_session, save_replay_result
from workbench.services.rerun import original_step
from workbench.services.step_through import open_step
from workbench.services.usage import open_usage
from workbench.storage.store import Store
from workbench.views.compaction import COMPACTION_KINDS
from workbench.views.compaction import compactions_table as compaction_page_table
from workbench.views.compare import answer_runs
from workbench.views.compare import compactions_table as compare_table
from workbench.views.recorded import compaction_answer
from workbench.views.step_page import header_text
from workbench.views.step_through import describe, stage_table
from workbench.views.templates import rerun_table
from workbench.views.usage import usage_metrics

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "sample_sessions" / "long_session.jsonl"
REAL = ROOT.parent / "shared" / "real-sessions" / "claude_code"
PAIR = re.compile(r"([\d,]+) → ([\d,]+)")


def _pairs(text: str) -> list[tuple[int, int]]:
    return [(int(a.replace(",", "")), int(b.replace(",", ""))) for a, b in PAIR.findall(text)]


def _store_surfaces(store: Store, path: Path, config: Path) -> tuple[dict[str, Any], int]:
    """The compaction figures of the pages' services and views, keyed by surface, and the step
    of the replay's first applied compaction."""
    session_id = store.import_file(path).session_id
    result, bundle = replay_session(store.session(session_id),
                                    config=load_configuration(str(config)))
    replay_id = save_replay_result(store, bundle, session_id=session_id, name="probe").id
    step = next(p.step_index for p in result.preparations if p.compaction_applied)
    out: dict[str, Any] = {}
    # `workbench replays` lists the last step's request on the same basis as its header
    listed = next(i for i in store.replays.list(session_id) if i.id == replay_id)
    assert listed.final_tokens == result.preparations[-1].whole_request_tokens

    opened = open_step(store, session_id, replay_id, step)
    commit = next(d for s in opened.prep.stages for d in s.decisions
                  if isinstance(d, CompactionApplied))
    out["step-through commit"] = _pairs(describe(commit))[0]
    row = stage_table(opened.prep).set_index("stage").loc["compaction"]
    out["step-through stage table"] = (int(row["before_tokens"]), int(row["after_tokens"]))
    header = header_text(opened.prep, len(result.preparations), None)
    out["step-through header (after)"] = int(re.findall(r"\[([\d,]+)\]", header.cells[0])[0]
                                             .replace(",", ""))
    usage = open_usage(store, session_id, replay_id)
    answer = compaction_answer(usage.runs, usage.marks).iloc[0]["tokens before → after"]
    out["usage answer"] = _pairs(answer)[0]
    compaction = open_compaction(store, session_id, replay_id, COMPACTION_KINDS)
    table = compaction_page_table(compaction.decisions, compaction.steps)
    first = table.iloc[0]
    out["compaction table"] = (int(first["tokens_before"]), int(first["tokens_after"]))
    outcome = original_step(store, replay_id, step)
    out["templates re-run"] = (outcome.tokens_before, outcome.tokens_after)
    rows = rerun_table(type("C", (), {"original": outcome, "edited": outcome})()).set_index("")
    out["templates re-run table"] = (
        int(rows.loc["request before (tokens, whole request as sent)", "original"].replace(",", "")),
        int(rows.loc["request after (tokens, whole request as sent)", "original"].replace(",", "")))
    run = choice_run(store, session_id, f"replay:{replay_id}", "probe", editor=None,
                         templates=PromptSnapshot.defaults(), cache={},
                         progress=lambda *_: None)
    compared = answer_runs([run])[0]["compactions"][0]
    out["compare answer"] = (compared["tokens_before"], compared["tokens_after"])
    cuts = compare_table([run]).iloc[0]
    out["compare compactions table"] = (int(cuts["tokens_before"]), int(cuts["tokens_after"]))
    out["usage metrics"] = usage_metrics(usage.steps, usage.marks, usage.replay.facts.calibration)
    return out, step


def _assert_one_figure_per_fact(tmp_path: Path, path: Path, budget: int) -> dict[str, Any]:
    config = tmp_path / "budget.yaml"
    config.write_text(f"compaction: {{input_budget_tokens: {budget}}}\n", encoding="utf-8")
    with Store(tmp_path / "home" / "workbench.db") as store:
        pages, step = _store_surfaces(store, path, config)
    metrics = pages.pop("usage metrics")

    summary_path = tmp_path / "summary.json"
    assert main(["replay", str(path), "--config", str(config), "--summary-json",
                 str(summary_path)]) == 0
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    cli = next(c for c in summary["compactions"] if c["step"] == step)
    notebook = notebook_replay(path, str(config))
    frame = notebook.compactions().set_index("step")
    batch = replay_one(path, str(config))
    batch_row = next(c for c in batch["compactions"] if c["source"] == "replay" and c["step"] == step)
    html = render_report(notebook)
    answer = html[html.index("Where the replay and the agent compacted"):html.index("Usage: local")]

    figure = (cli["tokens_before"], cli["tokens_after"])
    surfaces = {**pages, "cli summary": figure,
                "notebook compactions": (int(frame.loc[step, "tokens_before"]),
                                         int(frame.loc[step, "tokens_after"])),
                "batch compactions": (batch_row["tokens_before"], batch_row["tokens_after"]),
                "report answer": _pairs(answer)[0]}
    after = surfaces.pop("step-through header (after)")
    assert {name: value for name, value in surfaces.items() if value != figure} == {}
    assert after == figure[1]
    assert figure[0] > figure[1]
    # the labelled detail (untrimmed durable history) is the same wherever it is shown
    assert (cli["history_tokens_before"], cli["history_tokens_after"]) == (
        int(frame.loc[step, "history_tokens_before"]), int(frame.loc[step, "history_tokens_after"]))

    error = summary["estimate_error"]
    assert error["responses"] > 0
    assert {k: getattr(notebook.estimate_error(), k) for k in ("median_abs_pct", "p90_abs_pct",
                                                               "responses")} \
        == {k: error[k] for k in ("median_abs_pct", "p90_abs_pct", "responses")}
    sessions = batch["sessions"][0]
    assert (sessions["estimate_error_median_pct"], sessions["estimate_error_p90_pct"],
            sessions["estimate_error_responses"]) == (error["median_abs_pct"], error["p90_abs_pct"],
                                                      error["responses"])
    assert metrics[0].value == f"{error['median_abs_pct']:.2f}%"
    assert metrics[1].value == f"{error['p90_abs_pct']:.2f}%"
    assert f"over {error['responses']} responses" in (metrics[0].help or "")
    report_error = re.sub(r"<[^>]+>", " ", html[html.index("Estimate error"):])
    assert re.search(rf"\b{error['median_abs_pct']}\b.*\b{error['p90_abs_pct']}\b.*"
                     rf"\b{error['responses']}\b", report_error, re.DOTALL)
    ratio = summary["calibration_ratio"]
    assert notebook.calibration_ratio() == sessions["calibration_ratio"] == ratio
    assert metrics[3].value == f"{ratio:.3f}"
    assert f"{ratio}" in report_error
    return {"figure": figure, "error": error, "ratio": ratio, "step": step}


def test_r_twin_5_every_surface_states_the_same_compaction_error_and_calibration(tmp_path):
    """R-TWIN-5/R-REAL-1/R-REAL-2: the long sample's first compaction at a 96,000 budget."""
    _assert_one_figure_per_fact(tmp_path, LONG, 96_000)


def test_r_twin_5_real_claude_code_session_states_one_figure_per_fact(tmp_path):
    """R-TWIN-5/R-REAL-1/R-REAL-2: the real session 8463c716 (read from its .gz) at a 96,000
    budget; its estimate error leaves out step 0 and the first step after the agent's recorded
    compaction, where the estimate lacks the overhead being measured."""
    found = sorted(REAL.glob("8463c716-*.jsonl.gz")) if REAL.is_dir() else []
    if not found:
        pytest.skip("../shared/real-sessions is absent")
    facts = _assert_one_figure_per_fact(tmp_path, found[0], 96_000)
    assert facts["error"]["median_abs_pct"] < 1 and facts["error"]["p90_abs_pct"] < 5


def test_r_real_2_estimate_error_counts_only_comparable_responses():
    """R-REAL-2: step 0 (nothing calibrated yet), overhead-measuring and recorded-compaction
    steps and responses without trusted usage are not scored; median and p90 by one rule."""
    class Step:
        def __init__(self, i: int, provider: int | None, whole: int | None, kind: str = "trusted",
                     measured: int | None = 0) -> None:
            self.step_index, self.provider_prompt_tokens = i, provider
            self.recorded_request_whole, self.provider_usage_kind = whole, kind
            self.overhead_measured_at = None if i == 0 else measured

    steps = [Step(0, 1000, 10), Step(1, 1000, 1010), Step(2, 1000, 980), Step(3, 1000, None),
             Step(4, 1000, 1500, "estimated"), Step(5, 1000, 700), Step(6, 1000, 1030)]
    error = estimate_error(steps, recorded_steps=[5])
    assert error.responses == 3  # steps 1, 2, 6
    assert error.median_abs_pct == 2.0 and error.p90_abs_pct == 3.0
    assert estimate_error(steps[:1]).median_abs_pct is None


def test_r_twin_5_replays_saved_before_the_detail_read_the_same_figures(tmp_path):
    """R-TWIN-5: a replay saved when its facts kept the untrimmed durable history under
    ``tokens_*`` (no ``history_tokens_*``) still states the request as sent, read from its
    commit decisions."""
    from workbench.services.replay import open_saved
    from workbench.services.truth import replay_compactions

    config = tmp_path / "budget.yaml"
    config.write_text("compaction: {input_budget_tokens: 96000}\n", encoding="utf-8")
    with Store(tmp_path / "workbench.db") as store:
        session_id = store.import_file(LONG).session_id
        _, bundle = replay_session(store.session(session_id),
                                   config=load_configuration(str(config)))
        saved = open_saved(store, save_replay_result(store, bundle, session_id=session_id,
                                                     name="probe").id)
        now = replay_compactions(saved)
        assert now and all(c["history_tokens_before"] is not None for c in now)
        older = saved.info.facts.model_copy(update={"compactions": tuple(
            c.model_copy(update={"tokens_before": c.history_tokens_before,
                                 "tokens_after": c.history_tokens_after,
                                 "history_tokens_before": None, "history_tokens_after": None})
            for c in saved.info.facts.compactions)})
        object.__setattr__(saved, "info", saved.info.model_copy(update={"facts": older}))
        assert saved.facts.compactions[0].history_tokens_before is None
        assert replay_compactions(saved) == now
