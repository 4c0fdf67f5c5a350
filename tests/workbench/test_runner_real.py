"""The live runner re-enacting a real Claude Code session (R-RUN-1).

The local chat-completions server answers with the recorded assistant responses in order (their
text, thinking and tool calls with the recorded ids and arguments); each host tool returns the
recorded result of the call. So the runner drives a real tool loop of real sizes through the
preparation pipeline live, compacting and reducing as it goes. Skipped when ../shared is absent.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer
from iris.runner import AgentRunner, RunResult, Tool
from iris.session import Session, TextBlock, ThinkingBlock

from workbench.importers import load_session

pytestmark = pytest.mark.slow  # starts servers, processes, kernels or whole replays

_SAVED = re.compile(r"Full output saved to (\S+?\.txt)")
SHARED = Path(os.environ.get("WORKBENCH_SHARED", Path(__file__).resolve().parents[3] / "shared"))
SESSION = SHARED / "real-sessions" / "claude_code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl.gz"


def _replies(session: Session) -> list[dict[str, Any]]:
    """The recorded assistant responses of the first run, as chat ``message`` objects."""
    assert session.messages[0].role == "user"
    replies: list[dict[str, Any]] = []
    for batch in session.index.batches:
        m = session.messages[batch.assistant_message]
        reply: dict[str, Any] = {"role": "assistant", "content": "\n".join(
            b.text for b in m.content if isinstance(b, TextBlock)) or None}
        thinking = [b.text for b in m.content if isinstance(b, ThinkingBlock)]
        if thinking:
            reply["reasoning_content"] = "\n".join(thinking)
        if m.tool_calls:
            reply["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                "name": c.name, "arguments": json.dumps(c.arguments)}} for c in m.tool_calls]
        replies.append(reply)
        if not m.tool_calls:
            break
    return replies


def _tools(session: Session) -> list[Tool]:
    """One host tool per recorded tool name; each returns the recorded result of its call."""
    results = {r.call_id: r for m in session.messages for r in m.tool_results}
    queue: dict[tuple[str, str], list[str]] = {}
    for m in session.messages:
        for c in m.tool_calls:
            queue.setdefault((c.name, json.dumps(c.arguments, sort_keys=True)), []).append(c.id)

    def recorded(name: str) -> Any:
        def run(args: dict[str, Any]) -> str:
            ids = queue.get((name, json.dumps(args, sort_keys=True)), [])
            result = results.get(ids.pop(0)) if ids else None
            if result is None:
                return "(no recorded result)"
            if result.is_error:
                raise RuntimeError(result.text)
            return result.text
        return run

    names = sorted({c.name for m in session.messages for c in m.tool_calls})
    return [Tool(n, {"type": "object"}, recorded(n)) for n in names]


@pytest.fixture(scope="module")
def reenacted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Session, RunResult, list[dict[str, Any]]]:
    if not SESSION.is_file():
        pytest.skip("the shared real sessions are not here")
    session = load_session(SESSION).session
    replies = _replies(session)
    turns: Iterator[dict[str, Any]] = iter(replies)
    with ChatServer(lambda body: next(turns)) as srv:
        config = {"endpoint": {"base_url": srv.url, "model": session.header.model or "m"},
                  "sessions_dir": str(tmp_path_factory.mktemp("live")), "max_steps": len(replies),
                  "engine": {"compaction": {"input_budget_tokens": 96000}}}
        result = AgentRunner.from_config(config, tools=_tools(session)).run(session.messages[0].text)
    return session, result, srv.bodies


def test_r_run_1_a_real_session_runs_live_and_compacts(
        reenacted: tuple[Session, RunResult, list[dict[str, Any]]]) -> None:
    """R-RUN-1 on a real transcript: the recorded 140-step tool loop runs live to its recorded
    answer at a 96k budget; the runner compacts once the provider's count nears the line, and no
    request the model received passed the budget (the recording reached 167,094 prompt tokens)."""
    session, result, bodies = reenacted
    assert result.stop == "answered", result.error
    assert len(result.preparations) == len(bodies) > 100
    assert all(p.phase == "ready" for p in result.preparations)
    assert [p.step_index for p in result.preparations if p.compaction_applied] != []
    assert max(p.provider_prompt_tokens or 0 for p in result.preparations) < 96000
    recorded = max(m.usage.prompt_tokens for m in session.messages if m.usage is not None)
    assert recorded > 96000  # without the engine this run did not fit the budget


def test_r_run_1_a_real_session_names_real_recovery_files(
        reenacted: tuple[Session, RunResult, list[dict[str, Any]]]) -> None:
    """R-RUN-1 on a real transcript: every reduced output the model is told about is a real file
    in the session folder holding the original output; no request carries ``<session_dir>``."""
    _, result, bodies = reenacted
    wire = [json.dumps(b) for b in bodies]
    assert not any("<session_dir>" in w for w in wire)
    folder = (result.session_dir / "reduced-artifacts").resolve()
    texts = [str(m.get("content") or "") for b in bodies for m in b["messages"]]
    paths = {Path(p) for t in texts for p in _SAVED.findall(t)}
    assert paths and all(p.parent == folder and p.is_file() for p in paths)
    committed = {r.text for m in load_session(result.session_path).session.messages
                 for r in m.tool_results}  # the tool results as the runner committed them
    assert all(p.read_text(encoding="utf-8") in committed for p in paths)


def test_r_run_1_the_workbench_imports_the_real_live_session(
        reenacted: tuple[Session, RunResult, list[dict[str, Any]]]) -> None:
    """R-RUN-1 on a real transcript: the live session file imports as a native session with every
    answer's usage and the runner's compaction."""
    _, result, _ = reenacted
    imported = load_session(result.session_path).session
    assert len(imported.index.batches) == len(result.preparations)
    assert len(imported.compactions) == result.compactions
    assert all(m.usage is not None for m in imported.messages
               if m.role == "assistant" and not m.compaction_provided)
