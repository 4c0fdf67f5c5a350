"""The wire form of a prepared request (R-RUN-1): real recovery addresses, chat-completions shape."""

from __future__ import annotations

from pathlib import Path

from iris.preparation.records import MessageMark
from iris.reduction.artifacts import REDUCED_DIR, logical_path
from iris.runner.wire import real_paths, reply_message, reply_usage, wire_messages
from iris.session import Message, TextBlock, ToolCallBlock, ToolResultBlock


def test_r_run_1_real_paths_rewrites_only_engine_artifact_addresses(tmp_path: Path) -> None:
    """R-RUN-1: an address the engine wrote becomes the real file; anything else that mentions
    the logical root (a traversal, another folder, plain text) is sent as it is."""
    address = logical_path(REDUCED_DIR, "Bash", "the output")
    text = (f"summary\nFull output saved to {address}\n"
            "<session_dir>/reduced-artifacts/../../etc/passwd and <session_dir>/secrets/key.txt")
    out = real_paths(text, tmp_path)
    real = tmp_path.resolve() / address.removeprefix("<session_dir>/")
    assert f"Full output saved to {real}\n" in out
    assert "<session_dir>/reduced-artifacts/../../etc/passwd" in out
    assert "<session_dir>/secrets/key.txt" in out


def test_r_run_1_wire_messages_shape_and_checkpoint_archives(tmp_path: Path) -> None:
    """R-RUN-1: tool results become ``tool`` messages, calls ``tool_calls`` with JSON arguments,
    and a checkpoint's archive list names the real archive files."""
    checkpoint = Message(role="user", content=(TextBlock(
        text="[Context Summary]\nArchived history files (read the matching file for exact wording):\n"
             "- history-2.md (40 messages)"),))
    call = Message(role="assistant", content=(TextBlock(text="Looking."), ToolCallBlock(
        id="c1", name="read", arguments={"path": "a.py"})))
    result = Message(role="tool", content=(ToolResultBlock(call_id="c1", text="print(1)"),))
    marks = (MessageMark(origin="checkpoint"), MessageMark(origin="history", history_index=5),
             MessageMark(origin="history", history_index=6))
    wire = wire_messages((checkpoint, call, result), tmp_path, marks)
    assert wire[0] == {"role": "user", "content": checkpoint.text.replace(
        "- history-2.md (", f"- {tmp_path.resolve() / 'history-2.md'} (")}
    assert wire[1] == {"role": "assistant", "content": "Looking.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a.py"}'}}]}
    assert wire[2] == {"role": "tool", "tool_call_id": "c1", "content": "print(1)"}


def test_r_run_1_reply_reads_calls_reasoning_and_usage() -> None:
    """R-RUN-1, R-TOK-3: an answer's text, reasoning and tool calls become one assistant message;
    its usage is OpenAI-style (cached reads inside the prompt), bad arguments are kept raw."""
    answer = {"id": "x", "model": "served", "choices": [{"message": {
        "role": "assistant", "content": "ok", "reasoning_content": "think",
        "tool_calls": [{"id": "t1", "function": {"name": "bash", "arguments": "{not json"}},
                       {"function": {"name": "read", "arguments": '{"path": "b"}'}}]}}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 12,
                  "prompt_tokens_details": {"cached_tokens": 700}}}
    m = reply_message(answer, "asked", id_prefix="call_3")
    assert [b.type for b in m.content] == ["thinking", "text", "tool_call", "tool_call"]
    assert m.tool_calls[0].arguments == {"_raw": "{not json"}
    assert m.tool_calls[1].id == "call_3_1" and m.model == "served"
    usage = reply_usage(answer, "served")
    assert usage is not None and usage.prompt_tokens == 900 and usage.cache_read_tokens == 700
    assert reply_usage({"choices": []}, "m") is None
