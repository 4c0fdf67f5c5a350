"""`compact` end to end (R-CMP-5…9, R-CMP-6 reduction of the head, R-PREP-3 decisions): success,
each failure keeping the old state, recursion, and the long sample session compacted repeatedly."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from iris.compaction import (
    REQUIRED_SECTIONS,
    AppliedDecision,
    CandidateDecision,
    CompactionEnvironment,
    CompactionOutcome,
    CompactionRequest,
    ExtractiveSummariser,
    NoCutDecision,
    OpenAICompatibleSummariser,
    PlanDecision,
    RejectedDecision,
    compact,
    read_archive,
    thresholds,
    validate_summary,
)
from iris.config import parse_config
from iris.prompts import PromptSnapshot
from iris.session import Message, TextBlock, ToolCallBlock, ToolResultBlock
from iris.tokens import default_estimator

EST = default_estimator()
ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "sample_sessions" / "long_session.jsonl"


def archive_of(out: CompactionOutcome) -> Path:
    """The archive an applied compaction wrote."""
    assert out.archive_path is not None, out.decisions
    return Path(out.archive_path)


def rejection(out: CompactionOutcome) -> RejectedDecision:
    """The rejection that ends a failed attempt."""
    last = out.decisions[-1]
    assert isinstance(last, RejectedDecision), last
    return last


def user(text):
    return Message(role="user", content=(TextBlock(text=text),))


def work(n, size=400):
    return [user(f"Step {n}: never edit generated files. Please handle module{n}."),
            Message(role="assistant", content=(TextBlock(text=f"I will run the checks for {n}."),
                                               ToolCallBlock(id=f"c{n}", name="bash",
                                                             arguments={"command": f"make t{n}"}))),
            Message(role="tool", content=(ToolResultBlock(
                call_id=f"c{n}", text="\n".join(f"ok line {i} of run {n}" for i in range(size))),)),
            Message(role="assistant", content=(TextBlock(text=f"Module {n} passes its checks."),))]


def run(history, tmp_path, *, current=None, summariser=None, extra=0, previous=None, **comp):
    cfg = parse_config({"compaction": {"input_budget_tokens": 20000, **comp}})
    t = thresholds(cfg)
    before = EST.request_tokens([*history, *([current] if current else [])]) + extra
    env = CompactionEnvironment(config=cfg, thresholds=t, prompts=PromptSnapshot.defaults(),
                                summariser=summariser or ExtractiveSummariser(),
                                work_dir=tmp_path, estimator=EST)
    request = CompactionRequest(history=history, current_request=current, request_tokens=before,
                                previous=previous)
    return compact(request, env), t


def test_r_cmp_8_applied_compaction_meets_success_condition(tmp_path):
    """R-CMP-7/8: checkpoint + raw tail; after ≤ pressure line and < before; decisions carry numbers;
    the archive holds exactly the head."""
    history = [m for n in range(6) for m in work(n)]
    out, t = run(history, tmp_path, current=user("Now summarise the results."),
                 profile="continuation")
    assert out.status == "applied"
    kinds = [d.kind for d in out.decisions]
    assert kinds == ["plan", "candidate", "applied"]
    plan, cand, applied = out.decisions
    assert isinstance(plan, PlanDecision) and isinstance(cand, CandidateDecision)
    assert isinstance(applied, AppliedDecision)
    assert plan.head_messages + plan.tail_messages == len(history)
    assert applied.after_tokens <= t.pressure_line and applied.after_tokens < applied.before_tokens
    assert applied.after_tokens == cand.projected_request_tokens
    assert out.history[0].is_compaction_summary and out.history[0].role == "user"
    assert out.history[1:] == tuple(history[out.cut_index:])
    assert read_archive(archive_of(out)) == tuple(history[:out.cut_index])
    assert archive_of(out).name == "history-1.md"
    text = out.history[0].text
    assert text.startswith("[Context Summary]") and "history-1.md" in text
    assert "summary: extractive" in text and "## Session Constraints" in text
    validate_summary(text.split("[Context compressed]")[0].replace("[Context Summary]", ""))
    assert "## Archived Messages" in out.summary_request_text
    assert all(f"## {s}" in out.summary_request_text for s in REQUIRED_SECTIONS)


def test_r_cmp_6_head_reduced_for_summary_archive_lossless(tmp_path):
    """R-CMP-6: the summary input is the reduced head; the archive keeps the original."""
    history = [m for n in range(8) for m in work(n, size=600)]
    out, _ = run(history, tmp_path, profile="archival")
    assert out.status == "applied"
    result = history[2].content[0]
    assert isinstance(result, ToolResultBlock)
    original = result.text
    assert original not in out.summary_request_text
    assert "ok line 0 of run 0" in out.summary_request_text or "summarized" in out.summary_request_text
    assert read_archive(archive_of(out)) == tuple(history)


def test_r_cmp_8_summary_too_large_keeps_old_state(tmp_path):
    """R-CMP-8: a summary over summary_max_tokens is a failed attempt: history, state and
    directory unchanged."""
    history = [m for n in range(6) for m in work(n)]
    out, _ = run(history, tmp_path, summary_ratio=0.001)
    assert out.status == "rejected" and out.history == tuple(history)
    assert rejection(out).reason.startswith("summary too large")
    assert list(tmp_path.iterdir()) == [] and out.state.archives == ()


def test_r_cmp_8_not_small_enough_is_rejected(tmp_path):
    """R-CMP-8: after > pressure line (a large fixed part) is rejected with its numbers."""
    history = [m for n in range(6) for m in work(n)]
    out, t = run(history, tmp_path, extra=30000)
    rej = rejection(out)
    assert out.status == "rejected" and rej.kind == "rejected"
    assert rej.reason == (f"after {rej.projected_request_tokens:,} > pressure line "
                          f"{t.pressure_line:,}")
    assert out.decisions[-2].kind == "candidate" and list(tmp_path.iterdir()) == []


def test_r_cmp_8_no_cut_continues_within_hard_limit(tmp_path):
    """R-CMP-8: no new cut point but within the hard limit: continue without compacting."""
    out, _ = run([], tmp_path)
    no_cut = out.decisions[0]
    assert isinstance(no_cut, NoCutDecision)
    assert out.status == "no_cut" and no_cut.within_hard_limit
    assert out.history == ()


class _Server(BaseHTTPRequestHandler):
    reply = ""

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        if type(self).reply == "hang":
            time.sleep(2)
            return
        body = json.dumps({"choices": [{"message": {"content": type(self).reply}}]}).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def endpoint():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True).start()
    yield OpenAICompatibleSummariser(f"http://127.0.0.1:{srv.server_address[1]}", "m"), _Server
    srv.shutdown()
    srv.server_close()


def test_r_cmp_8_timeout_with_hanging_server_keeps_old_state(tmp_path, endpoint):
    """R-CMP-8: a timeout at timeout_seconds is a failed attempt (never an exception)."""
    summariser, handler = endpoint
    handler.reply = "hang"
    history = [m for n in range(6) for m in work(n)]
    out, _ = run(history, tmp_path, summariser=summariser, timeout_seconds=0.5)
    assert out.status == "rejected" and rejection(out).reason == "timeout after 0.5 s"
    assert out.history == tuple(history) and list(tmp_path.iterdir()) == []


def test_r_cmp_7_invalid_remote_summary_is_failed_attempt(tmp_path, endpoint):
    """R-CMP-7/8: a summary missing a section is rejected with the section named."""
    summariser, handler = endpoint
    handler.reply = "\n\n".join(f"## {s}\nSomething specific about {s} here."
                                for s in REQUIRED_SECTIONS if s != "Progress")
    history = [m for n in range(6) for m in work(n)]
    out, _ = run(history, tmp_path, summariser=summariser)
    assert out.status == "rejected"
    assert rejection(out).reason == "summary invalid: missing section '## Progress'"


def test_r_cmp_9_recursive_compaction_carries_previous_checkpoint(tmp_path):
    """R-CMP-9: the second compaction runs over a history starting with a checkpoint; its body
    becomes ## Previous Checkpoint; archives number 1, 2 and the second archive starts with the
    first checkpoint."""
    history = [m for n in range(6) for m in work(n)]
    first, _ = run(history, tmp_path, profile="continuation")
    grown = [*first.history, *[m for n in range(6, 12) for m in work(n)]]
    second, _ = run(grown, tmp_path, profile="continuation", previous=first.state)
    assert second.status == "applied" and archive_of(second).name == "history-2.md"
    assert "## Previous Checkpoint" in second.history[0].text
    assert "## Previous Checkpoint" in second.summary_request_text
    assert read_archive(archive_of(second))[0] == first.history[0]
    assert [a.number for a in second.state.archives] == [1, 2]
    assert "history-1.md" in second.history[0].text and "history-2.md" in second.history[0].text


def test_r_cmp_7_current_request_deduplicated_in_retained(tmp_path):
    """R-CMP-7: an archived message identical to the current request becomes one note."""
    history = [user("Ship it."), *[m for n in range(4) for m in work(n)], user("Ship it.")]
    out, _ = run(history, tmp_path, current=user("Ship it."), profile="archival")
    text = out.history[0].text
    assert "repeats the current request verbatim" in text
    assert text.count("> Ship it.") == 0


def test_compact_is_deterministic(tmp_path):
    history = [m for n in range(6) for m in work(n)]
    a, _ = run(history, tmp_path / "a")
    b, _ = run(history, tmp_path / "b")
    assert a.history == b.history and a.summary_request_text == b.summary_request_text
    assert archive_of(a).read_bytes() == archive_of(b).read_bytes()


def test_r_cmp_8_long_sample_session_compacted_repeatedly(tmp_path):
    """R-CMP-8: replaying the long sample session, compacting whenever the pressure line is
    reached; every applied compaction is ≤ the line, smaller than before, and archives exactly its
    head."""
    if not LONG.exists():
        pytest.skip("sample_sessions/long_session.jsonl is not generated yet")
    from workbench.importers.native import load_native

    session = load_native(LONG)
    cfg = parse_config({"compaction": {"input_budget_tokens": 96000}})
    t = thresholds(cfg, session.header.limits)
    assert t.threshold_line is not None
    env = CompactionEnvironment(config=cfg, thresholds=t, prompts=PromptSnapshot.defaults(),
                                summariser=ExtractiveSummariser(), work_dir=tmp_path,
                                estimator=EST)
    history: list[Message] = []
    state, applied = None, 0
    for message in session.messages:
        if message.role == "assistant" and history:
            before = EST.request_tokens(history)
            if before >= t.threshold_line:
                out = compact(CompactionRequest(history=history, request_tokens=before,
                                                previous=state), env)
                assert out.status in ("applied", "no_cut"), out.decisions[-1]
                if out.status == "applied":
                    applied += 1
                    done = out.decisions[-1]
                    assert isinstance(done, AppliedDecision)
                    after = done.after_tokens
                    assert after <= t.pressure_line and after < before
                    assert after == EST.request_tokens(out.history)
                    assert read_archive(archive_of(out)) == tuple(history[:out.cut_index])
                    assert archive_of(out).name == f"history-{applied}.md"
                    history, state = list(out.history), out.state
        history.append(message)
    assert applied >= 3
    assert len(list(tmp_path.glob("history-*.md"))) == applied


def test_r_prm_4_edited_template_used_and_broken_template_rejected(tmp_path):
    """R-PRM-4/R-CMP-6: the operation's own snapshot renders the request (an edit shows in
    summary_request_text); a template that fails to render is a failed attempt, not a crash."""
    history = [m for n in range(6) for m in work(n)]
    cfg = parse_config({"compaction": {"input_budget_tokens": 20000}})
    t = thresholds(cfg)
    base = PromptSnapshot.defaults()
    request = CompactionRequest(history=history, request_tokens=EST.request_tokens(history))
    env = CompactionEnvironment(config=cfg, thresholds=t, prompts=base, estimator=EST,
                                summariser=ExtractiveSummariser(), work_dir=tmp_path / "a")
    edited = base.with_template("compaction", "EDITED PROMPT for {{ profile }}")
    out = compact(request, replace(env, prompts=edited))
    assert out.summary_request_text.startswith("EDITED PROMPT for ")
    broken = base.with_template("compaction", "{{ required_sections[99] }}")  # fails at render
    bad = compact(request, replace(env, prompts=broken, work_dir=tmp_path / "b"))
    assert bad.status == "rejected" and rejection(bad).reason.startswith("template error")
    assert not (tmp_path / "b").exists()


def test_r_cmp_8_plugin_exception_is_failed_attempt(tmp_path):
    """R-CMP-8: any summariser failure becomes a rejected attempt; compact never raises for it."""

    class Broken:
        def summarise(self, request, *, timeout_seconds):
            raise RuntimeError("model pool unavailable")

    out, _ = run([m for n in range(6) for m in work(n)], tmp_path, summariser=Broken())
    assert out.status == "rejected"
    assert rejection(out).reason == "summariser error: RuntimeError: model pool unavailable"


def test_r_cmp_6_summary_input_trimmed_from_oldest_with_note(tmp_path):
    """R-CMP-6 (reference §2.3): the summary input is trimmed from the oldest end to
    budget − 4096 − clamp(budget/8, 2048, 4096) − max(budget/50, 1024), floor budget/6, with a note."""
    from iris.compaction.request import input_allowance

    assert input_allowance(96000) == 96000 - 4096 - 4096 - 1920
    assert input_allowance(20000) == 20000 - 4096 - 2500 - 1024
    assert input_allowance(6000) == 1000
    history = [m for n in range(30) for m in work(n, size=60)]
    out, _ = run(history, tmp_path, input_budget_tokens=6000, profile="archival",
                 summary_ratio=0.5)
    assert "[system] The earliest" in out.summary_request_text
    assert "history-1.md" in out.summary_request_text
    assert "### [119] assistant" in out.summary_request_text
    assert "### [0] user" not in out.summary_request_text


def test_r_cmp_12_durable_apply_clears_model_driven_cooldown(tmp_path):
    """Reference §2.6: any durable apply clears the model-driven cooldown."""
    from iris.compaction import CompactionState

    history = [m for n in range(6) for m in work(n)]
    out, _ = run(history, tmp_path, previous=CompactionState(cooldown_until_batch=99))
    assert out.status == "applied" and out.state.cooldown_until_batch is None


def _tool_only(n, size=400):
    return work(n, size)[1:3]


def test_r_cmp_9_anchors_and_retained_survive_repeated_compaction(tmp_path):
    """R-CMP-9/R-CMP-7: compacting heads with no user message keeps the original request and the
    retained user messages; previous checkpoints never nest (one level only)."""
    history = [user("Original task: migrate the sinks."), *_tool_only(0),
               user("Then update the docs."), *_tool_only(1)]
    out, _ = run(history, tmp_path, profile="archival")
    for round_ in range(2, 5):
        grown = [*out.history, *[m for n in range(round_ * 10, round_ * 10 + 4)
                                 for m in _tool_only(n)]]
        out, _ = run(grown, tmp_path, profile="archival", previous=out.state)
        assert out.status == "applied"
        text = out.history[0].text
        assert "## Current User Request\nThen update the docs." in text
        assert "## Background Goals\nOriginal task: migrate the sinks." in text
        assert "> Original task: migrate the sinks." in text and "> Then update the docs." in text
        headings = [line for line in text.splitlines() if line.startswith("## ")]
        assert headings.count("## Previous Checkpoint") == 1
        assert headings.count("## Current User Request") == 1
    assert [a.number for a in out.state.archives] == [1, 2, 3, 4]
