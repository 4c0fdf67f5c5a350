"""The codex profile's rule by Codex version and model, and the count Codex compares with it
(R-TWIN-3, R-TWIN-7): codex-rs compacts when ``ContextManager::get_total_token_usage`` (the last
response's input + output, its estimate of the earlier turns' encrypted reasoning and of the items
since the last model output) reaches 90 % of the model's full window. gpt-5.3-codex-spark has a
128,000 window (115,200); the GPT-5 models 272,000 (244,800); any other model the generic row,
said so. A rollout that no longer records the reasoning's ``encrypted_content`` is counted with
the reasoning tokens the provider reported for that response. The real-rollout test reads
../shared/corpus and is skipped when it is absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from iris.compaction.agent_rules import resolve_agent_rule
from iris.compaction.codex_count import earlier_reasoning_tokens, response_reasoning_tokens
from iris.replay import replay
from iris.session import Message, TextBlock, ThinkingBlock, Usage

from workbench.analysis.replay_report import replay_report
from workbench.importers import load_session
from workbench.services.presets import load_preset
from workbench.services.summarisers import make_summariser

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "codex_rollout"


def test_r_twin_7_codex_rule_by_version_and_model():
    """R-TWIN-7: the most specific model row wins (spark before the GPT-5 family); a model no row
    names gets the generic row and the note says so; a version outside the ranges the nearest
    row; Claude Code notes gain nothing (its rows are for every model)."""
    gpt = resolve_agent_rule("codex", "0.142.4", "gpt-5.5")
    assert gpt.exact and gpt.rule.model == "gpt-5*" and "244,800" in gpt.rule.source
    assert gpt.note == "agent rule Codex CLI 0.40–0.142, gpt-5 (version 0.142.4 recorded)"
    spark = resolve_agent_rule("codex", "0.142.0", "gpt-5.3-codex-spark")
    assert spark.rule.model == "gpt-5.3-codex-spark*" and "115,200" in spark.rule.source
    assert spark.rule.fields["threshold"] == 0.9
    other = resolve_agent_rule("codex", "0.141.0", "o3")
    assert other.rule.model == "*"
    assert other.note.endswith("model o3 has no rule of its own: the agent's generic rule is used")
    old = resolve_agent_rule("codex", "0.20.0", "gpt-5.3-codex-spark")
    assert not old.exact and old.rule.model == "gpt-5.3-codex-spark*"
    assert "version 0.20.0 is outside the documented ranges" in old.note
    claude = resolve_agent_rule("claude-code", "2.1.39", "claude-opus-4-6")
    assert claude.note == "agent rule Claude Code 2.1.21 and later (version 2.1.39 recorded)"


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-06-30T08:00:00.000Z", "type": kind, "payload": payload})


def _usage(prompt: int, output: int, reasoning: int) -> dict[str, int]:
    return {"input_tokens": prompt, "cached_input_tokens": 0, "output_tokens": output,
            "reasoning_output_tokens": reasoning, "total_tokens": prompt + output}


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _rollout(path: Path, *, model: str, window: int, prompts: list[int], reasoning: int,
             compact_at: int | None) -> Path:
    """One turn a call: a user message (about 12,000 tokens, what each prompt grows by), a
    reasoning item recorded without ``encrypted_content`` (as the 0.141–0.142 rollouts of
    ../shared/corpus), a function call and its output."""
    lines = [_line("session_meta", {"id": f"cx-{model}", "cli_version": "0.142.4",
                                    "timestamp": "2026-06-30T08:00:00.000Z"}),
             _line("turn_context", {"model": model, "cwd": "/w"}),
             _line("event_msg", {"type": "task_started", "model_context_window": window})]
    total = 0
    for k, prompt in enumerate(prompts):
        if k == compact_at:
            history = [_user(f"task {j}") for j in range(k)] + [_user("SUMMARY")]
            lines += [_line("compacted", {"message": "", "replacement_history": history}),
                      _line("event_msg", {"type": "context_compacted"})]
        lines += [_line("response_item", _user(f"task {k}" + " gamma" * 12000)),
                  _line("event_msg", {"type": "user_message", "message": f"task {k}"}),
                  _line("response_item", {"type": "reasoning", "id": f"rs_{k}", "summary": []}),
                  _line("response_item", {"type": "function_call", "name": "exec_command",
                                          "arguments": json.dumps({"cmd": f"make t{k}"}),
                                          "call_id": f"call_{k}"})]
        total += prompt + 100
        lines += [_line("event_msg", {"type": "token_count", "info": {
                      "total_token_usage": _usage(total, 0, 0),
                      "last_token_usage": _usage(prompt, 100, reasoning),
                      "model_context_window": window}}),
                  _line("response_item", {"type": "function_call_output",
                                          "call_id": f"call_{k}", "output": "ok"})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_r_twin_3_codex_count_stands_in_the_reported_reasoning_tokens():
    """R-TWIN-3: a response whose reasoning the rollout recorded without encrypted content (or
    with a secret scanner's ``REDACTED``) counts the reasoning tokens the provider reported; a
    recorded encrypted length is counted as codex-rs estimates it, never both; only responses
    before the last user message count."""
    def response(reasoning: int, *blocks: ThinkingBlock) -> Message:
        return Message(role="assistant", content=(*blocks, TextBlock(text="done")),
                       usage=Usage(input_tokens=1000, output_tokens=50,
                                   raw={"reasoning_output_tokens": reasoning}))
    user = Message(role="user", content=(TextBlock(text="go"),))
    assert response_reasoning_tokens(response(3000)) == 3000
    assert response_reasoning_tokens(response(3000, ThinkingBlock(text="", encrypted_chars=8))) \
        == 3000
    assert response_reasoning_tokens(
        response(3000, ThinkingBlock(text="", encrypted_chars=40000))) == 7338
    assert earlier_reasoning_tokens([user, response(3000), response(500), user, response(9)]) \
        == 3500
    assert earlier_reasoning_tokens([user, response(3000)]) == 0


def test_r_twin_3_spark_rollout_compacts_at_its_line_with_the_reported_reasoning(tmp_path: Path):
    """R-TWIN-3, R-TWIN-7: a gpt-5.3-codex-spark rollout (model_context_window 121,600) gets the
    spark row, line 115,200; its prompts stay below the line (96,000 at the last call before the
    agent's compaction) and the reasoning of the earlier turns (7,000 reported a response) carries
    Codex's count over it at call 4, where the agent compacted; without that reasoning it would
    not compact there."""
    prompts = [60000, 72000, 84000, 96000, 30000, 32000]
    path = _rollout(tmp_path / "rollout-spark.jsonl", model="gpt-5.3-codex-spark",
                    window=121600, prompts=prompts, reasoning=7000, compact_at=4)
    session = load_session(path).session
    result = replay(session, load_preset("codex"))
    assert result.thresholds.threshold_line == 115200
    assert "agent rule Codex CLI 0.40–0.142, gpt-5.3-codex-spark (version 0.142.4 recorded)" \
        in result.thresholds.budget_detail
    assert [c.step_index for c in result.checkpoints] == [4]
    prep = result.preparations[4]
    stage = prep.stage("compaction")
    # pre-turn check: turns 0–2 are earlier than the last user message recorded (turn 3's)
    assert stage is not None and "21,000 earlier turns' encrypted reasoning" in stage.note
    assert prep.trigger_tokens is not None and prep.trigger_tokens >= 115200
    before = result.preparations[3].provider_prompt_tokens  # the prompt Codex compacted after
    assert before is not None and before + 100 < 115200 <= prep.trigger_tokens
    assert replay_report(session, result).recorded_compactions[0].step == 4
    quiet = _rollout(tmp_path / "rollout-quiet.jsonl", model="gpt-5.3-codex-spark",
                     window=121600, prompts=prompts, reasoning=0, compact_at=4)
    plain = replay(load_session(quiet).session, load_preset("codex"))
    assert 4 not in [c.step_index for c in plain.checkpoints]


def _corpus_file(prefix: str) -> Path:
    found = sorted(CORPUS.glob(f"rollout-*-{prefix}-*.jsonl.gz")) if CORPUS.is_dir() else []
    if not found:
        pytest.skip(f"{CORPUS} holds no rollout {prefix}")
    return found[0]


def test_r_twin_3_real_codex_0141_rollout_compacts_at_the_agents_call():
    """R-TWIN-3 on a real Codex 0.141 rollout (019eecb9, gpt-5.5, ../shared/corpus): its
    reasoning items carry no encrypted content; counted with the reported reasoning tokens of
    the earlier turns, the profile compacts at call 67, the agent's call (it compacted at 68
    without them), on the provider's count."""
    session = load_session(_corpus_file("019eecb9")).session
    result = replay(session, load_preset("codex"), summariser=make_summariser("recorded", session))
    summary = replay_report(session, result)
    assert [c.step for c in summary.recorded_compactions] == [67]
    assert [c.step for c in summary.compactions][:1] == [67]
    prep = result.preparations[67]
    stage = prep.stage("compaction")
    assert prep.trigger_basis == "provider"
    assert stage is not None and "earlier turns' encrypted reasoning" in stage.note
    assert "agent rule Codex CLI 0.40–0.142, gpt-5 (version 0.141.0 recorded)" \
        in result.thresholds.budget_detail
