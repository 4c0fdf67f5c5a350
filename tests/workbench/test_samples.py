"""The bundled sample sessions (R-SES-1/2 content, R-TOK-4 missing usage, R-DYN
snapshots) have the properties the docs promise, and the seeded generator rebuilds them byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from iris.session import Session, ToolCallBlock
from iris.tokens import default_estimator

from workbench.importers import load_session

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
NAMES = ("bugfix", "long_session", "unanswered")


@pytest.fixture(scope="module")
def samples() -> dict[str, Session]:
    return {n: load_session(SAMPLES / f"{n}.jsonl").session for n in NAMES}


def _calls(session: Session) -> list[ToolCallBlock]:
    return [b for m in session.messages for b in m.tool_calls]


def _result_texts(session: Session) -> list[tuple[str, bool]]:
    return [(b.text, b.is_error) for m in session.messages for b in m.tool_results]


def test_r_ses_1_bugfix_has_the_promised_tool_work(samples):
    s = samples["bugfix"]
    assert len(s.messages) >= 80
    names = Counter(c.name for c in _calls(s))
    assert {"Read", "Edit", "Write", "Bash", "Grep", "Glob", "TodoWrite"} <= set(names)
    reads = Counter(c.arguments["file_path"] for c in _calls(s) if c.name == "Read")
    edited = {c.arguments["file_path"] for c in _calls(s) if c.name in ("Edit", "Write")}
    assert any(n >= 2 for n in reads.values()), "some file is re-read"
    assert set(reads) & edited, "some file that was read is later edited"
    results = _result_texts(s)
    fail = next(i for i, (t, err) in enumerate(results) if err and "AssertionError" in t and "FAILED" in t)
    assert any("passed" in t and not err for t, err in results[fail:]), "a passing run after the failing one"
    assert any(t.startswith("diff --git") for t, _ in results)
    assert any(t.startswith("{") and isinstance(json.loads(t), dict) for t, _ in results)
    assert any(":" in t and t.split(":")[1].isdigit() for t, _ in results), "grep path:line:text output"
    assert any("\n     2\t" in t for t, _ in results), "numbered Read output"
    assert sum(err for _, err in results) >= 3
    assert any(len(b.call_ids) >= 2 for b in s.index.batches), "parallel tool calls"
    assert any(m.role == "user" and m.text.startswith("yes") for m in s.messages), "a confirmation"


def test_r_ses_2_bugfix_usage_on_every_response_anthropic_style(samples):
    s = samples["bugfix"]
    assistants = [m for m in s.messages if m.role == "assistant"]
    assert all(m.usage is not None and m.usage.is_trusted for m in assistants)
    prompts = [m.usage.prompt_tokens for m in assistants]
    assert prompts == sorted(prompts) and prompts[0] > 10_000  # system prompt + tools, then growth
    u = assistants[-1].usage
    assert u.raw["cache_read_input_tokens"] == u.cache_read_tokens and not u.cache_read_in_input
    assert u.prompt_tokens == u.input_tokens + u.cache_read_tokens + u.cache_write_tokens
    assert s.header.limits.context == 200_000 and s.header.limits.output == 64_000
    assert s.header.model.startswith("claude-")


def test_r_tok_4_long_session_crosses_the_pressure_line_several_times(samples):
    s = samples["long_session"]
    est = default_estimator()
    tool_tokens = sum(est.count(b.text) for m in s.messages for b in m.tool_results)
    assert tool_tokens >= 300_000
    assert tool_tokens >= 3 * (96_000 * 8 // 10)  # pressure line of a 96,000 budget, crossed ≥ 3 times
    assistants = [m for m in s.messages if m.role == "assistant"]
    missing = [m for m in assistants if m.usage is None]
    assert 0 < len(missing) < len(assistants) // 3
    (switch,) = s.model_switches
    assert {m.model for m in assistants[:3]} == {s.header.model} != {switch.model}
    assert s.messages[-1].model == switch.model
    assert len(s.context_snapshots) >= 2
    contributions = [c for snap in s.context_snapshots for c in snap.contributions]
    assert {c.required for c in contributions} == {True, False}


def test_r_ses_1_unanswered_last_call(samples):
    s = samples["unanswered"]
    last = s.messages[-1]
    assert last.role == "assistant" and last.tool_calls
    assert s.index.unanswered_calls == (last.tool_calls[-1].id,)
    assert len(s.messages) < 10


def test_samples_readme_names_every_sample():
    readme = (SAMPLES / "README.md").read_text()
    for name in NAMES:
        assert f"`{name}.jsonl`" in readme


@pytest.mark.slow  # starts a process
def test_r_ses_3_generator_is_deterministic(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_samples.py"), str(tmp_path)],
                   check=True, capture_output=True, timeout=120)
    for name in NAMES:
        assert (tmp_path / f"{name}.jsonl").read_bytes() == (SAMPLES / f"{name}.jsonl").read_bytes(), name
