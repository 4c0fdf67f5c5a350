"""The importers on the three real public sessions in ../shared/real-sessions (R-SES-4).

Expected counts are computed here with plain JSON scans of the files, independently of the
importers, and checked against SOURCE.txt's figures.
"""

from __future__ import annotations

import json
from pathlib import Path

from iris.session import Message, Usage

from workbench.analysis.session_counts import inspect_session
from workbench.importers import detect_format, load_session

CC_FILE = "claude_code/spotter_subagent_session.jsonl"
CX_FILE = "codex_rollout/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
OA_FILE = "openai_chat/pvlib__pvlib-python-1707.deepseek_reasoner.traj.json"


def _usage(message: Message) -> Usage:
    assert message.usage is not None, message.id
    return message.usage


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- Claude Code ---------------------------------------------------------------------------------


def _cc_scan(rows: list[dict]) -> dict:
    assistants = [r for r in rows if r.get("type") == "assistant"]
    users = [r for r in rows if r.get("type") == "user"]
    uses = {b["id"] for r in assistants for b in r["message"]["content"] if b.get("type") == "tool_use"}
    results = {b["tool_use_id"] for r in users if isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b.get("type") == "tool_result"}
    last_usage: dict[str, dict] = {}
    for r in assistants:
        last_usage[r["message"]["id"]] = r["message"]["usage"]
    return {"assistant_lines": len(assistants), "user_lines": len(users), "uses": uses,
            "results": results, "last_usage": last_usage}


def test_r_ses_4_claude_code_real_counts(real_sessions):
    path = real_sessions / CC_FILE
    scan = _cc_scan(_lines(path))
    assert (scan["assistant_lines"], scan["user_lines"]) == (28, 20)  # SOURCE.txt
    assert len(scan["uses"]) == len(scan["results"]) == 16
    result = load_session(path)
    session = result.session
    assert result.format == "claude_code" and result.skipped == ()
    index = session.index
    assert set(index.calls) == scan["uses"] and set(index.results) == scan["results"]
    assert index.unanswered_calls == () and index.orphan_results == ()
    # one message per distinct message.id; every one of the 28 assistant lines' blocks kept
    assistants = [m for m in session.messages if m.role == "assistant"]
    assert [m.id for m in assistants] == list(scan["last_usage"])
    assert sum(len(m.content) for m in assistants) == 28
    # usage on every response = its last line's usage, Anthropic normalisation
    for msg in assistants:
        raw = scan["last_usage"][msg.id]
        assert _usage(msg).output_tokens == raw["output_tokens"]
        assert _usage(msg).prompt_tokens == (raw["input_tokens"] + raw["cache_read_input_tokens"]
                                           + raw["cache_creation_input_tokens"])
    assert session.compactions == ()


def test_r_ses_4_claude_code_real_inspect(real_sessions):
    report = inspect_session(load_session(real_sessions / CC_FILE))
    assert {k: report[k] for k in ("format", "messages", "responses", "tool_calls", "tool_results",
                                   "unanswered_calls", "compactions", "responses_with_usage",
                                   "max_prompt_tokens")} == {
        "format": "claude_code", "messages": 32, "responses": 12, "tool_calls": 16,
        "tool_results": 16, "unanswered_calls": 0, "compactions": 0, "responses_with_usage": 12,
        "max_prompt_tokens": 43861}
    assert report["estimated_tokens"] > 10_000
    assert report["session_id"] == "491e126e-1e71-469c-ade2-fcc8af567c74"


# --- Codex ---------------------------------------------------------------------------------------


