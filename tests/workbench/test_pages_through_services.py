"""Pages are thin (docs/architecture.md, "Services and pages"): a page reads its widgets, calls a
service and draws what views make of the result. It may hold the store the sidebar opened and hand
it to a service or a page part, but it calls none of the store's methods itself; the contract
"Pages import no storage" keeps storage imports out of the pages."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "pages").glob("*.py"))


def _store_calls(source: str) -> list[str]:
    """``store.method(...)`` and ``get_store().method(...)`` calls in a page's source, as
    ``line: method``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if ((isinstance(owner, ast.Name) and owner.id == "store")
                    or (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Attribute | ast.Name)
                        and getattr(owner.func, "attr", getattr(owner.func, "id", "")) == "get_store")):
                found.append(f"{node.lineno}: {node.func.attr}")
    return found


def test_the_check_finds_a_store_call():
    """R-UI-1 (thin pages): the check below sees a direct call, through a name or the sidebar's store."""
    assert _store_calls("store = get_store()\nrows = store.list_sessions()\n") == ["2: list_sessions"]
    assert _store_calls("h = state.get_store().header(sid)\n") == ["1: header"]
    assert _store_calls("opened = open_usage(store, sid, rid)\n") == []


def test_no_page_calls_a_method_of_the_store():
    """R-UI-1 (thin pages): every page reaches the store through services (workbench.services)."""
    assert len(PAGES) > 10
    calls = {p.name: found for p in PAGES if (found := _store_calls(p.read_text("utf-8")))}
    assert calls == {}
