"""Claude Code importer rules on small fixtures (R-SES-1, R-SES-2, R-SES-4; FORMATS.md §1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.session import ImageBlock, ThinkingBlock, ToolResultBlock

from workbench.importers import load_session

FIX = Path(__file__).parents[1] / "fixtures" / "importers"


@pytest.fixture(scope="module")
def parallel():
    return load_session(FIX / "claude_parallel.jsonl")


def test_r_ses_4_split_response_is_one_message_with_last_usage(parallel):
    """Four lines sharing message.id msg_A form one assistant message; the placeholder usage
    (output 1) of the first three lines is replaced by the last line's (output 150)."""
    first = parallel.session.messages[2]
    assert first.role == "assistant" and first.id == "msg_A"
    assert [b.type for b in first.content] == ["thinking", "text", "tool_call", "tool_call"]
    assert first.usage.output_tokens == 150
    assert isinstance(first.content[0], ThinkingBlock) and first.content[0].signature == "sig"


def test_r_ses_2_anthropic_prompt_adds_cache_reads_and_writes(parallel):
    """Anthropic input_tokens is the uncached part: prompt = 3 + 1000 + 50 (R-SES-2, R-TOK-3)."""
    usage = parallel.session.messages[2].usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (3, 1000, 50)
    assert usage.cache_read_in_input is False and usage.prompt_tokens == 1053
    assert usage.raw["cache_read_input_tokens"] == 1000


def test_r_ses_4_parallel_results_forking_off_the_assistant_line_are_kept(parallel):
    """Both results fork off the assistant lines (u6 and u5), not off each other: a single walk
    from the leaf would miss one; both must be present and paired with msg_A's batch."""
    session = parallel.session
    index = session.index
    assert set(index.results) == {"toolu_1", "toolu_2", "toolu_3"}
    assert index.unanswered_calls == () and index.orphan_results == ()
    assert index.batch_of_message[3] == index.batch_of_message[4] == 0
    assert len(index.batches) == 3


def test_r_ses_1_tool_results_are_tool_messages_with_errors_and_images(parallel):
    msgs = parallel.session.messages
    image_msg, error_msg = msgs[3], msgs[4]
    assert image_msg.role == error_msg.role == "tool"
    result = image_msg.content[0]
    assert isinstance(result, ToolResultBlock) and result.call_id == "toolu_2"
    assert result.image_refs == ("toolu_2/image-1.png",)
    image = image_msg.content[1]
    assert isinstance(image, ImageBlock) and image.name == "toolu_2/image-1.png"
    assert image.original_ref is not None and image.original_ref.startswith("inline:image/png;base64")
    assert error_msg.content[0].is_error is True and error_msg.content[0].text == "Error: file not found"


def test_r_ses_4_system_reminder_is_synthetic_and_not_the_title(parallel):
    msgs = parallel.session.messages
    assert msgs[1].synthetic is True and msgs[0].synthetic is False
    assert parallel.session.header.title == "Fix the failing parser test please"
    assert parallel.session.header.source_format == "claude_code"
    assert parallel.session.header.session_id == "cc-fixture"
    assert parallel.session.header.workspace_root == "/work/demo"


def test_r_ses_4_progress_and_snapshot_lines_are_not_messages(parallel):
    """13 lines with uuids (1 progress, 1 system) and a snapshot become 8 messages."""
    roles = [m.role for m in parallel.session.messages]
    assert roles == ["user", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]


def test_r_ses_4_rewound_branch_is_dropped():
    """u3/u4 were abandoned by a rewind (u5 re-sent from u2): they are not in the session."""
    session = load_session(FIX / "claude_rewind.jsonl").session
    texts = [m.text for m in session.messages]
    assert texts == ["Rename the helper", "Which helper?", "parse_args in cli.py", "Renamed."]
    assert "toolu_dead" not in session.index.calls


def test_r_ses_3_compact_boundary_becomes_recorded_compaction():
    """compact_boundary + isCompactSummary → RecordedCompaction at the summary message; the walk
    follows logicalParentUuid so the pre-compaction history stays."""
    result = load_session(FIX / "claude_compact.jsonl")
    session = result.session
    assert len(session.compactions) == 1
    comp = session.compactions[0]
    assert (comp.at_message, comp.trigger, comp.pre_tokens) == (4, "auto", 167094)
    assert comp.source == "claude_code:compact_boundary"
    assert comp.summary is not None and comp.summary.startswith("This session is being continued")
    summary = session.messages[comp.at_message]
    assert summary.is_compaction_summary and summary.role == "user"
    assert session.messages[0].text == "Start the migration"  # history before the boundary kept
    assert len(session.messages) == 7


