"""context_read / context_search over committed messages (R-POL-3…6)."""

from __future__ import annotations

import pytest
from iris.context.access import (
    ContextAccessPort,
    ContextReadParams,
    ContextSearchParams,
)
from iris.errors import ContextAccessError
from iris.session import ImageBlock, Message, TextBlock, ToolCallBlock, ToolResultBlock

BODY = "αβγ" + "".join(f"line {i}\n" for i in range(2000))


def _messages(artifact: str | None = None) -> list[Message]:
    return [
        Message(role="user", content=(TextBlock(text="Please fix the Straße parser"),)),
        Message(role="assistant", content=(TextBlock(text="Looking."), ToolCallBlock(id="c1", name="Read",
                                                                                    arguments={"file_path": "p.py"}))),
        Message(role="tool", content=(ToolResultBlock(call_id="c1", text=BODY, artifact_path=artifact),)),
        Message(role="user", content=(ImageBlock(name="screen.png", original_ref="img/1.png", model_ref="m/1.png"),)),
    ]


@pytest.fixture
def port(tmp_path):
    raw = tmp_path / "tool-outputs" / "read-abc.txt"
    raw.parent.mkdir()
    raw.write_text("RAW FULL OUTPUT " * 10)
    return ContextAccessPort({"s1": _messages(str(raw)), "s2": _messages()}, artifact_root=tmp_path)


def test_r_pol_4_read_pages_in_characters(port):
    """R-POL-4: offsets are str indices; next_offset/has_more paginate to the end."""
    first = port.read("s1", ContextReadParams(ref="result:2:0", limit=5))
    assert first.content == "αβγli" and (first.next_offset, first.has_more) == (5, True)
    chunks, offset = [], 0
    while True:
        page = port.read("s1", ContextReadParams(ref="result:2:0", offset=offset, limit=8000))
        chunks.append(page.content)
        offset = page.next_offset
        if not page.has_more:
            break
    assert "".join(chunks) == BODY and len(chunks) == -(-len(BODY) // 8000)


def test_r_pol_4_message_ref_and_image_text(port):
    """R-POL-4: message refs read the message text; images name their original/model refs."""
    page = port.read("s1", ContextReadParams(ref="message:3"))
    assert "screen.png" in page.content and "img/1.png" in page.content and "m/1.png" in page.content
    assert port.read("s1", ContextReadParams(ref="message:0")).content == "Please fix the Straße parser"


def test_r_pol_4_raw_only_for_results_with_artifact(port):
    """R-POL-4: raw reads the artifact; inline results and message refs reject it."""
    raw = port.read("s1", ContextReadParams(ref="result:2:0", representation="raw", limit=16))
    assert raw.content == "RAW FULL OUTPUT " and raw.has_more
    with pytest.raises(ContextAccessError, match="raw"):
        port.read("s2", ContextReadParams(ref="result:2:0", representation="raw"))
    with pytest.raises(ContextAccessError, match="raw"):
        port.read("s1", ContextReadParams(ref="message:0", representation="raw"))


def test_r_pol_4_artifact_outside_roots_refused(tmp_path):
    """R-POL-4: raw never reads files outside the session's directories."""
    outside = tmp_path.parent / "elsewhere.txt"
    outside.write_text("secret")
    port = ContextAccessPort({"s": _messages(str(outside))}, artifact_root=tmp_path / "session")
    with pytest.raises(ContextAccessError, match="outside"):
        port.read("s", ContextReadParams(ref="result:2:0", representation="raw"))


@pytest.mark.parametrize("kw,match", [
    ({"ref": "result:9:0"}, "does not exist"), ({"ref": "result:0:0"}, "not a tool result"),
    ({"ref": "result:2:5"}, "not a tool result"), ({"ref": "message:2", "offset": 10**7}, "beyond the end"),
])
def test_r_pol_4_bad_refs_are_clear_errors(port, kw, match):
    """R-POL-4: a reference that does not exist is a clear error."""
    with pytest.raises(ContextAccessError, match=match):
        port.read("s1", ContextReadParams(**kw))


@pytest.mark.parametrize("kw", [{"ref": "msg:1"}, {"ref": "result:1"}, {"ref": "message:-1"},
                                {"ref": "message:1", "limit": 0}, {"ref": "message:1", "limit": 8001},
                                {"ref": "message:1", "offset": -1}, {"ref": "message:1", "limit": True},
                                {"ref": "message:1", "representation": "html"}])
def test_r_pol_4_param_bounds(kw):
    """R-POL-4: ref syntax, offset ≥ 0, limit 1–8000, representation text|raw."""
    with pytest.raises(ContextAccessError):
        ContextReadParams(**kw)
    assert ContextReadParams(ref="message:1", limit=8000).limit == 8000


@pytest.mark.parametrize("kw", [{"query": "  "}, {"query": "x", "after": -1}, {"query": "x", "limit": 0},
                                {"query": "x", "limit": 21}, {"query": 3}])
def test_r_pol_5_search_param_bounds(kw):
    """R-POL-5: query non-blank, after ≥ 0, limit 1–20."""
    with pytest.raises(ContextAccessError):
        ContextSearchParams(**kw)


def test_r_pol_5_casefold_one_match_per_message_with_tool_name(port):
    """R-POL-5: Unicode casefold substring match; one match per message; tool results name their tool."""
    page = port.search("s1", ContextSearchParams(query="STRASSE"))
    assert [m.ref for m in page.matches] == ["message:0"]
    lines = port.search("s1", ContextSearchParams(query="LINE 1"))
    assert [(m.ref, m.tool_name, m.role) for m in lines.matches] == [("result:2:0", "Read", "tool")]
    img = port.search("s1", ContextSearchParams(query="m/1.png"))
    assert [m.ref for m in img.matches] == ["message:3"]
    assert not port.search("s1", ContextSearchParams(query="RAW FULL")).matches  # artifacts are not opened


def test_r_pol_5_scan_window_and_pagination():
    """R-POL-5: at most 200 messages per call; has_more with no matches; next_after continues; limit."""
    msgs = [Message(role="user", content=(TextBlock(text=f"filler {i}"),)) for i in range(450)]
    msgs[300] = Message(role="user", content=(TextBlock(text="the needle"),))
    for i in (400, 401, 402):
        msgs[i] = Message(role="user", content=(TextBlock(text=f"needle {i}"),))
    port = ContextAccessPort(lambda sid: msgs if sid == "s" else None)
    p1 = port.search("s", ContextSearchParams(query="needle"))
    assert (p1.matches, p1.next_after, p1.has_more) == ((), 200, True)
    p2 = port.search("s", ContextSearchParams(query="needle", after=p1.next_after, limit=2))
    assert [m.ref for m in p2.matches] == ["message:300"] and (p2.next_after, p2.has_more) == (400, True)
    p3 = port.search("s", ContextSearchParams(query="needle", after=p2.next_after, limit=2))
    assert [m.ref for m in p3.matches] == ["message:400", "message:401"] and p3.next_after == 402
    p4 = port.search("s", ContextSearchParams(query="needle", after=p3.next_after))
    assert [m.ref for m in p4.matches] == ["message:402"] and (p4.next_after, p4.has_more) == (450, False)
    with pytest.raises(ContextAccessError, match="unknown session"):
        port.search("other", ContextSearchParams(query="x"))
