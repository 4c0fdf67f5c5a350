"""Reduction of the real transcripts in ../shared/real-sessions (a decision per tool result)."""

from __future__ import annotations

import pytest
from iris.context.policy import ContextPolicy
from iris.reduction import ReductionConfig, ReductionMemory, ToolKindMap, reduce_request
from iris.session import ToolResultBlock

FILES = ["claude_code/spotter_subagent_session.jsonl",
         "codex_rollout/rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl",
         "openai_chat/pvlib__pvlib-python-1707.deepseek_reasoner.traj.json"]


@pytest.mark.parametrize("name", FILES)
def test_r_red_1_real_transcripts_get_a_decision_per_result(real_sessions, name, tmp_path):
    """R-RED-1/3: every tool result of a real transcript gets exactly one decision, at every step."""
    from workbench.importers import load_session

    session = load_session(real_sessions / name).session
    kinds = ToolKindMap(format=session.header.source_format)
    messages = session.messages
    asst = [i for i, m in enumerate(messages) if m.role == "assistant"]
    state, memory = None, ReductionMemory()
    for cut in [*asst[1:], len(messages)]:
        prefix = messages[:cut]
        res = reduce_request(prefix, config=ReductionConfig(), policy=ContextPolicy(), state=state,
                             work_dir=tmp_path, tool_kinds=kinds, memory=memory)
        state = res.state
        refs = {f"result:{mi}:{bi}" for mi, m in enumerate(prefix) for bi, b in enumerate(m.content)
                if isinstance(b, ToolResultBlock)}
        assert {d.ref for d in res.decisions} == refs and len(res.decisions) == len(refs)
        assert res.tokens_after <= res.tokens_before
        assert all(d.reason and d.rule for d in res.decisions)
    assert refs, "the transcript has tool results"
    assert all(d.kind != "other" for d in res.decisions if d.tool_name in ("Read", "Bash", "bash", "exec_command"))
