"""SWE-agent trajectories (.traj, 1.x function calling and 0.x thought/action) (R-SES-4, R-SES-5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iris.errors import SessionFormatError

from workbench.importers import detect_format, load_session

FIX = Path(__file__).parents[1] / "fixtures" / "importers"


def test_r_ses_4_swe_agent_1x_function_calling():
    """R-SES-4: 1.x history → messages; tool_calls pair with tool messages by tool_call_ids."""
    result = load_session(FIX / "swe_agent_1x.traj")
    s = result.session
    assert result.format == "swe_agent" == detect_format(FIX / "swe_agent_1x.traj")
    assert [m.role for m in s.messages] == ["system", "user"] + ["assistant", "tool"] * 3
    calls = [b for m in s.messages for b in m.content if b.type == "tool_call"]
    results = [b for m in s.messages for b in m.content if b.type == "tool_result"]
    assert [c.id for c in calls] == [r.call_id for r in results] == ["call_view", "call_edit", "call_submit"]
    assert calls[1].arguments["new_str"] == "sum(range(n + 1))"
    assert s.index.orphan_results == ()
    assert s.header.model == "gpt-4o-2024-08-06" and s.header.title.startswith("demo__sums-1")
    assert s.messages[1].text.startswith("<uploaded_files>")


def test_r_ses_2_swe_agent_has_honest_no_usage():
    """R-SES-2: no per-request usage in a trajectory: none is invented, and a warning gives the
    recorded totals."""
    result = load_session(FIX / "swe_agent_1x.traj")
    assert all(m.usage is None for m in result.session.messages)
    [note] = [w.problem for w in result.warnings if "model_stats" in w.problem]
    assert "no per-request usage" in note and "tokens_sent=4210" in note and "api_calls=3" in note


def test_r_ses_4_swe_agent_0x_thought_action():
    """R-SES-4: 0.x has no tool calls: observations stay user messages; an empty response text is
    rebuilt from thought + action; the demonstration is kept; the title skips it."""
    result = load_session(FIX / "swe_agent_0x.traj")
    s = result.session
    assert result.format == "swe_agent"
    assert [m.role for m in s.messages] == ["system", "user", "user", "assistant", "user",
                                            "assistant", "user", "assistant"]
    assert not any(b.type == "tool_call" for m in s.messages for b in m.content)
    assert s.messages[-1].text == "DISCUSSION\nDone.\n\nsubmit"
    assert s.header.title.startswith("We're currently solving")


def test_r_ses_4_swe_agent_other_agent_left_out(tmp_path):
    doc = json.loads((FIX / "swe_agent_0x.traj").read_text())
    doc["history"].append({"role": "user", "content": "sub-agent chatter", "agent": "reviewer"})
    path = tmp_path / "x.traj"
    path.write_text(json.dumps(doc))
    result = load_session(path)
    assert "sub-agent chatter" not in [m.text for m in result.session.messages]
    assert any("agent 'reviewer'" in w.problem for w in result.warnings)


def test_r_ses_4_swe_agent_from_last_step_messages(tmp_path):
    """Without history, the last step's messages plus its response are the conversation."""
    doc = json.loads((FIX / "swe_agent_1x.traj").read_text())
    del doc["history"]
    path = tmp_path / "steps.traj"
    path.write_text(json.dumps(doc))
    s = load_session(path).session
    assert s.messages[-1].role == "assistant" and s.messages[-1].text.startswith("Fixed; submitting.")
    assert len(s.messages) == 7


def test_r_ses_5_swe_agent_bad_message_names_its_field(tmp_path):
    """R-SES-5: a bad history entry names history[i] and the field; lenient skips it."""
    doc = json.loads((FIX / "swe_agent_1x.traj").read_text())
    doc["history"][2]["tool_calls"][0]["function"] = "oops"
    path = tmp_path / "bad.traj"
    path.write_text(json.dumps(doc, indent=1))
    with pytest.raises(SessionFormatError) as err:
        load_session(path)
    field = err.value.field
    assert field is not None and field.startswith("history[2].tool_calls[0].function")
    assert "bad.traj" in str(err.value)
    lenient = load_session(path, lenient=True)
    assert lenient.skipped and lenient.skipped[0].problem.startswith("[history[2]")


def test_r_ses_5_truncated_traj_is_one_clear_error(tmp_path):
    text = (FIX / "swe_agent_1x.traj").read_text()
    path = tmp_path / "cut.traj"
    path.write_text(text[: len(text) // 2])
    assert detect_format(path) == "swe_agent"  # judged by its leading keys
    with pytest.raises(SessionFormatError, match="not valid JSON") as err:
        load_session(path)
    assert err.value.line and err.value.line > 1


def test_r_red_swe_agent_and_otel_tools_use_the_chat_tool_names():
    """R-RED: tool kinds of SWE-agent and OpenTelemetry sessions come from the OpenAI chat agents'
    table: their importers state the ``chat`` tool dialect on the header, the engine reads it."""
    from iris.reduction import ToolKindMap

    for name in ("swe_agent_1x.traj", "swe_agent_0x.traj", "otel_otlp.json", "mini_swe.traj.json"):
        header = load_session(FIX / name).session.header
        assert header.tool_dialect == "chat", name
        kinds = ToolKindMap.for_dialect(header.tool_dialect)
        assert (kinds.kind("read_file"), kinds.kind("bash"), kinds.kind("find_file")) == ("read", "shell", "glob")
        assert kinds.kind_of_call("str_replace_editor", {"command": "view"}) == "read"


def test_r_ses_4_swe_agent_tool_message_without_ids_is_an_observation(tmp_path):
    doc = json.loads((FIX / "swe_agent_1x.traj").read_text())
    doc["history"].append({"role": "tool", "content": "late observation", "agent": "main"})
    path = tmp_path / "x.traj"
    path.write_text(json.dumps(doc))
    result = load_session(path)
    assert (result.session.messages[-1].role, result.session.messages[-1].text) == ("user", "late observation")
    assert any("without tool_call_ids" in w.problem for w in result.warnings)
