"""The live runner (R-RUN-1) against a real local chat-completions server standing in for the model.

Each scripted model is a function of the request it received (tests/chat_server.py); the server's
usage counts the request it really got, so the runner's triggers read real provider usage.
"""

from __future__ import annotations

import functools
import json
import random
import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, all_text, tool_results
from iris.config import parse_config
from iris.context import (
    ContextBuilder,
    ContextBuildScope,
    ContextContribution,
    ContextSnapshot,
    Msg,
    TemplateRenderer,
    parse_context_build_input,
)
from iris.errors import ConfigError
from iris.preparation import ContextPreparation, ListSink, PreparationEvent
from iris.replay import replay
from iris.replay_options import ReplayEnvironment
from iris.runner import PREPARATIONS_FILE, AgentRunner, RunResult, Tool
from summary_server import GOOD, ScriptedServer, Step

from workbench.importers import load_session

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
ENGINE = {"compaction": {"input_budget_tokens": 6000, "summary_ratio": 0.12}}


def shell_output(n: int, lines: int = 60) -> str:
    """About 6 KB of varied shell output (a successful command, reducible once it is old)."""
    rng = random.Random(n)
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota"]
    return "\n".join(f"line {j}: " + " ".join(f"{rng.choice(words)}{rng.randint(0, 999)}"
                                              for _ in range(12)) for j in range(lines))


def bash_tool() -> Tool:
    return Tool("bash", SCHEMA, lambda a: shell_output(int(str(a["command"]).split()[-1])),
                description="Run a shell command")


class PerSession:
    """A scripted model that counts the turns of each session (``Session N:`` in the task)."""

    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.turns: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        # the task names its session; a checkpoint keeps the user's request, so the name survives
        found = re.search(r"Session \d+:", all_text(body))
        key = found.group(0) if found else ""
        with self.lock:
            n = self.turns[key] = self.turns.get(key, -1) + 1
        return [("bash", {"command": f"run {n}"})] if n < self.calls else "all runs done"


def runner(tmp_path: Path, url: str, **options: Any) -> AgentRunner:
    config = {"endpoint": {"base_url": url, "model": "scripted-model", "timeout_seconds": 20,
                           "initial_backoff": 0.01},
              "sessions_dir": str(tmp_path / "sessions"), "engine": ENGINE}
    return AgentRunner.from_config(config, tools=options.pop("tools", [bash_tool()]), **options)


def test_r_run_1_live_run_crosses_the_pressure_line_and_compacts(tmp_path: Path) -> None:
    """R-RUN-1: a live tool loop through the preparation pipeline crosses the pressure line and
    compacts; every step is recorded with the provider's usage, and the smaller request after the
    compaction is what the model really received."""
    with ChatServer(PerSession(calls=12)) as srv:
        live = runner(tmp_path, srv.url)
        result = live.run("Run the job twelve times and report.")
    assert result.stop == "answered" and result.answer == "all runs done"
    assert len(result.preparations) == len(srv.bodies) == 13
    assert [p.step_index for p in result.preparations] == list(range(13))
    assert all(p.phase == "ready" and p.activation == "live" for p in result.preparations)
    applied = [p for p in result.preparations if p.compaction_applied]
    assert applied, "the loop must cross the pressure line and compact"
    first = applied[0]
    assert first.trigger_tokens is not None and first.trigger_tokens >= first.pressure_line
    assert first.final_input_tokens < first.pressure_line
    sizes = [len(json.dumps(b["messages"])) for b in srv.bodies]
    assert sizes[first.step_index] < sizes[first.step_index - 1] / 2
    # the provider's usage of each answer is on its record, and the next step's trigger reads it
    assert all(p.provider_usage_kind == "trusted" and p.provider_prompt_tokens for p in result.preparations)
    after = result.preparations[first.step_index + 1]
    assert after.trigger_basis == "provider"
    answered = result.preparations[first.step_index].provider_prompt_tokens
    assert answered is not None and after.trigger_tokens == answered + 20  # prompt + output of the last answer (Chord)
    archive = (result.session_dir / "history-1.md").resolve()
    assert archive.is_file()
    # the model is told the archive's real path; the record keeps the file name
    assert f"- {archive} (" in all_text(srv.bodies[first.step_index])
    checkpoint = live.requests[first.preparation_id].messages
    assert any("- history-1.md (" in m.text for m in checkpoint)


