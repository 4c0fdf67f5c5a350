"""The agent profiles on real transcripts (R-TWIN-3, R-TWIN-4): the Claude Code profile compacts
at the agent's own compaction (an automatic one at 167,731 tokens, a manual /compact at 142,431)
and its first request after it is within 15 % of the agent's, with the agent's summary; the Codex
profile's budget comes from the rollout and is never below a prompt the agent sent. Skipped when
../shared/real-sessions is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.replay import replay

from workbench.cli import main
from workbench.importers import load_session
from workbench.services.presets import load_preset
from workbench.services.summarisers import make_summariser

CLAUDE = {"8463c716-a2ea-4c14-9efa-87158ebd9f20": "auto",
          "ae4a77f8-aedd-4bc1-888f-c94edc91af04": "manual"}
CODEX = "rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"


def _summary(path: Path, preset: str, out: Path, *extra: str) -> dict:
    assert main(["replay", str(path), "--config", preset, *extra, "--summary-json",
                 str(out)]) == 0
    return json.loads(out.read_text("utf-8"))


@pytest.mark.parametrize("name", sorted(CLAUDE))
def test_r_twin_3_claude_code_profile_compacts_where_the_agent_did(real_sessions, tmp_path, name):
    """R-TWIN-3 / R-TWIN-4: same step (±1) as every recorded compaction, the same trigger, and
    a first request after it within 15 % of the agent's (the agent's summary, used as written)."""
    path = real_sessions / "claude_code" / f"{name}.jsonl.gz"
    if not path.is_file():
        pytest.skip(f"{path.name} absent")
    data = _summary(path, "claude-code", tmp_path / "s.json", "--summariser", "recorded")
    (agent,) = data["recorded_compactions"]
    assert agent["trigger"] == CLAUDE[name]
    (own,) = data["compactions"]
    assert abs(own["step"] - agent["step"]) <= 1 and own["trigger"] == agent["trigger"]
    assert abs(own["tokens_after"] - agent["tokens_after"]) <= 0.15 * agent["tokens_after"]
    assert (data["input_budget"], data["pressure_line"]) == (200000, 167000)


def test_r_twin_4_real_replay_says_it_used_the_agents_own_summary(real_sessions):
    """R-TWIN-4: at the agent's automatic compaction (message 160, step 71) the record names the
    agent's summary as the output of the compaction being replayed, and the checkpoint is it."""
    path = real_sessions / "claude_code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"
    if not path.is_file():
        pytest.skip(f"{path.name} absent")
    session = load_session(path).session
    result = replay(session, load_preset("claude-code"),
                    summariser=make_summariser("recorded", session))
    (applied,) = result.checkpoints
    assert applied.checkpoint_text.startswith("This session is being continued")
    reasons = [d.reason for s in result.preparations[applied.step_index].stages
               for d in s.decisions if d.kind == "compaction-candidate"]
    assert any("the agent's own summary of its compaction at step 71" in r for r in reasons)


def test_r_twin_3_codex_budget_comes_from_the_rollout_and_covers_every_prompt(real_sessions,
                                                                              tmp_path):
    """R-TWIN-3: budget 258,400 (the recorded model_context_window, no output reservation),
    line 244,800 (90 % of 272,000); never below a prompt the agent sent; the agent did not
    compact, nor does the profile."""
    path = real_sessions / "codex_rollout" / CODEX
    if not path.is_file():
        pytest.skip(f"{CODEX} absent")
    session = load_session(path).session
    largest = max(m.usage.prompt_tokens for m in session.messages if m.usage is not None)
    data = _summary(path, "codex", tmp_path / "s.json")
    assert (data["input_budget"], data["pressure_line"]) == (258400, 244800)
    assert data["input_budget"] >= largest
    assert data["compactions"] == [] and data["recorded_compactions"] == []
