"""OpenAI chat / mini-swe-agent importer rules on small fixtures (R-SES-1, R-SES-2, R-SES-4;
FORMATS.md §3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.importers import load_session

FIX = Path(__file__).parents[1] / "fixtures" / "importers"


@pytest.fixture(scope="module")
def mini():
    return load_session(FIX / "mini_swe.traj.json")


def test_r_ses_4_plain_array_with_parallel_calls():
    session = load_session(FIX / "chat_array.json").session
    assert [m.role for m in session.messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    calls = session.messages[2].tool_calls
    assert [c.arguments for c in calls] == [{"path": "config.toml"}, {"_raw": "[1, 2]"}]
    assert session.index.batches[0].call_ids == ("call_a", "call_b")
    assert session.index.unanswered_calls == ()
    assert session.messages[1].text == "What is in config.toml and data.json?"


def test_r_ses_2_openai_prompt_tokens_include_cached():
    usage = load_session(FIX / "chat_array.json").session.messages[2].usage
    assert usage is not None
    assert usage.cache_read_in_input is True
    assert (usage.input_tokens, usage.cache_read_tokens, usage.prompt_tokens) == (900, 512, 900)


def test_r_ses_4_mini_swe_usage_reasoning_and_timestamps(mini):
    assistants = [m for m in mini.session.messages if m.role == "assistant"]
    assert [m.usage.prompt_tokens for m in assistants] == [1528, 1853, 1970]
    assert [m.usage.cache_read_tokens for m in assistants] == [1472, 1472, 1792]
    assert assistants[0].content[0].type == "thinking"
    assert assistants[0].content[0].text == "step 1 reasoning"
    assert assistants[0].model == "deepseek-reasoner" and assistants[0].id == "resp-1"
    assert assistants[0].timestamp.timestamp() == pytest.approx(1776075333.0)


def test_r_ses_4_exit_message_is_left_out_and_reported(mini):
    """The exit message is not context: 8 list entries → 7 messages; a warning names it."""
    assert len(mini.session.messages) == 7
    assert all(m.role != "exit" for m in mini.session.messages)
    assert any("exit_status='Submitted'" in w.problem for w in mini.warnings)
    assert mini.skipped == ()


def test_r_ses_4_submit_call_without_reply_is_unanswered(mini):
    assert mini.session.index.unanswered_calls == ("call_3",)


def test_r_ses_1_failed_command_is_an_error_result(mini):
    results = [m.content[0] for m in mini.session.messages if m.role == "tool"]
    assert [r.is_error for r in results] == [False, True]


def test_r_ses_4_header_title_and_stable_id(mini, tmp_path):
    header = mini.session.header
    assert header.title == "pvlib__pvlib-python-9999 (deepseek/deepseek-reasoner)"
    assert header.source_format == "openai_chat"
    copy = tmp_path / "copy.json"
    copy.write_bytes((FIX / "mini_swe.traj.json").read_bytes())
    assert load_session(copy).session.header.session_id == header.session_id


def test_r_ses_4_messages_object_without_extra(tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi there"},
                                             {"role": "assistant", "content": "hello"}]}))
    result = load_session(path)
    assert result.format == "openai_chat"
    assert [m.text for m in result.session.messages] == ["hi there", "hello"]
    assert result.session.header.title == "hi there"
