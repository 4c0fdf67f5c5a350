"""The codex profile counts what Codex counts before it compacts (R-TWIN-3): the last response's
input + output, its estimate of the earlier turns' encrypted reasoning and of the items recorded
since. A real Codex 0.104 rollout compacted at a 209,950-token prompt (212,134 with the output),
below its 244,800 line, because 33,320 tokens of earlier reasoning were added; the rollout built
here has the same structure: prompts below the line, reasoning that carries the count over it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iris.compaction.codex_count import earlier_reasoning_tokens, reasoning_item_tokens
from iris.config import ContextConfig
from iris.replay import replay
from iris.session import Message, TextBlock, ThinkingBlock

from workbench.analysis.replay_report import replay_report
from workbench.importers import load_session
from workbench.services.presets import load_preset

WINDOW = 258400
ENCRYPTED = 40000  # characters of each reasoning item's encrypted_content: 7,338 tokens for Codex
COMPACT_AT = 7


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-02-23T12:00:00.000Z", "type": kind, "payload": payload})


def _usage(prompt: int, output: int) -> dict[str, int]:
    return {"input_tokens": prompt, "cached_input_tokens": 0, "output_tokens": output,
            "reasoning_output_tokens": 0, "total_tokens": prompt + output}


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _rollout(path: Path, turns: int = 10) -> Path:
    """One call a turn (reasoning with an 8,000-token summary, a function call, its output);
    prompts 150,000 + 10,000 a turn until the agent's compaction before turn 7, then 30,000 +
    5,000 a turn."""
    lines = [_line("session_meta", {"id": "cx-count", "cli_version": "0.104.0",
                                    "timestamp": "2026-02-23T12:00:00.000Z"}),
             _line("turn_context", {"model": "gpt-5.3-codex", "cwd": "/w"}),
             _line("event_msg", {"type": "task_started", "model_context_window": WINDOW})]
    total = 0
    for k in range(turns):
        if k == COMPACT_AT:
            history = [_user(f"task {j}") for j in range(k)] + [_user("SUMMARY of tasks 0-6")]
            lines += [_line("compacted", {"message": "", "replacement_history": history}),
                      _line("event_msg", {"type": "context_compacted"})]
        lines += [_line("response_item", _user(f"task {k}")),
                  _line("event_msg", {"type": "user_message", "message": f"task {k}"})]
        encrypted = ("[REDACTED_ENCRYPTED_CONTENT len=40000 sha=0a1b2c3d]" if k == 0
                     else "x" * ENCRYPTED)
        lines.append(_line("response_item", {
            "type": "reasoning", "summary": [] if k == 1 else [
                {"type": "summary_text", "text": f"thinking about task {k}" + " gamma" * 8000}],
            "content": None, "encrypted_content": encrypted}))
        lines.append(_line("response_item", {"type": "function_call", "name": "exec_command",
                                              "arguments": json.dumps({"cmd": f"make t{k}"}),
                                              "call_id": f"call_{k}"}))
        prompt = 150000 + 10000 * k if k < COMPACT_AT else 30000 + 5000 * (k - COMPACT_AT)
        total += prompt + 100
        lines.append(_line("event_msg", {"type": "token_count", "info": {
            "total_token_usage": _usage(total, 0), "last_token_usage": _usage(prompt, 100),
            "model_context_window": WINDOW}}))
        lines.append(_line("response_item", {"type": "function_call_output",
                                              "call_id": f"call_{k}", "output": "ok"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_r_twin_3_codex_reasoning_estimate_follows_codex_rs():
    """R-TWIN-3: one item is (chars × 3/4 − 650) / 4 tokens rounded up (never negative); only
    reasoning before the last user message counts."""
    assert reasoning_item_tokens(40000) == 7338
    assert reasoning_item_tokens(1484) == 116
    assert reasoning_item_tokens(100) == 0
    think = Message(role="assistant", content=(ThinkingBlock(text="", encrypted_chars=40000),))
    user = Message(role="user", content=(TextBlock(text="go"),))
    assert earlier_reasoning_tokens([user, think, user, think]) == 7338
    assert earlier_reasoning_tokens([think, think]) == 0


def test_r_twin_3_codex_importer_keeps_the_encrypted_reasoning_length(tmp_path: Path):
    """R-TWIN-3: every reasoning item keeps its encrypted_content length (a redacted placeholder
    its len= figure), also one without a readable summary; the calls are all imported."""
    session = load_session(_rollout(tmp_path / "rollout-x.jsonl")).session
    blocks = [b for m in session.messages if not m.compaction_provided for b in m.content
              if isinstance(b, ThinkingBlock)]
    assert [b.encrypted_chars for b in blocks] == [ENCRYPTED] * 10
    assert blocks[1].text == "" and blocks[0].text.startswith("thinking about task 0")
    assert len(session.index.batches) == 10


def test_r_twin_3_codex_profile_compacts_where_codex_counted_the_line_crossed(tmp_path: Path):
    """R-TWIN-3: step 7 starts a turn; Codex checks before it records the turn's user message,
    so the last user message is turn 6's: the last response reports 210,000 + 100 (below
    244,800) and the reasoning of turns 0-5 adds 44,028 (at step 6: 200,100 + 36,690 is below):
    the codex profile compacts at step 7, where the agent did, on the provider's count (its
    request is still the one the provider measured); without the reasoning count it does not
    compact there (prompts drop after 7)."""
    session = load_session(_rollout(tmp_path / "rollout-x.jsonl")).session
    result = replay(session, load_preset("codex"))
    assert [c.step_index for c in result.checkpoints] == [COMPACT_AT]
    prep = result.preparations[COMPACT_AT]
    assert prep.trigger_basis == "provider"
    stage = prep.stage("compaction")
    assert stage is not None and "44,028 earlier turns' encrypted reasoning" in stage.note
    assert prep.trigger_tokens is not None and prep.trigger_tokens >= 210100 + 44028
    before = result.preparations[COMPACT_AT - 1]
    assert before.trigger_tokens is not None and before.trigger_tokens < 244800
    summary = replay_report(session, result)
    assert [c.step for c in summary.recorded_compactions] == [COMPACT_AT]
    plain = replay(session, _codex_without_reasoning())
    assert plain.checkpoints == () or plain.checkpoints[0].step_index != COMPACT_AT


def _codex_without_reasoning() -> ContextConfig:
    config = load_preset("codex")
    compaction = config.compaction.model_copy(update={"count_earlier_reasoning": False})
    return config.model_copy(update={"compaction": compaction})


def _turn(k: int, prompt: int, total: int) -> list[str]:
    return [_line("event_msg", {"type": "task_started", "model_context_window": WINDOW}),
            _line("response_item", _user(f"task {k}")),
            _line("event_msg", {"type": "user_message", "message": f"task {k}"}),
            _line("response_item", {"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text",
                                                  "text": f"done {k}" + " gamma" * 9000}]}),
            _line("event_msg", {"type": "token_count", "info": {
                "total_token_usage": _usage(total, 0), "last_token_usage": _usage(prompt, 10),
                "model_context_window": WINDOW}}),
            _line("event_msg", {"type": "task_complete"})]


def _compacted(kept: int) -> list[str]:
    history = [_user(f"task {j}") for j in range(kept)] + [_user("SUMMARY")]
    return [_line("compacted", {"message": "", "replacement_history": history}),
            _line("event_msg", {"type": "context_compacted"})]


def test_r_twin_3_a_codex_task_that_only_compacted_is_a_manual_compaction(tmp_path: Path):
    """R-TWIN-3: a /compact typed in Codex runs as a task of its own (task_started, compacted,
    task_complete: no user message, no model call) and imports as ``manual``; a compaction at
    the start of a turn that then records its user message and calls the model is ``auto``.
    The codex profile applies the manual one at its step, far below the line."""
    lines = [_line("session_meta", {"id": "cx-manual", "cli_version": "0.104.0"}),
             _line("turn_context", {"model": "gpt-5.3-codex", "cwd": "/w"})]
    lines += _turn(0, 20000, 20010) + _turn(1, 29000, 49020)
    lines += [_line("event_msg", {"type": "task_started", "model_context_window": WINDOW}),
              *_compacted(2), _line("event_msg", {"type": "task_complete"})]
    lines += _turn(2, 5000, 55030)
    pre_turn = _turn(3, 6000, 61040)
    lines += [pre_turn[0], *_compacted(3), *pre_turn[1:]]
    path = tmp_path / "rollout-manual.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = load_session(path).session
    assert [c.trigger for c in session.compactions] == ["manual", "auto"]
    result = replay(session, load_preset("codex"))
    assert [c.step_index for c in result.checkpoints][:1] == [2]
    summary = replay_report(session, result)
    assert [(c.step, c.trigger) for c in summary.recorded_compactions] == [
        (2, "manual"), (3, "auto")]
    assert summary.compactions[0].trigger == "manual"
