"""Claude Code transcript lines built in tests (FORMATS.md §1): one dict per line, written as JSON
Lines by :func:`write`."""

from __future__ import annotations

import json
from pathlib import Path


def line(kind: str, uuid: str, parent: str | None, message: dict | None = None, **extra) -> dict:
    row = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "sess-1",
           "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/work/demo", "isSidechain": False}
    if message is not None:
        row["message"] = message
    row.update(extra)
    return row


def user(uuid: str, parent: str | None, text: str, **extra) -> dict:
    return line("user", uuid, parent, {"role": "user", "content": text}, **extra)


def asst(uuid: str, parent: str | None, msg_id: str, block: dict | str, read: int = 1000,
         output: int = 5, **extra) -> dict:
    if isinstance(block, str):
        block = {"type": "text", "text": block}
    return line("assistant", uuid, parent, {
        "id": msg_id, "model": "claude-opus-4-6", "role": "assistant", "type": "message",
        "content": [block], "usage": {"input_tokens": 3, "cache_read_input_tokens": read,
                                      "cache_creation_input_tokens": 10, "output_tokens": output}},
                **extra)


def call(call_id: str, name: str = "Bash", **arguments) -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments or {"command": "ls"}}


def result(uuid: str, parent: str, call_id: str, text: str = "ok", **extra) -> dict:
    return line("user", uuid, parent, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": text}]}, **extra)


def boundary(uuid: str, logical: str | None) -> dict:
    return line("system", uuid, None, subtype="compact_boundary", content="Conversation compacted",
                 logicalParentUuid=logical, compactMetadata={"trigger": "auto", "preTokens": 170251})


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def with_loop() -> list[dict]:
    return [user("u1", None, "Start"), asst("a1", "u1", "msg_1", "Started."),
            asst("x1", "x2", "msg_x", "A response in a loop"), user("x2", "x1", "loop"),
            user("u2", "a1", "Go on"), asst("a2", "u2", "msg_2", "Done.")]
