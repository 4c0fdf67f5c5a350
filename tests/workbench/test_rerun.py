"""Template re-runs (R-UI-4): the variables come from the engine's own rendering at the step, a
step re-runs from the same history with only the template changed, the whole replay re-runs and
saves with its snapshot, and a real OpenAI-compatible endpoint (a local HTTP server) writes a new
summary that the comparison shows, including a failed success condition (R-CMP-8)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from iris.compaction import REQUIRED_SECTIONS, ExtractiveSummariser, OpenAICompatibleSummariser
from iris.errors import SummariserError
from iris.prompts import PromptSnapshot
from iris.replay import replay

from workbench.services import rerun, summarisers
from workbench.services.replay import (
    BUDGET_REPLAY_NAME,
    ensure_default_replay,
    open_saved,
    save_replay_result,
)
from workbench.storage.store import open_store

ROOT = Path(__file__).resolve().parents[2]
EDIT = "\nALWAYS MENTION PENGUINS.\n"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The long sample's ``budget 96k`` replay in a store of its own (one compaction)."""
    store = open_store(tmp_path_factory.mktemp("rerun") / "workbench.db")
    session_id = store.import_file(ROOT / "sample_sessions" / "long_session.jsonl").session_id
    ensure_default_replay(store, session_id)
    budget = store.replays.find(session_id, BUDGET_REPLAY_NAME)
    assert budget is not None
    stored = open_saved(store, budget.id)
    yield store, stored, rerun.replay_inputs(store, stored)
    store.close()


@pytest.fixture(scope="module")
def step(saved) -> int:
    """The step where the saved replay compacted (checked against the engine in the first test)."""
    return rerun.compaction_steps(saved[1])[0]


def _edited(inputs: rerun.ReplayInputs, extra: str = EDIT) -> PromptSnapshot:
    return inputs.snapshot.with_template(
        "compaction", inputs.snapshot.template_source("compaction") + extra)


