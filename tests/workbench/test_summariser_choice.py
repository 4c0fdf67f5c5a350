"""``--summariser``/``--prompts`` on ``workbench replay`` and ``workbench report``, and the
Configuration page's "Replay and save" with the remote summariser (R-PREP-7, R-UI-9, R-UI-6),
against a real local OpenAI-compatible server scripted per scenario."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from iris.prompts import default_template_source
from store_helpers import copy_store
from streamlit.testing.v1 import AppTest
from summary_server import ScriptedServer, Step

from workbench.services.presets import preset_text
from workbench.storage.store import open_store

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "sample_sessions" / "long_session.jsonl"
ENDPOINT = ("WORKBENCH_SUMMARY_BASE_URL", "WORKBENCH_SUMMARY_MODEL", "WORKBENCH_SUMMARY_API_KEY")


@pytest.fixture
def budget_config(tmp_path) -> Path:
    """The long sample compacts from step 55 on under a 96k budget; 2 s per summary call."""
    path = tmp_path / "budget.yaml"
    path.write_text("compaction:\n  input_budget_tokens: 96000\n  timeout_seconds: 2\n")
    return path


def _cli(*args: str, home: Path, url: str | None, timeout: float = 240):
    env = {k: v for k, v in os.environ.items() if k not in ENDPOINT}
    env.update(WORKBENCH_HOME=str(home))
    if url is not None:
        env.update(WORKBENCH_SUMMARY_BASE_URL=url, WORKBENCH_SUMMARY_MODEL="local-model")
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True,
                         text=True, env=env, timeout=timeout, check=False)
    return out, time.monotonic() - started


def test_r_prep_7_dead_endpoint_replay_ends_in_bounded_time_and_records_each_step(
        workbench_home, budget_config):
    """R-PREP-7: against an endpoint that always answers 500 the breaker opens after two failed
    summary calls; every later step that needed a summary is failed with "circuit open" without a
    call, the summary usage counts the calls, attempts and refusals, and the replay stays fast."""
    with ScriptedServer([Step(500, "upstream exploded")]) as srv:
        out, seconds = _cli("replay", str(LONG), "--config", str(budget_config),
                            "--summariser", "remote", "--json", str(workbench_home / "p.jsonl"),
                            home=workbench_home, url=srv.url)
        calls = srv.calls
    assert out.returncode == 2, out.stderr  # R-TWIN-9: a replay with failed steps exits 2
    assert 2 <= calls <= 8 and seconds < 60
    import json
    preps = [json.loads(line) for line in (workbench_home / "p.jsonl").read_text().splitlines()]
    failed = [p for p in preps if p["phase"] == "failed"]
    assert len(failed) >= 5
    assert all("HTTP 500" in p["error"]["message"] for p in failed[:2])
    assert all("circuit open" in p["error"]["message"] for p in failed[2:])
    line = next(x for x in out.stdout.splitlines() if "summary calls" in x)
    assert line.startswith("  summary calls: 2 (")
    assert f"{calls} attempts, 2 failed, {len(failed) - 2} refused by the open circuit breaker" in line


def test_r_prep_7_remote_replay_counts_usage_and_a_second_run_is_served_by_the_cache(
        workbench_home, budget_config):
    """R-PREP-7: a working endpoint writes the summaries; their tokens are counted; the same replay
    run again (a new process) sends nothing: the answers come from the summary cache on disk."""
    with ScriptedServer([Step()]) as srv:
        first, _ = _cli("replay", str(LONG), "--config", str(budget_config), "--summariser",
                        "remote", home=workbench_home, url=srv.url)
        sent = srv.calls
        second, _ = _cli("replay", str(LONG), "--config", str(budget_config), "--summariser",
                         "remote", home=workbench_home, url=srv.url)
        assert srv.calls == sent
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert sent >= 1
    assert f"summary calls: {sent} ({sent} attempts); {1200 * sent:,} input / {80 * sent:,} output" \
        in first.stdout
    assert f"summary calls: 0 ({sent} from the summary cache); 0 input" in second.stdout
    assert len(list((workbench_home / "summary-cache").glob("*.json"))) == sent
    applied = [x for x in first.stdout.splitlines() if "compactions applied" in x]
    assert applied == [x for x in second.stdout.splitlines() if "compactions applied" in x]


def test_r_prm_3_prompts_dir_templates_reach_the_endpoint(workbench_home, budget_config, tmp_path):
    """R-PRM-3: ``--prompts DIR`` replaces the compaction template the endpoint receives."""
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "compaction.j2").write_text("EDITED-TEMPLATE-MARKER\n"
                                           + default_template_source("compaction"))
    with ScriptedServer([Step()]) as srv:
        out, _ = _cli("replay", str(LONG), "--config", str(budget_config), "--summariser",
                      "remote", "--prompts", str(prompts), home=workbench_home, url=srv.url)
        assert out.returncode == 0, out.stderr
        assert srv.bodies and srv.bodies[0]["messages"][0]["content"].startswith(
            "EDITED-TEMPLATE-MARKER")


@pytest.mark.parametrize(("args", "message"), [
    (("--summariser", "remote"), "--summariser remote needs WORKBENCH_SUMMARY_BASE_URL"),
    (("--prompts", "/nonexistent/prompts"), "--prompts /nonexistent/prompts: not a folder"),
    (("--summariser", "recorded"), "holds no recorded compaction summary"),
])
def test_bad_summariser_options_are_one_line_errors(workbench_home, args, message):
    out, _ = _cli("replay", str(LONG), *args, home=workbench_home, url=None)
    assert out.returncode == 1 and message in out.stderr
    assert "Traceback" not in out.stderr + out.stdout


def test_r_ui_9_report_takes_the_remote_summariser(workbench_home, budget_config):
    """R-UI-9: ``workbench report --summariser remote`` replays with the endpoint."""
    target = workbench_home / "r.html"
    with ScriptedServer([Step()]) as srv:
        out, _ = _cli("report", str(LONG), "--config", str(budget_config), "--summariser",
                      "remote", "--out", str(target), home=workbench_home, url=srv.url)
        assert out.returncode == 0, out.stderr
        assert srv.calls >= 1
    assert target.stat().st_size > 10_000


def test_r_ui_6_configuration_replay_and_save_with_the_remote_summariser(
        workbench_home, long_store, monkeypatch):
    """R-UI-6/R-PREP-7: the Configuration page offers the configured endpoint; "Replay and save"
    then has the endpoint write the summaries and the saved replay says it was remote."""
    copy_store(long_store, workbench_home)
    with ScriptedServer([Step()]) as srv:
        monkeypatch.setenv("WORKBENCH_SUMMARY_BASE_URL", srv.url)
        monkeypatch.setenv("WORKBENCH_SUMMARY_MODEL", "local-model")
        at = AppTest.from_file(str(ROOT / "workbench" / "ui" / "app.py"), default_timeout=180).run()
        at = at.switch_page("../pages/configuration.py").run()
        radio = at.radio(key="cfg_summariser")
        assert list(radio.options)[-1].startswith("remote")
        radio.set_value("remote").run()
        at.text_area(key="cfg_yaml").input(preset_text("cost-first")).run()
        at.text_input(key="cfg_replay_name").input("remote run").run()
        at.button(key="cfg_replay").click().run()
        assert not at.exception and srv.calls >= 1
        assert "saved" in at.success[-1].value
    with open_store() as store:
        session_id = store.list_sessions()[0].id
        saved = [r for r in store.replays.list(session_id) if r.name == "remote run"]
    assert saved and saved[0].summariser == "remote"


def test_r_tok_6_summary_usage_table_shows_attempts_failures_refusals_and_cache_hits():
    """R-TOK-6: the summary row carries the client's counters next to its tokens."""
    from iris.compaction.usage import RunUsage

    from workbench.views.usage import summary_usage_table

    table = summary_usage_table(RunUsage.model_validate({"main": {"calls": 5}, "compaction": {
        "calls": 2, "attempts": 7, "failures": 2, "refused": 40, "cache_hits": 3,
        "input_tokens": 900}}))
    row = table.iloc[1]
    assert (row["attempts"], row["failures"], row["refused"], row["cache_hits"]) == (7, 2, 40, 3)
    assert table.iloc[0]["attempts"] == 0


def test_r_prep_7_recorded_summariser_on_a_real_session(workbench_home, real_sessions, tmp_path):
    """R-PREP-7: ``--summariser recorded`` on a real Claude Code session with a recorded compaction
    replays without a network call and says which summariser wrote the checkpoints."""
    source = real_sessions / "claude_code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"
    config = tmp_path / "c.yaml"
    config.write_text("compaction:\n  input_budget_tokens: 96000\n")
    out, _ = _cli("replay", str(source), "--config", str(config), "--summariser", "recorded",
                  "--json", str(tmp_path / "p.jsonl"), home=workbench_home, url=None)
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "p.jsonl").read_text()
    assert "compactions applied: 0" not in out.stdout
    assert "recorded summary" in text or "no recorded summary was written before" in text
