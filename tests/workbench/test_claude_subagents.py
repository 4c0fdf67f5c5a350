"""Claude Code sub-agents and recorded compaction requests belong to their parent session, with one
id everywhere: importer, store, CLI, batch Parquet, notebook and the Messages page (R-TWIN-2).
The project folder in tests/fixtures/claude_project is written by its make_project.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from workbench.cli import main
from workbench.corpus.batch import read_table, run_batch
from workbench.importers import load_session
from workbench.importers.native import dumps_session, parse_native_lines
from workbench.notebook.tables import sessions as notebook_sessions
from workbench.storage.store import open_store
from workbench.views import subagents as subview

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "tests" / "fixtures" / "claude_project"
MAIN = PROJECT / "sess-proj.jsonl"
AGENT = PROJECT / "sess-proj" / "subagents" / "agent-a1b2c3d.jsonl"
COMPACT = PROJECT / "sess-proj" / "subagents" / "agent-acompact-9f8e7d.jsonl"
IDS = {"sess-proj", "sess-proj/agent-a1b2c3d", "sess-proj/agent-acompact-9f8e7d"}
APP = str(ROOT / "workbench" / "ui" / "app.py")


def test_r_twin_2_main_transcript_keeps_the_session_id_and_links_its_subagent():
    """R-TWIN-2: the main file is ``sess-proj``; its Task call → sub-agent ``sess-proj/agent-a1b2c3d``
    with what the parent recorded (2,345 tokens, 1 tool use)."""
    session = load_session(MAIN).session
    assert session.header.session_id == "sess-proj" and session.header.parent_id is None
    (run,) = session.subagents
    assert (run.call_id, run.agent_id, run.session_id) == ("toolu_task", "a1b2c3d", "sess-proj/agent-a1b2c3d")
    assert (run.recorded_tokens, run.recorded_tool_calls) == (2345, 1)


def test_r_twin_2_subagent_file_gets_its_own_id_linked_to_the_parent():
    """R-TWIN-2: a file whose lines carry the parent's sessionId and an agentId is the child
    ``<sessionId>/agent-<agentId>``, with parent_id and agent_id."""
    header = load_session(AGENT).session.header
    assert header.session_id == "sess-proj/agent-a1b2c3d"
    assert (header.parent_id, header.agent_id) == ("sess-proj", "a1b2c3d")


def test_r_twin_2_compaction_request_is_linked_to_the_recorded_compaction():
    """R-TWIN-2: agent-acompact-* is the agent's summary call: its prompt (150,513 tokens) is the
    compaction's real input and its usage the summary call's, on the parent's recorded compaction."""
    (comp,) = load_session(MAIN).session.compactions
    assert comp.request_session_id == "sess-proj/agent-acompact-9f8e7d"
    assert comp.request_usage is not None
    assert (comp.request_usage.prompt_tokens, comp.request_usage.output_tokens) == (150513, 800)
    request = load_session(COMPACT).session
    assert request.header.parent_id == "sess-proj" and request.header.agent_id == "acompact-9f8e7d"
    assert request.header.title == "Recorded compaction request of sess-proj"
    notice = subview.request_session_notice(request.header.agent_id, request.header.parent_id)
    assert notice is not None and "not unrecorded overhead" in notice


def test_r_twin_2_native_round_trip_keeps_the_links():
    """R-TWIN-2: the native format keeps the sub-agent links, the parent id and the request usage."""
    for path in (MAIN, AGENT):
        session = load_session(path).session
        assert parse_native_lines(dumps_session(session).splitlines()) == session


@pytest.mark.parametrize("order", [[str(PROJECT)], [str(AGENT), str(COMPACT), str(MAIN)]])
def test_r_twin_2_import_of_the_project_folder_keeps_one_id_per_file(order, capsys):
    """R-TWIN-2: ``workbench import DIR`` (or the files in any order) stores the main transcript
    as its sessionId and each child under its own id, linked to the parent."""
    assert main(["import", *order]) == 0
    with open_store() as store:
        by_id = {s.id: s for s in store.list_sessions()}
        assert set(by_id) == IDS
        assert {c.id for c in store.children("sess-proj")} == IDS - {"sess-proj"}
        assert by_id["sess-proj"].parent_id is None
    frame = notebook_sessions()
    assert dict(zip(frame["id"], frame["parent_id"], strict=True))["sess-proj/agent-a1b2c3d"] == "sess-proj"


def test_r_twin_2_inspect_json_shows_the_subagent_calls_and_tokens(capsys):
    """R-TWIN-2: ``inspect --json`` of the main file: the Task call → the sub-agent's 2 model calls,
    1 tool call and its tokens (read from the subagents folder), and the compaction request."""
    assert main(["inspect", "--json", str(MAIN)]) == 0
    data = json.loads(capsys.readouterr().out)
    (agent,) = data["subagents"]
    assert agent["call_id"] == "toolu_task" and agent["imported"] is True
    assert (agent["model_calls"], agent["tool_calls"]) == (2, 1)
    assert (agent["prompt_tokens"], agent["output_tokens"]) == (913 + 1213, 5 + 40)
    (request,) = data["compaction_requests"]
    assert request["prompt_tokens"] == 150513 and request["at_message"] == 4


