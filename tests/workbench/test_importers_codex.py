"""Codex rollout importer rules on small fixtures (R-SES-1, R-SES-2, R-SES-4; FORMATS.md §2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from iris.session import ThinkingBlock, ToolCallBlock

from workbench.importers import load_session

FIX = Path(__file__).parents[1] / "fixtures" / "importers"


@pytest.fixture(scope="module")
def basic():
    return load_session(FIX / "codex_basic.jsonl")


def test_r_ses_1_one_model_call_is_one_assistant_message(basic):
    """Reasoning + text + two parallel function calls before one token_count: one message, one
    request batch whose results both belong to it."""
    session = basic.session
    first = session.messages[4]
    assert first.role == "assistant"
    assert [b.type for b in first.content] == ["thinking", "text", "tool_call", "tool_call"]
    assert isinstance(first.content[0], ThinkingBlock) and first.content[0].text == "Find the parser"
    index = session.index
    assert index.batches[0].call_ids == ("call_1", "call_2")
    assert index.batch_of_message[5] == index.batch_of_message[6] == 0


def test_r_ses_2_duplicate_token_counts_counted_once(basic):
    """Each token_count is logged twice; 3 distinct totals → 3 usages, in call order."""
    usages = [m.usage for m in basic.session.messages if m.role == "assistant"]
    assert [u.prompt_tokens for u in usages] == [10000, 12000, 13000]
    assert all(u.cache_read_in_input for u in usages)
    assert usages[0].cache_read_tokens == 2000 and usages[0].output_tokens == 100
    assert usages[0].raw["total_tokens"] == 10100


def test_r_ses_4_arguments_parsed_or_kept_raw(basic):
    calls = {c.id: c for m in basic.session.messages for c in m.tool_calls}
    assert calls["call_1"].arguments == {"cmd": "rg argparse"}
    assert calls["call_2"].arguments == {"_raw": "not json at all"}
    patch = calls["call_3"]
    assert isinstance(patch, ToolCallBlock) and patch.name == "apply_patch"
    assert patch.arguments == {"input": "*** Begin Patch\n*** End Patch"}


def test_r_ses_4_custom_tool_output_pairs_by_call_id(basic):
    index = basic.session.index
    loc = index.results["call_3"]
    assert basic.session.messages[loc.message].content[loc.block].text == "Success"


def test_r_ses_4_unanswered_final_call(basic):
    assert basic.session.index.unanswered_calls == ("call_4",)


def test_r_ses_4_injected_context_is_synthetic_and_typed_turn_counted_once(basic):
    """developer text and <environment_context> are synthetic; event_msg.user_message does not
    add a second copy of the typed turn."""
    msgs = basic.session.messages
    assert [(m.role, m.synthetic) for m in msgs[:4]] == [
        ("system", False), ("system", True), ("user", True), ("user", False)]
    assert sum(1 for m in msgs if m.text == "Add a --verbose flag to the CLI") == 1
    assert basic.session.header.title == "Add a --verbose flag to the CLI"


def test_r_ses_2_model_switch_and_context_window(basic):
    header = basic.session.header
    assert header.model == "gpt-5-codex" and header.limits.context == 258400
    assert header.session_id == "cx-fixture" and header.source_format == "codex"
    (switch,) = basic.session.model_switches
    assert (switch.at_message, switch.model) == (9, "gpt-5.1-codex")
    assert basic.session.messages[9].model == "gpt-5.1-codex"


def test_r_ses_3_compacted_replacement_history_replaces_context():
    """messages[at_message:] is the new context: the replacement history (developer text, kept
    user turn, encrypted summary) then what follows; the earlier history stays before it."""
    session = load_session(FIX / "codex_compacted.jsonl").session
    (comp,) = session.compactions
    assert comp.at_message == 3 and comp.pre_tokens == 209950
    assert comp.source == "codex:compacted.replacement_history"
    after = session.messages[comp.at_message:]
    assert [m.role for m in after] == ["system", "user", "user", "assistant"]
    assert after[2].is_compaction_summary and "encrypted" in after[2].text
    assert session.messages[0].text == "Refactor the store"


def test_r_ses_2_zero_usage_after_compaction_is_noise():
    """The all-zero last_token_usage around a compaction attaches to nothing; the next real
    one (48,297) goes to the first response after the compaction."""
    session = load_session(FIX / "codex_compacted.jsonl").session
    prompts = [m.usage.prompt_tokens if m.usage is not None else None
               for m in session.messages if m.role == "assistant"]
    assert prompts == [209950, 48297]


def test_r_ses_3_legacy_compaction_rebuilds_history_with_summary():
    session = load_session(FIX / "codex_legacy_compacted.jsonl").session
    (comp,) = session.compactions
    assert comp.summary == "The user wants a changelog; a draft exists."
    after = session.messages[comp.at_message:]
    assert [m.text for m in after[:3]] == [
        "<environment_context>cwd=/w</environment_context>", "Write the changelog", comp.summary]
    assert after[2].is_compaction_summary and all(m.synthetic for m in after[:3])