def test_r_run_1_without_provider_usage_nothing_triggers(tmp_path: Path) -> None:
    """R-RUN-1, R-TOK-4: an endpoint that reports no usage gives the trigger no trusted sample, so
    the live run never compacts on its own estimate (unless trigger_without_usage is set)."""
    with ChatServer(PerSession(calls=12), usage=False) as srv:
        result = runner(tmp_path, srv.url).run("Run the job twelve times and report.")
    assert result.stop == "answered" and result.compactions == 0
    assert {p.trigger_basis for p in result.preparations} == {"none"}
    assert max(p.final_input_tokens for p in result.preparations) > result.preparations[0].pressure_line
    assert {p.provider_usage_kind for p in result.preparations} == {"missing"}


def test_r_run_1_the_workbench_imports_the_live_session(tmp_path: Path) -> None:
    """R-RUN-1: the session file is the native format; the workbench imports it like any
    transcript (messages, usage, the runner's compactions) and a replay of it with the same
    configuration prepares the same requests, stage by stage, up to the first compaction."""
    with ChatServer(PerSession(calls=12)) as srv:
        live = runner(tmp_path, srv.url)
        result = live.run("Run the job twelve times and report.")
    imported = load_session(result.session_path)
    session = imported.session
    assert imported.format == "native"
    assert session == live.session
    assert len(session.index.batches) == len(result.preparations)
    assert len(session.compactions) == result.compactions >= 1
    assert session.compactions[0].source == "iris:runner"
    assert session.messages[session.compactions[0].at_message].is_compaction_summary
    usage = [m.usage for m in session.messages if m.role == "assistant"]
    assert all(u is not None and u.is_trusted for u in usage)
    saved = [json.loads(line) for line in
             (result.session_dir / PREPARATIONS_FILE).read_text().splitlines()]
    assert [p["preparation_id"] for p in saved] == [p.preparation_id for p in result.preparations]
    again = replay(session, parse_config(ENGINE),
                   environment=ReplayEnvironment(tools=[bash_tool().schema]))
    first = next(p.step_index for p in result.preparations if p.compaction_applied)
    assert len(again.preparations) == len(result.preparations)
    for a, b in zip(result.preparations[:first], again.preparations[:first], strict=True):
        assert a.final_input_tokens == b.final_input_tokens
        assert _decided(a) == _decided(b)


def _decided(p: ContextPreparation) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """What each stage decided, without the words. The compaction stage's notices and the words of
    whole-request figures read the calibration, which a live run measures on the whole request it
    sent and a replay on the recorded history: only those may differ."""
    return [(s.name, s.status, [d.model_dump(exclude={"reason"}) for d in s.decisions])
            for s in p.stages if s.name != "compaction"]


_SAVED = re.compile(r"Full output saved to (\S+?\.txt)")


def test_r_run_1_the_model_reads_a_reduced_output_back_from_its_real_path(tmp_path: Path) -> None:
    """R-RUN-1 (recovery addresses): a reduced tool output's summary reaches the model with the
    real file path; the model's read_file call with that path gets the original bytes back.
    Records keep the logical ``<session_dir>`` root; no request on the wire carries it."""
    big = shell_output(0)
    read: list[str] = []

    def read_file(args: dict[str, Any]) -> str:
        read.append(str(args["path"]))
        return Path(str(args["path"])).read_text(encoding="utf-8")

    def model(body: dict[str, Any]) -> Any:
        results = tool_results(body)
        if read:
            return "recovered"
        seen = _SAVED.findall(all_text(body) + "\n".join(results))
        if seen:
            return [("read_file", {"path": seen[0]})]
        return [("bash", {"command": f"run {len(results)}"})]

    tools = [bash_tool(), Tool("read_file", {"type": "object", "properties": {"path": {"type": "string"}}},
                               read_file, reducible=False)]
    with ChatServer(model) as srv:
        live = runner(tmp_path, srv.url, tools=tools)
        result = live.run("Run it and keep the first output.")
    assert result.stop == "answered" and result.answer == "recovered"
    assert len(read) == 1
    path = Path(read[0])
    assert path.is_absolute() and path.parent == (result.session_dir / "reduced-artifacts").resolve()
    assert path.read_text(encoding="utf-8") == big
    answered = live.session.messages[-2].tool_results  # the read_file result, as committed
    assert answered and answered[0].text == big
    assert not any("<session_dir>" in json.dumps(b) for b in srv.bodies)
    reduced = [d for p in result.preparations for s in p.stages for d in s.decisions
               if getattr(d, "artifact_path", None)]
    assert reduced and all(str(getattr(d, "artifact_path", "")).startswith("<session_dir>/reduced-artifacts/")
                           for d in reduced)
    request = live.requests[result.preparations[-1].preparation_id]
    assert any("Full output saved to <session_dir>/reduced-artifacts/" in m.text for m in request.messages)


