"""What real agents write imports in strict mode with every model response and user message
(R-TWIN-8), and the sub-agents are billed beside the main conversation (R-TWIN-2, R-TRUTH-1).
The fixtures in tests/fixtures/twin are hand-written in the documented shapes (FORMATS.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from iris.compaction.carried import is_real_user_message
from iris.errors import SessionFormatError

from workbench.cli import main
from workbench.corpus.twin_raw import file_facts
from workbench.importers import load_session
from workbench.importers.claude_progress import subagent_sessions
from workbench.pricing.billing import recorded_bill
from workbench.pricing.subagents import subagents_billed_usd

ROOT = Path(__file__).resolve().parents[2]
TWIN = ROOT / "tests" / "fixtures" / "twin"
PROJECT = ROOT / "tests" / "fixtures" / "claude_project"


def _responses(path: Path) -> int:
    """Imported responses with usage (what ``inspect --json`` counts)."""
    return sum(1 for m in load_session(path).session.messages
               if m.role == "assistant" and m.usage is not None and not m.compaction_provided)


@pytest.mark.parametrize("name", ["codex_tool_search.jsonl", "codex_desktop_resume.jsonl",
                                  "claude_queue_operation.jsonl", "claude_agent_progress.jsonl"])
def test_r_twin_8_every_response_in_the_file_is_imported_strictly(name):
    """The responses the file holds (counted from its raw lines) are all imported, strictly."""
    path = TWIN / name
    assert _responses(path) == file_facts(path).responses > 0


def test_r_twin_8_codex_tool_search_is_a_tool_call_with_its_result():
    """A tool_search_call is the model's call (its token_count bills it) and tool_search_output
    its result, with the tools found; no item is dropped."""
    result = load_session(TWIN / "codex_tool_search.jsonl")
    messages = result.session.messages
    calls = [b for m in messages for b in m.tool_calls]
    assert [c.name for c in calls] == ["tool_search", "mcp__wiki__ask_question"]
    assert calls[0].arguments == {"query": "wiki ask_question", "limit": 5}
    (found,) = [b for m in messages for b in m.tool_results if b.call_id == "call_search"]
    assert "mcp__wiki" in found.text and not found.is_error
    assert not result.warnings
    first = next(m for m in messages if m.role == "assistant")
    assert first.usage is not None and first.usage.prompt_tokens == 12000


def test_r_twin_8_codex_desktop_resume_repeats_session_meta():
    """Codex Desktop writes session_meta again (same id, later) on every resume: accepted, the
    instructions kept once; the file appended to itself (the meta at its first time) is refused."""
    path = TWIN / "codex_desktop_resume.jsonl"
    session = load_session(path).session
    assert session.header.session_id == "cx-desktop"
    assert [m.role for m in session.messages].count("system") == 1
    assert [m.text for m in session.messages if m.role == "user"] == [
        "Rename the config loader", "Now update the docs"]


def test_r_twin_8_codex_meta_earlier_than_the_lines_before_is_refused(tmp_path):
    """The same session_meta at a time before the lines already read is the file appended to
    itself: strict import refuses it at that line."""
    lines = (TWIN / "codex_desktop_resume.jsonl").read_text("utf-8").splitlines()
    bad = tmp_path / "appended.jsonl"
    bad.write_text("\n".join([*lines[:8], lines[0], *lines[1:8]]) + "\n", "utf-8")
    with pytest.raises(SessionFormatError) as err:
        load_session(bad)
    assert err.value.line == 9 and "appended to itself" in str(err.value)


def test_r_twin_8_swe_agent_reused_call_id_is_paired_in_order():
    """A call id used again once the earlier call has its result pairs in order: each call has
    its own id and result; the last call (submit) is unanswered, as the run ended."""
    result = load_session(TWIN / "swe_agent_reused_ids.traj")
    index = result.session.index
    calls = [b.id for m in result.session.messages for b in m.tool_calls]
    results = [b.call_id for m in result.session.messages for b in m.tool_results]
    assert calls == ["call_0", "call_0#2", "call_0#3"] and results == ["call_0", "call_0#2"]
    assert len(index.unanswered_calls) == 1 and not index.orphan_results
    assert any("used again after its earlier call was answered" in w.problem
               for w in result.warnings)


def test_r_twin_8_swe_agent_id_reused_before_its_result_is_still_refused(tmp_path):
    """Reusing an id while the earlier call waits for its result is ambiguous: strict refuses."""
    doc = json.loads((TWIN / "swe_agent_reused_ids.traj").read_text("utf-8"))
    del doc["history"][3]  # the first call's result
    bad = tmp_path / "bad.traj"
    bad.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(SessionFormatError, match="is the id of an earlier call too"):
        load_session(bad)


def test_r_twin_8_queued_message_is_a_user_message_at_its_place():
    """A message typed while the agent worked and delivered within the turn (enqueue, then
    remove) is a real user message before the response that read it; one sent as the next
    prompt (dequeue) is not doubled; one taken back (popAll) or a slash command is no message."""
    messages = load_session(TWIN / "claude_queue_operation.jsonl").session.messages
    texts = [(m.role, m.text) for m in messages]
    at = texts.index(("user", "also log each retry"))
    assert messages[at - 1].role == "tool" and messages[at + 1].id == "msg_2"
    assert is_real_user_message(messages[at])
    users = [t for r, t in texts if r == "user"]
    assert users == ["Add a retry to the uploader", "also log each retry", "then run the tests"]


def test_r_twin_2_agent_progress_is_the_subagents_conversation():
    """Without a subagents/ folder the agent_progress lines give the sub-agent's session, with
    the id and parent a sub-agent file gets, and its two responses with usage."""
    path = TWIN / "claude_agent_progress.jsonl"
    (run,) = load_session(path).session.subagents
    (sub,) = subagent_sessions(path)
    assert sub.header.session_id == run.session_id == "cc-progress/agent-a5e5e5e"
    assert (sub.header.parent_id, sub.header.agent_id) == ("cc-progress", "a5e5e5e")
    usages = [m.usage for m in sub.messages if m.role == "assistant"]
    assert len(usages) == 2 and all(u is not None for u in usages)
    assert usages[0] is not None and usages[0].output_tokens == 30  # the response's last line


def test_r_truth_1_subagents_are_billed_beside_the_main_bill(tmp_path, capsys):
    """cost.recorded_billed_usd stays the main conversation's bill; subagents_billed_usd is the
    sub-agents' (from agent_progress usage here; from the sub-agent files in a project folder)."""
    path = TWIN / "claude_agent_progress.jsonl"
    out = tmp_path / "s.json"
    assert main(["replay", str(path), "--summary-json", str(out)]) == 0
    cost = json.loads(out.read_text("utf-8"))["cost"]
    assert cost["recorded_billed_usd"] == recorded_bill(load_session(path).session).usd
    expected = subagents_billed_usd(subagent_sessions(path))
    assert expected is not None and expected > 0 and cost["subagents_billed_usd"] == expected
    assert main(["replay", str(PROJECT / "sess-proj.jsonl"), "--summary-json", str(out)]) == 0
    folder = json.loads(out.read_text("utf-8"))["cost"]
    agent = load_session(PROJECT / "sess-proj" / "subagents" / "agent-a1b2c3d.jsonl").session
    assert folder["subagents_billed_usd"] == recorded_bill(agent).usd