def test_r_ses_4_codex_real_counts(real_sessions):
    path = real_sessions / CX_FILE
    rows = _lines(path)
    items = [r["payload"] for r in rows if r["type"] == "response_item"]
    fcalls = [p["call_id"] for p in items if p["type"] == "function_call"]
    ccalls = [p["call_id"] for p in items if p["type"] == "custom_tool_call"]
    outputs = {p["call_id"] for p in items if p["type"] in ("function_call_output", "custom_tool_call_output")}
    counts = [r["payload"] for r in rows if r["type"] == "event_msg" and r["payload"]["type"] == "token_count"]
    distinct = []
    for tc in counts:
        if tc["info"] and (not distinct or tc["info"]["total_token_usage"] != distinct[-1]):
            distinct.append(tc["info"]["total_token_usage"])
    typed = sum(1 for r in rows if r["type"] == "event_msg" and r["payload"]["type"] == "user_message")
    assert (len(fcalls), len(ccalls), len(counts), typed) == (134, 10, 166, 7)  # SOURCE.txt
    assert len(outputs) == 143 and fcalls[-1] not in outputs

    session = load_session(path).session
    index = session.index
    assert len(index.calls) == 144 and len(index.results) == 143
    assert index.unanswered_calls == (fcalls[-1],)  # the final call never returned
    assistants = [m for m in session.messages if m.role == "assistant"]
    assert len(assistants) == len(distinct) == 83  # one model call = one response
    assert all(m.usage is not None and m.usage.cache_read_in_input for m in assistants)
    assert max(_usage(m).prompt_tokens for m in assistants) == max(
        tc["info"]["last_token_usage"]["input_tokens"] for tc in counts if tc["info"])
    assert sum(1 for m in session.messages if m.role == "user" and not m.synthetic) == typed
    assert session.header.limits is not None and session.header.limits.context == 258400
    assert session.header.model == "gpt-5.3-codex"


def test_r_ses_4_codex_real_inspect(real_sessions):
    report = inspect_session(load_session(real_sessions / CX_FILE))
    assert {k: report[k] for k in ("format", "responses", "tool_calls", "tool_results",
                                   "unanswered_calls", "compactions", "responses_with_usage",
                                   "max_prompt_tokens")} == {
        "format": "codex", "responses": 83, "tool_calls": 144, "tool_results": 143,
        "unanswered_calls": 1, "compactions": 0, "responses_with_usage": 83,
        "max_prompt_tokens": 143372}


# --- mini-swe-agent ------------------------------------------------------------------------------


def test_r_ses_4_mini_swe_agent_real_counts(real_sessions):
    path = real_sessions / OA_FILE
    doc = json.loads(path.read_text(encoding="utf-8"))
    raw = doc["messages"]
    assert len(raw) == 35 and raw[-1]["role"] == "exit"  # SOURCE.txt: 35 messages incl. exit
    call_ids = [c["id"] for m in raw if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    prompts = [m["extra"]["response"]["usage"]["prompt_tokens"] for m in raw if m["role"] == "assistant"]
    result = load_session(path)
    session = result.session
    assert len(session.messages) == 34
    assert [c for m in session.messages for c in (b.id for b in m.tool_calls)] == call_ids
    assert session.index.unanswered_calls == ()
    assistants = [m for m in session.messages if m.role == "assistant"]
    assert [_usage(m).prompt_tokens for m in assistants] == prompts
    assert sum(1 for m in assistants if m.content and m.content[0].type == "thinking") == sum(
        1 for m in raw if m["role"] == "assistant" and m.get("reasoning_content"))
    assert any("InternalServerError" in w.problem for w in result.warnings)


def test_r_ses_4_mini_swe_agent_real_inspect(real_sessions):
    report = inspect_session(load_session(real_sessions / OA_FILE))
    assert {k: report[k] for k in ("format", "messages", "responses", "tool_calls", "tool_results",
                                   "unanswered_calls", "responses_with_usage", "max_prompt_tokens")} == {
        "format": "openai_chat", "messages": 34, "responses": 16, "tool_calls": 16,
        "tool_results": 16, "unanswered_calls": 0, "responses_with_usage": 16,
        "max_prompt_tokens": 12633}


def test_r_ses_4_real_files_detected(real_sessions):
    assert detect_format(real_sessions / CC_FILE) == "claude_code"
    assert detect_format(real_sessions / CX_FILE) == "codex"
    assert detect_format(real_sessions / OA_FILE) == "openai_chat"
