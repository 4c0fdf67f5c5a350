"""The persistence boundary: only ``workbench.storage`` touches the
database. Outside it no module reaches a store's connection (``.db``), writes SQL against the
store's tables, or imports a store module's private helpers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE_TABLES = ("sessions", "messages", "replays", "preparations", "stages", "decisions",
                "requests", "request_messages", "request_bodies", "archives", "configurations",
                "template_snapshots", "step_chunks", "preparation_ids", "request_parts")
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b.*\b(FROM|INTO|SET)\s+(" +
                 "|".join(STORE_TABLES) + r")\b", re.IGNORECASE | re.DOTALL)


def _outside_storage() -> list[Path]:
    files = [*(ROOT / "workbench").rglob("*.py"), *(ROOT / "pages").rglob("*.py")]
    return [f for f in files if "storage" not in f.relative_to(ROOT).parts]


def test_no_module_outside_storage_reaches_the_database_connection():
    found = []
    for path in _outside_storage():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("db", "_db"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"database connection used outside workbench.storage: {found}"


def test_no_sql_on_store_tables_outside_storage():
    found = []
    for path in _outside_storage():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and SQL.search(node.value):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"SQL on the store's tables outside workbench.storage: {found}"


def test_no_private_storage_helper_is_imported_elsewhere():
    found = []
    for path in [*_outside_storage(), *(ROOT / "workbench" / "storage").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and (
                    "storage" in node.module or node.module.endswith(("store", "evidence"))):
                private = [a.name for a in node.names
                           if a.name.startswith("_") and not a.name.startswith("__")]
                if private and path.parent.name != "storage":
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {private}")
    assert not found, f"private storage helpers imported across modules: {found}"
