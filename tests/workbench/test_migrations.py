"""Store migrations (STYLE 9): numbered, applied once, from a blank database and from every
previous schema (R-UI-1: the store that keeps imported sessions)."""

from __future__ import annotations

import re

from sqlite_utils import Database

from workbench.storage.migrations import MIGRATIONS, apply_migrations, migration_names


def _schema(db: Database) -> dict[str, list[tuple[str, str]]]:
    return {t: [(c.name, c.type) for c in db[t].columns] for t in sorted(db.table_names())
            if t != MIGRATIONS.migrations_table}


def test_r_ui_1_migrations_are_numbered_in_order():
    names = migration_names()
    assert names[0] == "m001_initial"
    assert all(re.fullmatch(r"m\d{3}_[a-z0-9_]+", n) for n in names)
    assert list(names) == sorted(names)


def test_r_ui_1_blank_database_gets_sessions_and_messages(tmp_path):
    db = Database(tmp_path / "blank.db")
    apply_migrations(db)
    assert {"sessions", "messages"} <= set(db.table_names())
    assert [c.name for c in db["sessions"].columns] == [
        "id", "title", "format", "source_path", "content_hash", "message_count", "response_count",
        "tool_call_count", "estimated_tokens", "imported_at", "header_json", "extras_json",
        "unplaced_count", "unplaced_json", "parent_id"]
    assert db.table("messages").pks == ["session_id", "idx"]
    assert any(ix.unique and ix.columns == ["content_hash"] for ix in db.table("sessions").indexes)
    assert [m.name for m in MIGRATIONS.applied(db)] == list(migration_names())


def test_r_ui_1_applying_twice_is_a_no_op(tmp_path):
    db = Database(tmp_path / "twice.db")
    apply_migrations(db)
    before = _schema(db)
    apply_migrations(db)
    assert _schema(db) == before
    assert db[MIGRATIONS.migrations_table].count == len(migration_names())


def test_r_ui_1_every_previous_schema_upgrades_to_the_newest(tmp_path):
    full = Database(tmp_path / "full.db")
    apply_migrations(full)
    for i, name in enumerate(migration_names()):
        db = Database(tmp_path / f"from-{i}.db")
        MIGRATIONS.apply(db, stop_before=name)  # the schema as it was before `name` shipped
        assert len(MIGRATIONS.applied(db)) == i
        apply_migrations(db)
        assert _schema(db) == _schema(full)