def test_r_ses_4_unanswered_final_call_stays_visible():
    session = load_session(FIX / "claude_compact.jsonl").session
    assert session.index.unanswered_calls == ("toolu_b",)
    assert session.index.groups[-1].closed is False


def test_r_ses_2_model_switch_recorded():
    session = load_session(FIX / "claude_compact.jsonl").session
    assert session.header.model == "claude-sonnet-4-5"
    assert [(s.at_message, s.model) for s in session.model_switches] == [(6, "claude-opus-4-6")]


def test_r_ses_4_session_id_falls_back_to_content_hash(tmp_path):
    """Without sessionId the id comes from the content hash: same bytes, same id."""
    rows = [json.loads(line) for line in (FIX / "claude_rewind.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("sessionId")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for p in (a, b):
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ra, rb = load_session(a), load_session(b)
    assert ra.session.header.session_id == rb.session.header.session_id
    assert ra.session.header.session_id == "claude_code-" + ra.content_hash[7:23]


def test_r_ses_4_slash_command_title(tmp_path):
    row = {"type": "user", "uuid": "a", "parentUuid": None, "message": {"role": "user", "content":
           "<command-message>fix</command-message>\n<command-name>/fix</command-name>\n"
           "<command-args>the flaky test</command-args>"}}
    path = tmp_path / "cmd.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert load_session(path).session.header.title == "/fix the flaky test"


def _long_transcript(path: Path, turns: int, output_chars: int) -> None:
    """A chain of ``turns`` call/result pairs with big results and big toolUseResult copies."""
    parent = None
    with path.open("w") as fh:
        for t in range(turns):
            big = f"line {t} " * (output_chars // 8)
            rows = [
                {"type": "assistant", "uuid": f"a{t}", "parentUuid": parent, "message": {
                    "id": f"msg_{t}", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [{"type": "tool_use", "id": f"toolu_{t}", "name": "Bash", "input": {"command": "ls"}}],
                    "usage": {"input_tokens": 1, "cache_read_input_tokens": 100 * t, "output_tokens": 5}}},
                {"type": "user", "uuid": f"r{t}", "parentUuid": f"a{t}", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{t}", "content": big}]},
                 "toolUseResult": {"stdout": big, "stderr": ""}},
            ]
            fh.write("".join(json.dumps(r) + "\n" for r in rows))
            parent = f"r{t}"


def test_r_ses_4_streaming_keeps_about_one_copy(tmp_path):
    """The file is read line by line and toolUseResult copies are dropped: peak Python memory
    stays well under twice the file size (the UI copy is half of every line here)."""
    import tracemalloc

    path = tmp_path / "long.jsonl"
    _long_transcript(path, turns=200, output_chars=12_000)
    size = path.stat().st_size
    tracemalloc.start()
    result = load_session(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(result.session.messages) == 400 and result.session.index.unanswered_calls == ()
    assert size > 4_000_000
    assert peak < 1.0 * size, (peak, size)


def test_r_ses_4_sidechain_lines_do_not_hide_the_main_branch(tmp_path):
    """A subagent (isSidechain) line logged last in the main file is not taken as the leaf."""
    rows = [json.loads(line) for line in (FIX / "claude_rewind.jsonl").read_text().splitlines()]
    rows.append({"type": "user", "uuid": "s1", "parentUuid": None, "isSidechain": True,
                 "message": {"role": "user", "content": "subagent prompt"}})
    path = tmp_path / "side.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    texts = [m.text for m in load_session(path).session.messages]
    assert texts == ["Rename the helper", "Which helper?", "parse_args in cli.py", "Renamed."]


def test_r_ses_4_old_summary_line_is_a_title_not_a_compaction(tmp_path):
    """``{type: summary}`` (older versions) is a session title: used only when no typed request
    exists, and never a RecordedCompaction."""
    rows = [{"type": "summary", "summary": "Parser refactor", "leafUuid": "a1"},
            {"type": "user", "uuid": "a0", "parentUuid": None, "isMeta": True,
             "message": {"role": "user", "content": "<system-reminder>x</system-reminder>"}},
            {"type": "assistant", "uuid": "a1", "parentUuid": "a0", "message": {
                "id": "m1", "role": "assistant", "content": [{"type": "text", "text": "ok"}]}}]
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    session = load_session(path).session
    assert session.header.title == "Parser refactor" and session.compactions == ()
    assert session.messages[1].usage is None  # a response without usage stays without