class _Summary(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint whose summary follows the system prompt it receives."""

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        system = request["messages"][0]["content"]
        style = "Penguins were mentioned as asked." if "PENGUINS" in system else "Plain summary."
        body = "Migrating harbor to batch retry policies; continue with the sinks module. " + style
        if "VERBOSE" in system:
            body += " " + "padding " * 8000  # far over the summary max
        text = "\n\n".join(f"## {name}\n{body}" for name in REQUIRED_SECTIONS)
        payload = json.dumps({"model": "local", "choices": [{"message": {"content": text}}],
                              "usage": {"prompt_tokens": len(system), "completion_tokens": 99}})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload.encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Summary)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("WORKBENCH_SUMMARY_BASE_URL", f"http://127.0.0.1:{server.server_port}/v1")
    monkeypatch.setenv("WORKBENCH_SUMMARY_MODEL", "local")
    monkeypatch.delenv("WORKBENCH_SUMMARY_API_KEY", raising=False)
    yield server
    server.shutdown()
    server.server_close()


def test_r_ui_4_variables_are_the_ones_the_engine_rendered(saved, step):
    _, stored, inputs = saved
    plain = replay(inputs.session, inputs.config, prompts=inputs.snapshot)
    assert rerun.compaction_steps(stored) == tuple(c.step_index for c in plain.checkpoints)
    assert rerun.compaction_steps(stored)[0] == step
    outcome = rerun.run_step(inputs, step)
    assert set(outcome.variables) == {"compaction", "compaction_input"}
    for prompt_id, variables in outcome.variables.items():  # re-rendering gives the same text
        assert inputs.snapshot.render(prompt_id, variables) == outcome.rendered[prompt_id]
    assert outcome.summary_request == plain.checkpoints[0].summary_request_text
    assert outcome.checkpoint_text == stored.archives()[0].checkpoint_text  # R-PREP-6
    assert outcome.status == "applied" and outcome.success


def test_r_ui_4_rerun_step_changes_only_the_template(saved, step):
    _, stored, inputs = saved
    cmp = rerun.rerun_step(inputs, _edited(inputs), step)
    assert cmp.edited_ids == ("compaction",)
    assert "+ALWAYS MENTION PENGUINS." in cmp.prompt_diff
    assert cmp.original.tokens_before == cmp.edited.tokens_before  # same history
    assert cmp.original.snapshot_id == stored.info.template_snapshot_id
    assert cmp.edited.snapshot_id != cmp.original.snapshot_id
    # the extractive summariser reads messages, not the prompt: same checkpoint, both succeed
    assert cmp.checkpoint_diff == "" and cmp.edited.checkpoint_text
    assert cmp.original.success and cmp.edited.success
    assert cmp.edited.tokens_after is not None
    assert cmp.edited.tokens_after <= cmp.edited.pressure_line
    assert cmp.original.variables == cmp.edited.variables


def test_r_prep_7_remote_endpoint_writes_a_new_summary_shown_in_the_diff(saved, endpoint, step):
    _, _, inputs = saved
    assert summarisers.endpoint_status().startswith("configured: http://127.0.0.1:")
    remote = summarisers.make_summariser("remote", inputs.session)
    cmp = rerun.rerun_step(inputs, _edited(inputs), step, summariser=remote)
    assert "+" in cmp.checkpoint_diff and "Penguins were mentioned as asked." in cmp.checkpoint_diff
    assert "Plain summary." in cmp.original.checkpoint_text
    edited_usage, original_usage = cmp.edited.summary_usage, cmp.original.summary_usage
    assert edited_usage is not None and original_usage is not None
    assert cmp.edited.summariser == "remote" and edited_usage.output_tokens == 99
    assert edited_usage.input_tokens > original_usage.input_tokens


def test_r_cmp_8_rejected_edit_reports_the_failed_success_condition(saved, endpoint, step):
    _, _, inputs = saved
    remote = summarisers.make_summariser("remote", inputs.session)
    cmp = rerun.rerun_step(inputs, _edited(inputs, "\nBe VERBOSE.\n"), step, summariser=remote)
    assert cmp.original.success and cmp.original.status == "applied"
    assert not cmp.edited.success and cmp.edited.status == "rejected"
    assert cmp.edited.phase == "failed" and "summary too large" in cmp.edited.success_reason
    assert cmp.edited.checkpoint_text == "" and "padding" in cmp.edited.summary_text


def test_r_ui_4_whole_replay_rerun_saves_with_its_snapshot(saved, step):
    store, stored, inputs = saved
    progress = []
    result = rerun.rerun_replay(inputs, _edited(inputs),
                                progress=lambda done, total: progress.append((done, total)))
    assert progress[-1] == (68, 68)
    assert [c.step_index for c in result.steps] == list(rerun.compaction_steps(stored))
    assert result.steps[0].step_index == step
    assert "+ALWAYS MENTION PENGUINS." in result.steps[0].prompt_diff
    assert len(result.original.compactions) == len(result.edited.compactions) == len(result.steps)
    # the extractive checkpoint ignores the prompt: every later request is the same size
    assert [s.final_input_tokens for s in result.edited.steps] == [
        s.final_input_tokens for s in result.original.steps]
    info = save_replay_result(store, result.edited_bundle, session_id=stored.info.session_id,
                              name="penguins")
    sources = open_saved(store, info.id).template_sources()
    assert sources is not None and "PENGUINS" in sources["compaction"]
    reopened = rerun.stored_snapshot(open_saved(store, info.id))
    assert reopened == _edited(inputs)
    assert rerun.stored_snapshot(stored) == inputs.snapshot  # the original one is still kept


def test_r_ui_4_edits_carry_over_to_the_replay_snapshot():
    base = PromptSnapshot.defaults()
    page_edit = base.with_template("compaction_input", "{{ messages | length }} messages"
                                   "{{ previous_checkpoint }}{{ omitted_note }}{{ current_request }}")
    target = base.with_template("todo_context", "{{ todos | length }}")
    carried = rerun.apply_edits(target, base, page_edit)
    assert carried.edited_ids(target) == ("compaction_input",)
    assert carried.template_source("todo_context") == "{{ todos | length }}"


def test_r_ui_4_nearest_compaction_step():
    assert rerun.nearest_compaction_step((), 5) is None
    assert rerun.nearest_compaction_step((3, 9), None) == 3
    assert rerun.nearest_compaction_step((3, 9), 9) == 9
    assert rerun.nearest_compaction_step((3, 9), 8) == 3
    assert rerun.nearest_compaction_step((3, 9), 1) == 3


def test_r_prep_7_summariser_choice_and_endpoint_status(saved, monkeypatch):
    _, _, inputs = saved
    for name in OpenAICompatibleSummariser.ENV:
        monkeypatch.delenv(name, raising=False)
    assert summarisers.endpoint_status().startswith("not configured")
    assert summarisers.summariser_options(inputs.session) == ("extractive",)
    assert isinstance(summarisers.make_summariser("extractive", inputs.session), ExtractiveSummariser)
    with pytest.raises(SummariserError, match="not configured"):
        summarisers.make_summariser("remote", inputs.session)
    with pytest.raises(SummariserError, match="unknown summariser 'gpt'"):
        summarisers.make_summariser("gpt", inputs.session)


def test_r_ui_4_step_beyond_the_replay_is_reported_not_raised(saved):
    _, _, inputs = saved
    outcome = rerun.run_step(inputs, 500)
    assert outcome.phase == "missing" and not outcome.success


def test_r_ui_4_rerun_takes_the_page_compaction_templates_even_once_saved():
    """After Save the page's snapshot equals the workspace, yet still differs from the replay's."""
    replay_snapshot = PromptSnapshot.defaults()
    saved = replay_snapshot.with_template(
        "compaction", replay_snapshot.template_source("compaction") + EDIT).with_template(
        "todo_context", "{{ todos | length }}")
    run = rerun.with_engine_templates(replay_snapshot, saved)
    assert run.edited_ids(replay_snapshot) == ("compaction",)  # only what a replay renders
    assert rerun.with_engine_templates(replay_snapshot, replay_snapshot) is replay_snapshot


def test_r_cmp_8_real_codex_session_reports_the_engines_own_verdict(real_sessions, tmp_path):
    """On a real rollout the re-run's status and success reason are the saved replay's own."""
    from iris.preparation.records import CompactionApplied, CompactionRejected

    rollout = next((real_sessions / "codex_rollout").glob("rollout-*.jsonl"))
    with open_store(tmp_path / "w.db") as store:
        session_id = store.import_file(rollout, lenient=True).session_id
        ensure_default_replay(store, session_id)
        budget = store.replays.find(session_id, BUDGET_REPLAY_NAME)
        assert budget is not None
        stored = open_saved(store, budget.id)
        steps = rerun.compaction_steps(stored)
        if not steps:
            pytest.skip("the engine no longer compacts this rollout at a 96k budget")
        inputs = rerun.replay_inputs(store, stored)
        outcome = rerun.run_step(inputs, steps[0])
        stage = stored.preparation(steps[0]).stage("compaction")
    assert stage is not None
    assert outcome.status == stage.status
    rejected = [d.reason for d in stage.decisions if isinstance(d, CompactionRejected)]
    applied = [d for d in stage.decisions if isinstance(d, CompactionApplied)]
    assert outcome.success == bool(applied)
    if applied:
        assert outcome.tokens_before == applied[0].tokens_before
    else:
        assert outcome.success_reason == rejected[0]
