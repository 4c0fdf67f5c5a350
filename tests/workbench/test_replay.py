"""Replay (R-PREP-6, R-PREP-7): determinism, own durable state, failures and cancellation.

The summariser timeout and the summary usage run against a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from iris.compaction import ExtractiveSummariser, OpenAICompatibleSummariser
from iris.compaction.checkpoint import REQUIRED_SECTIONS
from iris.config import parse_config
from iris.context import ContextSnapshot
from iris.prompts import PromptSnapshot
from iris.replay import ReplayEnvironment, ReplayObservers, replay
from iris.session import Session
from record_access import failure_of, request_of, stage_of

from workbench.importers.native import load_native

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
SMALL = {"compaction": {"input_budget_tokens": 96000}}


@pytest.fixture(scope="module")
def long_session():
    return load_native(SAMPLES / "long_session.jsonl")


@pytest.fixture(scope="module")
def long_default(long_session):
    """One default replay of the long sample, with the progress it reported."""
    seen = []
    result = replay(long_session,
                    observers=ReplayObservers(progress=lambda done, total: seen.append((done, total))))
    return result, seen


def _json(r) -> str:
    return json.dumps(r.model_dump(mode="json"), sort_keys=True)


def test_r_prep_6_two_replays_give_identical_json(long_session, tmp_path):
    """R-PREP-6: same session, configuration, templates and summariser → identical records, even
    with different working directories."""
    cfg = parse_config(SMALL)
    a = replay(long_session, cfg, environment=ReplayEnvironment(work_dir=tmp_path / "a"))
    b = replay(long_session, cfg, summariser=ExtractiveSummariser(),
               environment=ReplayEnvironment(work_dir=tmp_path / "b"))
    assert a.checkpoints, "the 96k budget compacts the long sample"
    assert _json(a) == _json(b)
    assert str(tmp_path) not in _json(a)
    assert "<session_dir>/reduced-artifacts/" in _json(a)
    assert (tmp_path / "a" / "history-1.md").is_file()


def test_r_prep_6_template_edit_changes_the_configuration_snapshot(long_session):
    """R-PREP-6: the configuration snapshot id covers the template snapshot."""
    base = PromptSnapshot.defaults()
    edited = base.with_template("compaction", base.sources["compaction"] + "\nBe brief.")
    a = replay(long_session, parse_config(SMALL), prompts=base)
    b = replay(long_session, parse_config(SMALL), prompts=edited)
    assert a.configuration_snapshot_id != b.configuration_snapshot_id
    assert a.checkpoints[0].summary_request_text != b.checkpoints[0].summary_request_text


def test_r_prep_6_compaction_at_step_k_changes_the_input_of_step_k_plus_1(long_session):
    """R-PREP-6: after the replay applies a compaction at step k, step k+1 starts from the
    checkpoint plus the raw tail plus the messages recorded since."""
    r = replay(long_session, parse_config(SMALL))
    c = r.checkpoints[0]
    k = c.step_index
    nxt = r.preparations[k + 1]
    request = request_of(r, nxt)
    assert request.marks[0].origin == "checkpoint" and "summarised" in request.marks[0].marks
    assert request.messages[0].is_compaction_summary
    kept = [m.history_index for m in request.marks if m.history_index is not None]
    assert kept[0] == c.first_kept_message
    assert not set(kept) & set(c.archived_messages)
    recorded_before = nxt.response_message_index
    assert nxt.message_count < recorded_before  # fewer messages than the recorded request had
    assert stage_of(nxt, "assembly").after_input_tokens < stage_of(
        r.preparations[k], "compaction").before_input_tokens
    assert r.archives[c.archive_name].strip()
    assert c.checkpoint_text == request.messages[0].text


def test_r_cmp_7_the_replay_keeps_the_archive_text_it_wrote_without_reading_it_back(long_session,
                                                                                   tmp_path):
    """R-CMP-7: the archive a compaction writes is the text the replay keeps: the compaction
    outcome carries it, so the replay never reads ``history-N.md`` back from its folder (a
    replay in its own temporary folder has removed it by the time the replay returns)."""
    from iris.compaction.archive import read_archive
    work_dir = tmp_path / "run"
    work_dir.mkdir()
    r = replay(long_session, parse_config(SMALL),
               environment=ReplayEnvironment(work_dir=work_dir))
    assert r.checkpoints, "the small budget compacts"
    for c in r.checkpoints:
        on_disk = (work_dir / c.archive_name).read_text(encoding="utf-8")
        assert r.archives[c.archive_name] == on_disk
        assert len(read_archive(work_dir / c.archive_name)) == len(c.archived_messages)
    in_temp = replay(long_session, parse_config(SMALL))
    assert in_temp.archives == r.archives


class _FlakySource:
    """A context source whose collect fails at one step (a real async source, not a mock)."""

    def __init__(self, bad_step: int) -> None:
        self.bad_step = bad_step

    async def collect(self, scope):
        if scope.step_index == self.bad_step:
            raise RuntimeError("snapshot service unavailable")
        return ContextSnapshot()


def test_r_prep_1_stage_failure_gives_failed_record_and_replay_goes_on(long_session):
    """R-PREP-1: a failing stage yields a failed record with the stage and error; the
    following steps are prepared normally."""
    r = replay(long_session, environment=ReplayEnvironment(context_source=_FlakySource(3)))
    p = r.preparations[3]
    assert p.phase == "failed" and failure_of(p).stage == "assembly"
    assert "snapshot service unavailable" in failure_of(p).message
    assert failure_of(p).error_type == "RuntimeError"
    assert [s.status for s in p.stages[1:]] == ["skipped"] * 5
    assert p.final_request_ref is None
    assert len(r.preparations) == len(long_session.index.batches)
    assert all(q.phase == "ready" for q in r.preparations[4:])


def test_r_prep_1_cancellation_gives_cancelled_record_and_stops(long_session):
    """R-PREP-1: a cancel request produces a cancelled preparation and ends the replay."""
    calls = {"n": 0}

    def cancel() -> bool:
        calls["n"] += 1
        return calls["n"] > 6 * 4 + 2  # during step 4, before its third stage

    r = replay(long_session, observers=ReplayObservers(cancel=cancel))
    assert r.cancelled
    last = r.preparations[-1]
    assert last.step_index == 4 and last.phase == "cancelled"
    assert failure_of(last).kind == "cancelled" and failure_of(last).stage == "drop_optional"
    assert [s.status for s in last.stages[2:]] == ["skipped"] * 4


class _Handler(BaseHTTPRequestHandler):
    delay = 0.0

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(self.delay)
        text = "\n\n".join(f"## {name}\nNothing more than the ledger fix." for name in
                           REQUIRED_SECTIONS)
        body = json.dumps({"model": "local-test", "choices": [{"message": {"content": text}}],
                           "usage": {"prompt_tokens": 1234, "completion_tokens": 56}}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and went away, as the timeout test intends

    def log_message(self, *args):
        pass


@pytest.fixture
def summary_server():
    servers = []

    def start(delay: float) -> str:
        handler = type("H", (_Handler,), {"delay": delay})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_r_prep_7_remote_summary_usage_is_counted_apart(long_session, summary_server):
    """R-PREP-7/R-TOK-6: an OpenAI-compatible summariser's usage goes to run_usage.compaction."""
    url = summary_server(0.0)
    r = replay(long_session, parse_config(SMALL),
               summariser=OpenAICompatibleSummariser(url, "local-test"))
    assert r.checkpoints
    assert r.run_usage.compaction.calls == len(r.checkpoints)
    assert r.run_usage.compaction.input_tokens == 1234 * len(r.checkpoints)
    summary_usage = r.checkpoints[0].summary_usage
    assert summary_usage is not None and summary_usage.output_tokens == 56
    assert r.run_usage.main.calls == len(r.preparations)