def test_r_twin_2_batch_parquet_uses_the_store_ids(tmp_path):
    """R-TWIN-2: the batch tables name each file by the same id as the store, with parent_id."""
    summary = run_batch([None], [PROJECT], tmp_path / "out")
    assert summary.failed == []
    frame = read_table(tmp_path / "out", "sessions")
    assert set(frame["session"]) == IDS
    parents = {s: p if isinstance(p, str) else None
               for s, p in zip(frame["session"], frame["parent_id"], strict=True)}
    assert parents["sess-proj/agent-a1b2c3d"] == "sess-proj" and parents["sess-proj"] is None


def test_r_twin_2_messages_page_lists_the_subagent_on_the_parent(tmp_path):
    """R-TWIN-2: the parent's Messages page has the Sub-agents table (the Task call → 2 model
    calls, 1 tool call) and the compaction request line; the request's page says what it is."""
    assert main(["import", "--quiet", str(PROJECT)]) == 0
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["session"] = "sess-proj"
    at.run()
    at.switch_page("../pages/messages.py").run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "Sub-agent session" in df.value.columns)
    assert table["Tool call"].tolist() == ["toolu_task"]
    assert table["Model calls"].tolist() == [2] and table["Tool calls"].tolist() == [1]
    assert any("150,513 prompt tokens" in t.value for t in at.text)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["session"] = "sess-proj/agent-acompact-9f8e7d"
    at.run()
    at.switch_page("../pages/messages.py").run()
    assert not at.exception
    assert any("recorded compaction request of session sess-proj" in i.value for i in at.info)


def test_r_twin_2_usage_page_of_a_compaction_request_names_its_prompt_as_compaction_input():
    """R-TWIN-2: the Usage page of an agent-acompact session says that its prompt is the parent's
    conversation, the compaction's real input, and how to read the overhead figure."""
    assert main(["import", "--quiet", str(COMPACT)]) == 0
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["session"] = "sess-proj/agent-acompact-9f8e7d"
    at.run()
    at.switch_page("../pages/usage.py").run()
    assert not at.exception, at.exception
    notes = [i.value for i in at.info if "recorded compaction request of session sess-proj" in i.value]
    assert notes and "Compaction input (parent's conversation)" in notes[0]
    labels = [m.label for m in at.metric]
    assert "Compaction input (parent's conversation)" in labels and "Unrecorded overhead" not in labels


def test_r_twin_2_cli_replay_of_a_compaction_request_never_calls_its_prompt_overhead(capsys):
    """R-TWIN-2: ``workbench replay`` of an agent-acompact transcript names the part of its prompt
    the transcript does not hold as the compaction's input; a main transcript keeps 'overhead'."""
    assert main(["replay", str(COMPACT)]) == 0
    printed = capsys.readouterr().out
    assert "compaction input (the parent's conversation" in printed
    assert "unrecorded overhead" not in printed
    assert main(["replay", str(MAIN)]) == 0
    assert "unrecorded overhead" in capsys.readouterr().out


def test_r_twin_2_task_card_shows_its_subagent_linked_on_messages_and_step_through():
    """R-TWIN-2: the card of the Task call that ran a sub-agent shows the sub-agent's calls,
    tokens and bill with a link to its own session, on Messages and on Step-through; the table
    at the top of Messages links to it too."""
    from workbench.pricing.billing import recorded_bill
    from workbench.services.messages import subagent_calls

    assert main(["import", "--quiet", str(PROJECT)]) == 0
    with open_store() as store:
        run = subagent_calls(store, "sess-proj")["toolu_task"]
        bill = recorded_bill(store.session("sess-proj/agent-a1b2c3d")).usd
    assert run["stored_id"] == "sess-proj/agent-a1b2c3d" and bill is not None
    assert run["billed_usd"] == bill
    card = subview.subagent_card(run)
    link = "messages?session=sess-proj%2Fagent-a1b2c3d"
    assert "2 model calls, 1 tool call" in card and f"billed ${bill:,.4f}" in card
    assert f"({link})" in card
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["session"] = "sess-proj"
    at.run()
    at.switch_page("../pages/messages.py").run()
    assert not at.exception, at.exception
    assert card in [m.value for m in at.markdown]
    table = next(df.value for df in at.dataframe if "Sub-agent session" in df.value.columns)
    assert table["Open"].tolist() == [link]
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["session"] = "sess-proj"
    at.query_params["step"] = "1"  # its request holds the Task call (message 1)
    at.run()
    at.switch_page("../pages/step_through.py").run()
    assert not at.exception, at.exception
    assert card in [m.value for m in at.markdown]


def test_r_twin_2_compaction_request_states_the_input_its_parent_states():
    """R-TWIN-2/R-TWIN-5: the Usage page and the CLI of an agent-acompact session give the
    compaction's input as the parent does (150,513 prompt tokens), never 0."""
    assert main(["import", "--quiet", str(PROJECT)]) == 0
    from workbench.analysis.session_counts import compaction_requests

    with open_store() as store:
        (request,) = subview.compaction_request_lines(compaction_requests(store.session("sess-proj")))
    assert "150,513 prompt tokens" in request
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["session"] = "sess-proj/agent-acompact-9f8e7d"
    at.run()
    at.switch_page("../pages/usage.py").run()
    assert not at.exception, at.exception
    metric = next(m for m in at.metric if m.label == "Compaction input (parent's conversation)")
    assert metric.value == "150,513"