class SharedSource:
    """One context source for every session: answers from the scope alone (no per-call state)."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    async def collect(self, scope: ContextBuildScope) -> ContextSnapshot:
        import asyncio

        with self.lock:
            self.scopes.append((scope.session_id, scope.step_index))
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        # a real source awaits I/O; at step 0 each session waits (up to 5 s) for the other's
        # call to arrive, so the two sessions are inside collect at the same time
        for _ in range(500):
            with self.lock:
                both = sum(k == 0 for _, k in self.scopes) >= 2
            if scope.step_index > 0 or both:
                break
            await asyncio.sleep(0.01)
        with self.lock:
            self.in_flight -= 1
        return ContextSnapshot(contributions=(
            ContextContribution(key="scope", text=f"session={scope.session_id} step={scope.step_index}"),))


def test_r_run_1_two_sessions_share_one_context_source_from_two_threads(tmp_path: Path) -> None:
    """R-RUN-1, R-DYN-1: two runners in two threads bind the same source; each step gets the
    snapshot of its own session and step, and each session file records only its own."""
    source = SharedSource()
    results: dict[str, RunResult] = {}
    with ChatServer(PerSession(calls=4)) as srv:
        runners = [runner(tmp_path, srv.url, context_source=source, session_id=f"s{i}")
                   for i in range(2)]

        def go(i: int) -> None:
            results[f"s{i}"] = runners[i].run(f"Session {i}: run the job four times.")

        threads = [threading.Thread(target=go, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    assert sorted(results) == ["s0", "s1"]
    assert all(r.stop == "answered" for r in results.values())
    assert sorted(source.scopes) == [(s, k) for s in ("s0", "s1") for k in range(5)]
    assert source.most_in_flight == 2  # both sessions were inside the one source at once
    for i in range(2):
        bodies = [b for b in srv.bodies if f"Session {i}:" in all_text(b)]
        assert len(bodies) == 5
        for k, body in enumerate(bodies):
            assert f"session=s{i} step={k}" in all_text(body)
            assert f"session=s{1 - i}" not in all_text(body)
        session = load_session(results[f"s{i}"].session_path).session
        assert [s.step_index for s in session.context_snapshots] == list(range(5))
        assert all(s.contributions[0].text.startswith(f"session=s{i} ") for s in session.context_snapshots)


def test_r_run_1_runner_from_a_config_file(tmp_path: Path) -> None:
    """R-RUN-1: ``from_config_file`` reads endpoint, engine and static context relative to the
    file; the static system context is the first message the model gets."""
    (tmp_path / "context.yaml").write_text(
        "system:\n  slots:\n    - {name: role, content: You are a careful build agent.}\n")
    (tmp_path / "engine.yaml").write_text("compaction:\n  input_budget_tokens: 6000\n  summary_ratio: 0.12\n")
    with ChatServer(PerSession(calls=1)) as srv:
        (tmp_path / "runner.yaml").write_text(
            f"endpoint:\n  base_url: {srv.url}\n  model: scripted-model\nmax_steps: 5\n"
            "sessions_dir: runs\ncontext: context.yaml\nengine: engine.yaml\n")
        live = AgentRunner.from_config_file(tmp_path / "runner.yaml", tools=[bash_tool()])
        result = live.run("Run it once.")
    assert result.stop == "answered"
    assert result.session_dir.parent == tmp_path / "runs"
    first = srv.bodies[0]["messages"][0]
    assert first["role"] == "system" and "You are a careful build agent." in first["content"]
    assert result.preparations[0].input_budget == 6000
    names = [t["function"]["name"] for t in srv.bodies[0]["tools"]]
    assert names == ["bash", "context_read", "context_search"]


def test_r_run_1_the_step_limit_stops_a_run(tmp_path: Path) -> None:
    """R-RUN-1: a model that never stops calling tools is stopped after ``max_steps`` calls."""
    with ChatServer(PerSession(calls=100)) as srv:
        config = {"endpoint": {"base_url": srv.url, "model": "m"}, "max_steps": 3,
                  "sessions_dir": str(tmp_path / "s")}
        result = AgentRunner.from_config(config, tools=[bash_tool()]).run("Go.")
    assert result.stop == "step_limit" and result.answer is None
    assert len(srv.bodies) == len(result.preparations) == 3


def test_r_run_1_a_failed_model_call_ends_the_run_and_keeps_the_session(tmp_path: Path) -> None:
    """R-RUN-1: an endpoint error ends the run with the error named; what happened is on disk."""
    def broken(body: dict[str, Any]) -> Any:
        raise RuntimeError("model down")

    with ChatServer(broken) as srv:
        result = runner(tmp_path, srv.url).run("Hello?")
    assert result.stop == "failed"
    assert result.error is not None and "HTTP 500" in result.error and "/chat/completions" in result.error
    assert "after 3 attempt(s)" in result.error and len(srv.bodies) == 3
    session = load_session(result.session_path).session
    assert [m.text for m in session.messages] == ["Hello?"]
    assert len(result.preparations) == 1


def test_r_run_1_the_endpoints_model_can_write_the_checkpoints(tmp_path: Path) -> None:
    """R-RUN-1, R-TOK-6: with ``summariser: endpoint`` the live compaction's summary comes from the
    same endpoint through the summary client; its usage is counted apart from the main calls."""
    steps = PerSession(calls=12)

    def model(body: dict[str, Any]) -> Any:
        return GOOD if "tools" not in body else steps(body)  # a summary request offers no tools

    with ChatServer(model) as srv:
        config = {"endpoint": {"base_url": srv.url, "model": "scripted-model"},
                  "sessions_dir": str(tmp_path / "s"), "engine": ENGINE, "summariser": "endpoint"}
        live = AgentRunner.from_config(config, tools=[bash_tool()])
        result = live.run("Session 3: run the job twelve times.")
    assert result.stop == "answered" and result.compactions >= 1
    summaries = [b for b in srv.bodies if "tools" not in b]
    usage = live.run_usage
    assert usage.compaction.calls == len(summaries) >= 1 and usage.compaction.input_tokens > 0
    assert usage.main.calls == len(result.preparations) == len(srv.bodies) - len(summaries)
    checkpoint = live.session.messages[live.session.compactions[0].at_message].text
    assert "Concrete content for" in checkpoint


def test_r_run_1_sink_events_and_cancel(tmp_path: Path) -> None:
    """R-RUN-1, R-PREP-5: the sink gets every preparation with its request, subscribers one
    ``context.preparation`` event per step; the host's cancel ends the run with a cancelled
    preparation and no model call for that step."""
    sink, events = ListSink(), list[PreparationEvent]()
    with ChatServer(PerSession(calls=10)) as srv:
        live = runner(tmp_path, srv.url, sink=sink, on_event=events.append,
                      cancel=lambda: len(srv.bodies) >= 3)
        result = live.run("Session 7: go on until stopped.")
    assert result.stop == "cancelled"
    assert len(srv.bodies) == 3
    assert [p.phase for p in result.preparations] == ["ready"] * 3 + ["cancelled"]
    assert [p.preparation_id for p, _ in sink.saved] == [p.preparation_id for p in result.preparations]
    assert all(r is not None for _, r in sink.saved[:3]) and sink.saved[3][1] is None
    assert [e.step_index for e in events] == [0, 1, 2, 3]
    assert result.preparations[0].final_request_ref == result.preparations[0].preparation_id


def test_r_run_1_a_transient_endpoint_error_is_tried_again(tmp_path: Path) -> None:
    """R-RUN-1, R-BOUND-1: an HTTP 500 is retried within the call's deadline and the run goes on;
    the step is prepared once and recorded once."""
    failed: list[int] = []

    def flaky(body: dict[str, Any]) -> Any:
        if not failed:
            failed.append(1)
            raise RuntimeError("overloaded")
        return "fine"

    with ChatServer(flaky) as srv:
        result = runner(tmp_path, srv.url).run("Hello?")
    assert result.stop == "answered" and result.answer == "fine"
    assert len(srv.bodies) == 2 and srv.bodies[0] == srv.bodies[1]
    assert len(result.preparations) == 1


@pytest.mark.parametrize("step", [Step(trickle=0.2), Step(huge=40_000_000)], ids=["trickle", "huge"])
def test_r_run_1_a_hostile_endpoint_cannot_hold_a_step(tmp_path: Path, step: Step) -> None:
    """R-RUN-1, R-BOUND-1: an endpoint that trickles its answer a byte at a time fails the call at
    the deadline, and an answer past ``max_answer_bytes`` is refused unread; the run ends failed."""
    with ScriptedServer([step]) as srv:
        config = {"endpoint": {"base_url": srv.url, "model": "m", "timeout_seconds": 1.5,
                               "max_answer_bytes": 1_000_000},
                  "sessions_dir": str(tmp_path / "s")}
        start = time.monotonic()
        result = AgentRunner.from_config(config).run("Hello?")
        spent = time.monotonic() - start
    assert result.stop == "failed" and result.error is not None
    assert ("within 1.5 s" in result.error) if step.trickle else ("too large" in result.error)
    assert spent < 5


@pytest.mark.parametrize("bad", ["../escape", ".hidden", "a/b", ""])
def test_r_run_1_a_session_id_that_is_no_folder_name_is_refused(tmp_path: Path, bad: str) -> None:
    """R-RUN-1: the session id names the session folder; one that could leave it is refused."""
    config = {"endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"},
              "sessions_dir": str(tmp_path / "s")}
    if not bad:  # empty: a generated id is used
        assert AgentRunner.from_config(config, session_id=bad).session_id.startswith("live-")
        return
    with pytest.raises(ConfigError, match="session id"):
        AgentRunner.from_config(config, session_id=bad)
    assert not (tmp_path / "escape").exists()


@pytest.mark.parametrize(("text", "field", "line"), [
    ("endpoint:\n  base_url: http://x/v1\n  model: m\nmax_steps: 0\n", "max_steps", 4),
    ("endpont:\n  base_url: http://x/v1\n", "endpont", 1),
    ("endpoint:\n  base_url: http://x/v1\n  model: m\nengine:\n  compaction:\n    keep_recent_ratio: 2\n",
     "engine.compaction.keep_recent_ratio", 6),
])
def test_r_run_1_a_bad_runner_file_names_file_line_and_field(tmp_path: Path, text: str, field: str,
                                                     line: int) -> None:
    """R-RUN-1: a bad runner file is a ConfigError naming the file, the line and the field."""
    path = tmp_path / "runner.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        AgentRunner.from_config_file(path)
    assert caught.value.path == str(path)
    assert caught.value.field == field
    assert caught.value.line == line


def test_r_run_1_template_renderer_and_msg_are_the_builders_own() -> None:
    """R-RUN-1 (seed names): ContextBuilder.build returns Msg messages; TemplateRenderer renders
    plain text (a template that writes XML escapes values itself)."""
    built = ContextBuilder().build(parse_context_build_input(
        "system:\n  slots:\n    - {name: role, content: 'a < b'}\n", base_dir=Path.cwd()))
    assert all(isinstance(m, Msg) for m in built.messages)
    assert built.system.role == "system"
    renderer = TemplateRenderer()
    assert renderer.render("{{ x }}|{{ x | e }}", {"x": "<tag>"}) == "<tag>|&lt;tag&gt;"


def test_r_run_1_the_readme_runner_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R-RUN-1: the README's ten-line runner example runs as written against a local endpoint
    (its read_file tool really reads the file the scripted model asks for)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- runner-example -->")[1].split("<!-- /runner-example -->")[0]
    code = block.split("```python\n")[1].split("```")[0]
    assert len([line for line in code.splitlines() if line.strip()]) == 10
    (tmp_path / "pytest.log").write_text("E   fixture 'db' not found\n", encoding="utf-8")

    def model(body: dict[str, Any]) -> Any:
        return [("read_file", {"path": "pytest.log"})] if not tool_results(body) else "a missing fixture"

    with ChatServer(model) as srv:
        (tmp_path / "runner.yaml").write_text(
            f"endpoint: {{base_url: '{srv.url}', model: m}}\nsessions_dir: sessions\n")
        monkeypatch.chdir(tmp_path)
        scope: dict[str, Any] = {}
        exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 -- the documented example itself
    result: RunResult = scope["result"]
    assert result.stop == "answered" and result.answer == "a missing fixture"
    assert tool_results(srv.bodies[1]) == ["E   fixture 'db' not found\n"]
    assert "This is step 1." in all_text(srv.bodies[1])
    assert load_session(result.session_path).session.messages[-1].text == "a missing fixture"


def test_r_run_1_the_workbench_opens_a_live_session_like_any_transcript(tmp_path: Path) -> None:
    """R-RUN-1: a live session imported into the store replays and opens on the Compaction page
    (AppTest) with the replay's compaction, like any imported transcript."""
    from streamlit.testing.v1 import AppTest

    from workbench.services.replay import replay_and_save
    from workbench.storage.store import open_store

    with ChatServer(PerSession(calls=12)) as srv:
        result = runner(tmp_path, srv.url).run("Run the job twelve times and report.")
    with open_store() as store:
        outcome = store.import_file(result.session_path)
        assert outcome.created and outcome.format == "native"
        info, _ = replay_and_save(store, outcome.session_id, name="live budget",
                                  config=parse_config(ENGINE))
    app = Path(__file__).resolve().parents[2] / "workbench" / "ui" / "app.py"
    at = AppTest.from_file(str(app), default_timeout=90).run()
    at.switch_page("../pages/compaction.py").run()
    assert not at.exception, at.exception
    assert at.session_state["wb_replay"] == info.id
    attempts = at.dataframe[2].value
    assert "applied" in set(attempts["outcome"])