def test_r_truth_1_usage_page_lines_say_the_subagents_bill(tmp_path):
    """The Usage page's cost lines (services.costs, read by the thin page) state the sub-agents'
    bill beside the main one, for a stored session whose transcript is still there."""
    from workbench.services.costs import saved_cost_lines
    from workbench.storage.store import open_store

    copy = tmp_path / "cc.jsonl"
    shutil.copy(TWIN / "claude_agent_progress.jsonl", copy)
    assert main(["replay", str(copy), "--name", "default"]) == 0
    with open_store() as store:
        (info,) = store.replays.list("cc-progress")
        lines = saved_cost_lines(store, "cc-progress", info.id)
    (line,) = [x for x in lines if x.startswith("Sub-agents as billed:")]
    assert "beside the recorded session's bill" in line
    assert not any("no price known" in x for x in lines)


def test_r_twin_2_inspect_shows_agent_progress_subagents(capsys):
    """``inspect --json`` of a transcript without a subagents/ folder reads its sub-agents from
    the agent_progress lines: the Task call -> 2 model calls, 1 tool call, as the parent recorded."""
    assert main(["inspect", "--json", str(TWIN / "claude_agent_progress.jsonl")]) == 0
    (agent,) = json.loads(capsys.readouterr().out)["subagents"]
    assert agent["imported"] is True and agent["session_id"] == "cc-progress/agent-a5e5e5e"
    assert (agent["model_calls"], agent["tool_calls"]) == (2, agent["recorded_tool_calls"]) == (2, 1)
    assert agent["billed_usd"] is not None and agent["billed_usd"] > 0


def test_r_twin_2_import_stores_agent_progress_subagents_as_children(capsys):
    """``workbench import`` of a transcript without a subagents/ folder stores each sub-agent its
    agent_progress lines carry as the child a sub-agent file would be; a second import changes
    nothing."""
    from workbench.storage.store import open_store

    path = str(TWIN / "claude_agent_progress.jsonl")
    assert main(["import", path]) == 0
    assert "1 sub-agent from its agent_progress lines stored as its children" in capsys.readouterr().out
    assert main(["import", path]) == 0
    with open_store() as store:
        (child,) = store.children("cc-progress")
        assert child.id == "cc-progress/agent-a5e5e5e" and child.parent_id == "cc-progress"
        assert store.header(child.id).agent_id == "a5e5e5e"
        assert len(store.list_sessions()) == 2


def test_r_twin_8_twin_check_counts_the_subagent_responses_of_agent_progress():
    """twin-check compares the sub-agent responses the agent_progress lines carry (raw count)
    with those of the imported sub-agent sessions."""
    from workbench.corpus.twin_check import check_file

    row = check_file(TWIN / "claude_agent_progress.jsonl")
    assert (row.subagents, row.subagent_responses_in_file, row.subagent_responses_imported) == (1, 2, 2)
    assert row.subagents_billed_usd is not None and row.subagents_billed_usd > 0
