"""R-RED: the importer states whose tool names a transcript uses (``SessionHeader.tool_dialect``);
the engine reads the tool kinds by that dialect and knows no importer's format name. Sessions
stored or exported before headers stated it get it from the format that wrote them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from iris.reduction import ToolKindMap

from workbench.importers import load_session
from workbench.importers.native import dump_session, load_native
from workbench.importers.registry import BUILTIN, tool_dialect
from workbench.storage.store import Store

FIX = Path(__file__).parents[1] / "fixtures" / "importers"


def test_r_red_each_importer_states_its_tool_dialect():
    """Every built-in importer declares its dialect in one place; loading states it."""
    assert {b.name: b.dialect for b in BUILTIN} == {
        "native": None, "codex": "codex", "claude_code": "claude", "swe_agent": "chat",
        "otel": "chat", "openai_chat": "chat"}
    for name, dialect in [("codex_basic.jsonl", "codex"), ("claude_compact.jsonl", "claude"),
                          ("chat_array.json", "chat"), ("otel_legacy.jsonl", "chat")]:
        assert load_session(FIX / name).session.header.tool_dialect == dialect, name
    assert ToolKindMap.for_dialect(tool_dialect("codex")).kind("apply_patch") == "edit"


def test_r_red_a_native_file_without_a_dialect_gets_it_from_its_source_format(tmp_path):
    """A native file written before headers stated the dialect: its source format names it."""
    session = load_session(FIX / "codex_basic.jsonl").session
    path = dump_session(session, tmp_path / "codex.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["tool_dialect"] == "codex"
    del header["tool_dialect"]
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert load_native(path).header.tool_dialect is None  # the file does not say
    assert load_session(path).session.header.tool_dialect == "codex"


def test_r_red_a_stored_session_without_a_dialect_gets_it_from_its_source_format(tmp_path):
    """A session a store kept before headers stated the dialect reads back with it."""
    db = tmp_path / "workbench.db"
    with Store(db) as store:
        session_id = store.import_file(FIX / "codex_basic.jsonl").session_id
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT header_json FROM sessions WHERE id = ?", [session_id]).fetchone()
        header = json.loads(text)
        assert header.pop("tool_dialect") == "codex"
        conn.execute("UPDATE sessions SET header_json = ? WHERE id = ?", [json.dumps(header), session_id])
    with Store(db) as store:
        assert store.session(session_id).header.tool_dialect == "codex"


def test_r_red_a_header_without_a_dialect_serialises_without_the_key():
    """Like ``agent_version``: None is left out of the serialised header."""
    session = load_session(FIX / "codex_basic.jsonl").session
    assert "tool_dialect" in session.header.model_dump(mode="json")
    bare = session.header.model_copy(update={"tool_dialect": None})
    assert "tool_dialect" not in bare.model_dump(mode="json")