def test_r_cmp_8_summary_timeout_fails_the_step_and_keeps_old_state(long_session, summary_server):
    """R-CMP-8/R-PREP-1: a summariser timeout rejects the candidate; the step is failed with
    kind 'timeout', no compaction is applied, and the replay goes on."""
    url = summary_server(1.0)
    cfg = parse_config({"compaction": {"input_budget_tokens": 96000, "timeout_seconds": 0.2}})
    first = replay(long_session, parse_config(SMALL)).checkpoints[0].step_index
    # stop two steps after the first compaction attempt: each timed-out attempt costs 0.2 s
    end = long_session.index.batches[first + 2].assistant_message + 1
    head = Session(header=long_session.header, messages=long_session.messages[:end])
    r = replay(head, cfg, summariser=OpenAICompatibleSummariser(url, "local-test"))
    failed = [p for p in r.preparations if p.phase == "failed"]
    assert failed and failure_of(failed[0]).kind == "timeout" and failure_of(failed[0]).stage == "compaction"
    assert stage_of(failed[0], "compaction").status == "rejected"
    assert not r.checkpoints
    assert len(r.preparations) == first + 3 and r.preparations[-1].step_index == first + 2


def test_r_tok_4_provider_usage_recorded_next_to_local_estimate(long_session, long_default):
    """R-PREP-6/R-TOK-4: each step records the provider's prompt tokens (trusted) or the frozen
    ≈ estimate when the response had none."""
    r, _ = long_default
    kinds = {p.provider_usage_kind for p in r.preparations}
    assert {"trusted", "estimated"} <= kinds
    for p, batch in zip(r.preparations, long_session.index.batches):
        usage = long_session.messages[batch.assistant_message].usage
        if p.provider_usage_kind == "trusted":
            assert p.provider_prompt_tokens == usage.prompt_tokens
        assert p.final_input_tokens > 0


