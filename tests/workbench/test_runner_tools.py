"""R-POL-3 / R-POL-6 / R-CMP-12: the runner provides context_read and context_search (and
compact_context when model-driven), counted in the request, and the read-back port only reads
committed material."""

from pathlib import Path

from iris.config import parse_config
from iris.context import ContextAccessPort, ContextReadParams, ContextSearchParams
from iris.replay import replay
from iris.session import Message, Session, SessionHeader, TextBlock, ToolCallBlock, ToolResultBlock, Usage

from workbench.importers.native import load_native

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


def _tiny() -> Session:
    msgs = (Message(role="user", content=(TextBlock(text="list the files"),)),
            Message(role="assistant", content=(ToolCallBlock(id="c1", name="Bash", arguments={"command": "ls"}),),
                    usage=Usage(input_tokens=900)),
            Message(role="tool", content=(ToolResultBlock(call_id="c1", text="a.py\nb.py"),)),
            Message(role="assistant", content=(TextBlock(text="Two files."),), usage=Usage(input_tokens=950)))
    return Session(header=SessionHeader(session_id="tiny"), messages=msgs)


def test_r_pol_3_runner_provides_read_back_tools_only_with_policy_on():
    on = replay(_tiny())
    off = replay(_tiny(), parse_config({"context_policy": {"enabled": False}}))
    assert set(on.preparations[-1].final_tools) == {"context_read", "context_search"}
    assert off.preparations[-1].final_tools == ()
    # their schemas count in the whole-request estimate (R-TOK-2)
    assert on.preparations[-1].final_input_tokens > off.preparations[-1].final_input_tokens


def test_r_cmp_12_model_driven_adds_compact_context_and_deferral_keeps_engine_tools():
    cfg = parse_config({"compaction": {"model_driven": True}, "context_policy": {"deferred_tools": True}})
    prep = replay(_tiny(), cfg).preparations[-1]
    assert set(prep.final_tools) == {"context_read", "context_search", "compact_context"}


def test_r_pol_6_port_reads_and_searches_committed_messages_only():
    session = load_native(SAMPLES / "bugfix.jsonl")
    committed = {"s": session.messages[:20]}
    port = ContextAccessPort(committed)
    page = port.read("s", ContextReadParams(ref="message:1"), None)
    assert page.offset == 0 and page.content and session.messages[1].text.startswith(page.content)
    hits = port.search("s", ContextSearchParams(query="def "))
    assert all(int(m.ref.split(":")[1]) < 20 for m in hits.matches)