class BrokenSource:
    async def collect(self, scope: ContextBuildScope) -> ContextSnapshot:
        raise OSError("the ticket service is down")


def test_r_run_1_a_failing_context_source_fails_the_step_not_the_host(tmp_path: Path) -> None:
    """R-RUN-1, R-PREP-3: a source that raises fails that step's assembly (recorded, with the
    error); the run ends failed without calling the model and run() does not raise."""
    with ChatServer(PerSession(calls=1)) as srv:
        result = runner(tmp_path, srv.url, context_source=BrokenSource()).run("Hello?")
    assert result.stop == "failed" and not srv.bodies
    p = result.preparations[0]
    assert p.phase == "failed" and p.error is not None and p.error.stage == "assembly"
    assert "ticket service is down" in p.error.message
    assert result.error is not None and "ticket service is down" in result.error


def _tick(ticks: Iterator[int]) -> datetime:
    return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=next(ticks))


def test_r_run_1_a_live_run_is_deterministic_with_an_injected_clock_and_id(tmp_path: Path) -> None:
    """R-RUN-1, R-PREP-6: the same scripted model, tools, clock and session id give byte-identical
    session and preparation files, wherever the sessions folder is (records name <session_dir>)."""
    files: list[tuple[bytes, bytes]] = []
    for folder in ("a", "b"):
        ticks = iter(range(10_000))
        clock = functools.partial(_tick, ticks)

        with ChatServer(PerSession(calls=12)) as srv:
            config = {"endpoint": {"base_url": srv.url, "model": "m"}, "engine": ENGINE,
                      "sessions_dir": str(tmp_path / folder)}
            result = AgentRunner.from_config(config, tools=[bash_tool()], clock=clock,
                                             session_id="same").run("Run it twelve times.")
        assert result.compactions >= 1
        files.append((result.session_path.read_bytes(),
                      (result.session_dir / PREPARATIONS_FILE).read_bytes()))
    assert files[0] == files[1]