def test_replay_reports_progress_per_step(long_session, long_default):
    """R-UI-1 support: progress is reported once per step with the total."""
    _, seen = long_default
    n = len(long_session.index.batches)
    assert seen[0] == (1, n) and seen[-1] == (n, n) and len(seen) == n


def test_r_prep_1_replay_result_round_trips_through_json(long_session):
    """R-PREP-1: the whole replay (records, requests, archives, usage) loads back unchanged."""
    from iris.replay import Replay

    end = long_session.index.batches[56].assistant_message + 1  # past the 96k compaction (step 55)
    head = Session(header=long_session.header, messages=long_session.messages[:end])
    r = replay(head, parse_config(SMALL))
    assert r.checkpoints and r.archives
    back = Replay.model_validate(json.loads(_json(r)))
    assert back == r.model_copy(update={"messages_counted": 0})  # a cost figure, not in the JSON


def test_r_prep_6_real_sessions_replay_ready_and_deterministic(real_sessions):
    """R-PREP-6: every real transcript (Claude Code, Codex, chat completions) replays
    with every step ready, twice identically."""
    from workbench.importers import load_session

    files = sorted(p for p in real_sessions.glob("*/*") if p.suffix in (".jsonl", ".json"))
    assert len(files) >= 3
    for path in files:
        s = load_session(path, lenient=True).session
        a = replay(s)
        assert a.preparations and all(p.phase == "ready" for p in a.preparations), path.name
        if path.parent.name == "openai_chat":  # the smallest: replay twice, compare
            assert _json(a) == _json(replay(s)), path.name


def test_replay_cost_grows_with_what_changes_not_with_steps_times_history(long_session,
                                                                          long_default):
    """Each message is counted once; per step only new or rewritten messages are
    counted (a naive replay would count about steps × history / 2 messages)."""
    r, _ = long_default
    naive = sum(p.message_count for p in r.preparations)
    rewritten = sum(1 for req in r.requests.values() for m in req.marks if m.marks)
    assert r.messages_counted <= len(long_session.messages) + rewritten
    assert r.messages_counted * 5 < naive


def test_r_build_2_context_yaml_render_error_fails_assembly_of_each_step(long_session, tmp_path):
    """R-BUILD-2: a context.yaml whose section exceeds max_chars is an error: each step's
    assembly fails with it (nothing silently truncated), and the replay still returns."""
    from iris.context import load_context_build_input

    path = tmp_path / "context.yaml"
    path.write_text("system:\n  max_chars: 10\n  slots:\n    - name: rules\n"
                    "      content: Always run the whole test suite before committing.\n",
                    encoding="utf-8")
    r = replay(long_session, environment=ReplayEnvironment(context_input=load_context_build_input(path)))
    assert {p.phase for p in r.preparations} == {"failed"}
    first = r.preparations[0]
    assert failure_of(first).stage == "assembly" and "max_chars" in failure_of(first).message


def test_r_dyn_1_replay_inside_a_running_event_loop(long_session):
    """R-DYN-1/R-UI-8: called from a running loop (a Jupyter cell), the async context source still
    answers: the recorded snapshots are collected on the replay's own loop in a helper thread."""
    import asyncio

    async def in_a_cell():
        return replay(long_session)

    r = asyncio.run(in_a_cell())
    assert all(p.phase == "ready" for p in r.preparations)
    assert any(p.final_contribution_keys for p in r.preparations)