class RunInput:
    """A source that shows the run's input and run id (from the scope) as its contribution."""

    async def collect(self, scope: ContextBuildScope) -> ContextSnapshot:
        return ContextSnapshot(contributions=(ContextContribution(
            key="run", text=f"{scope.run_id} input={scope.run_input}"),))


def test_r_run_1_a_second_turn_is_a_new_run_of_the_same_session(tmp_path: Path) -> None:
    """R-RUN-1, R-DYN-1: ``run`` again continues the session: a new run id, the source's scope
    carries the new user input, step indices go on, and the file holds both turns."""
    def model(body: dict[str, Any]) -> Any:  # one tool call per turn, then the answer
        return "answer" if body["messages"][-1]["role"] == "tool" else [("bash", {"command": "run 1"})]

    with ChatServer(model) as srv:
        live = runner(tmp_path, srv.url, context_source=RunInput(), session_id="turns")
        first = live.run("First question.")
        second = live.run("Second question.")
    assert (first.run_id, second.run_id) == ("turns:run-0", "turns:run-1")
    assert [p.step_index for p in second.preparations] == [2, 3]
    assert "turns:run-1 input=Second question." in all_text(srv.bodies[2])
    assert all(p.run_id == "turns:run-1" for p in second.preparations)
    session = load_session(second.session_path).session
    assert [m.text for m in session.messages if m.role == "user"] == [
        "First question.", "Second question."]
    assert len(session.index.batches) == 4
