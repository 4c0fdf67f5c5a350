"""Numbered schema migrations of the SQLite store, registered with ``sqlite_utils.Migrations``.

Each migration is a function ``mNNN_name(db)`` that sqlite-utils runs once, inside a transaction,
and records in its ``_sqlite_migrations`` table. Shipped migrations are never edited: a later
issue that needs a table or a column appends ``m002_…``, ``m003_…`` below (registration order is
application order), and a test applies them to a blank database and to the previous schema.
"""

from __future__ import annotations

import json
import zlib

from sqlite_utils import Database, Migrations

from ._sql import typed

__all__ = ["MIGRATIONS", "STEP_FIGURE_COLUMNS", "apply_migrations", "migration_names", "pack",
           "record_without_decisions", "unpack"]

#: The one migration set of the workbench store.
MIGRATIONS = Migrations("context-workbench")


@MIGRATIONS()
def m001_initial(db: Database) -> None:
    """Sessions and their messages."""
    db.table("sessions").create(
        {
            "id": str,
            "title": str,
            "format": str,
            "source_path": str,
            "content_hash": str,
            "message_count": int,
            "response_count": int,
            "tool_call_count": int,
            "estimated_tokens": int,
            "imported_at": str,
            "header_json": str,
            "extras_json": str,
        },
        pk="id",
        not_null={"title", "format", "content_hash", "imported_at", "header_json", "extras_json"},
    )
    db.table("sessions").create_index(["content_hash"], unique=True)
    db.table("messages").create(
        {"session_id": str, "idx": int, "role": str, "json": str},
        pk=("session_id", "idx"),
        foreign_keys=[("session_id", "sessions", "id")],
        not_null={"role", "json"},
    )


#: Evidence tables. Raw SQL because sqlite-utils cannot declare ON DELETE CASCADE: the
#: store turns foreign keys on, so deleting a session removes its replays and deleting a replay
#: removes every row below it, without either delete having to know the other's tables.
_M002_TABLES = (
    """CREATE TABLE configurations (
        hash TEXT PRIMARY KEY, json TEXT NOT NULL, yaml TEXT NOT NULL, created_at TEXT NOT NULL)""",
    """CREATE TABLE template_snapshots (
        id TEXT PRIMARY KEY, sources_json TEXT NOT NULL, created_at TEXT NOT NULL)""",
    """CREATE TABLE replays (
        id TEXT PRIMARY KEY, name TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        configuration_hash TEXT REFERENCES configurations(hash),
        template_snapshot_id TEXT REFERENCES template_snapshots(id),
        configuration_snapshot_id TEXT NOT NULL, summariser TEXT NOT NULL, created_at TEXT NOT NULL,
        step_count INTEGER NOT NULL, ready_count INTEGER NOT NULL, failed_count INTEGER NOT NULL,
        cancelled_count INTEGER NOT NULL, compactions_applied INTEGER NOT NULL,
        final_tokens INTEGER NOT NULL, record_schema_version INTEGER NOT NULL,
        extras_json TEXT NOT NULL, UNIQUE (session_id, name))""",
    """CREATE TABLE preparations (
        replay_id TEXT NOT NULL REFERENCES replays(id) ON DELETE CASCADE,
        step_index INTEGER NOT NULL, preparation_id TEXT NOT NULL, phase TEXT NOT NULL,
        response_message_index INTEGER NOT NULL, final_input_tokens INTEGER NOT NULL,
        provider_prompt_tokens INTEGER, provider_usage_kind TEXT NOT NULL,
        input_budget INTEGER NOT NULL, pressure_line INTEGER NOT NULL, reminder_line INTEGER,
        compaction_applied INTEGER NOT NULL, message_count INTEGER NOT NULL,
        error_stage TEXT, error_kind TEXT, error_message TEXT, final_request_ref TEXT,
        json TEXT NOT NULL, PRIMARY KEY (replay_id, step_index))""",
    "CREATE INDEX preparations_by_id ON preparations (preparation_id)",
    """CREATE TABLE stages (
        replay_id TEXT NOT NULL REFERENCES replays(id) ON DELETE CASCADE,
        step_index INTEGER NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL,
        status TEXT NOT NULL, before_input_tokens INTEGER NOT NULL,
        after_input_tokens INTEGER NOT NULL, decision_count INTEGER NOT NULL, note TEXT NOT NULL,
        PRIMARY KEY (replay_id, step_index, position))""",
    """CREATE TABLE decisions (
        replay_id TEXT NOT NULL REFERENCES replays(id) ON DELETE CASCADE,
        step_index INTEGER NOT NULL, stage TEXT NOT NULL, position INTEGER NOT NULL,
        kind TEXT NOT NULL, message_index INTEGER, ref TEXT, reason TEXT NOT NULL,
        json TEXT NOT NULL, PRIMARY KEY (replay_id, step_index, stage, position))""",
    "CREATE INDEX decisions_by_kind ON decisions (replay_id, kind, step_index)",
    """CREATE TABLE request_messages (
        replay_id TEXT NOT NULL REFERENCES replays(id) ON DELETE CASCADE,
        id INTEGER NOT NULL, hash TEXT NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY (replay_id, id), UNIQUE (replay_id, hash))""",
    """CREATE TABLE requests (
        replay_id TEXT NOT NULL REFERENCES replays(id) ON DELETE CASCADE,
        ref TEXT NOT NULL, skeleton BLOB NOT NULL, PRIMARY KEY (replay_id, ref))""",
    """CREATE TABLE archives (
        replay_id TEXT NOT NULL REFERENCES replays(id) ON DELETE CASCADE,
        n INTEGER NOT NULL, step_index INTEGER, path TEXT NOT NULL, text TEXT NOT NULL,
        checkpoint_text TEXT NOT NULL, PRIMARY KEY (replay_id, n))""",
)


@MIGRATIONS()
def m002_evidence(db: Database) -> None:
    """Configurations, template snapshots, named replays and their preparations.

    A replay's preparations keep one JSON row each (loaded lazily, one step at a time) next to
    the scalar columns the usage and failure views read for every step at once; stages and
    decisions are normalised so they can be queried by status or kind. Final requests are stored
    as a compressed skeleton pointing at de-duplicated message rows, because consecutive steps
    resend almost the same messages.
    """
    for statement in _M002_TABLES:
        typed(db).execute(statement)


#: Top-level fields of a preparation record that get their own column in m003, so the usage
#: views read every step's whole-request figures without opening the compressed records.
STEP_FIGURE_COLUMNS = (
    ("trigger_tokens", "INTEGER"), ("trigger_basis", "TEXT"),
    ("unrecorded_overhead_tokens", "INTEGER"), ("overhead_measured_at", "INTEGER"),
    ("calibration_ratio", "REAL"), ("whole_request_tokens", "INTEGER"),
    ("recorded_request_tokens", "INTEGER"), ("recorded_request_whole", "INTEGER"))

_M003_TABLES = (
    """CREATE TABLE request_bodies (hash TEXT PRIMARY KEY, body BLOB NOT NULL)""",
    """CREATE TABLE request_messages_m003 (
        replay_id TEXT NOT NULL REFERENCES replays(id) ON DELETE CASCADE,
        id INTEGER NOT NULL, hash TEXT NOT NULL,
        PRIMARY KEY (replay_id, id), UNIQUE (replay_id, hash))""",
    f"""CREATE TABLE preparations_m003 (
        replay_id TEXT NOT NULL REFERENCES replays(id) ON DELETE CASCADE,
        step_index INTEGER NOT NULL, preparation_id TEXT NOT NULL, phase TEXT NOT NULL,
        response_message_index INTEGER NOT NULL, final_input_tokens INTEGER NOT NULL,
        provider_prompt_tokens INTEGER, provider_usage_kind TEXT NOT NULL,
        input_budget INTEGER NOT NULL, pressure_line INTEGER NOT NULL, reminder_line INTEGER,
        compaction_applied INTEGER NOT NULL, message_count INTEGER NOT NULL,
        error_stage TEXT, error_kind TEXT, error_message TEXT, final_request_ref TEXT,
        {", ".join(f"{name} {kind}" for name, kind in STEP_FIGURE_COLUMNS)},
        record BLOB NOT NULL, PRIMARY KEY (replay_id, step_index))""",
    """CREATE TABLE archives_m003 (
        replay_id TEXT NOT NULL REFERENCES replays(id) ON DELETE CASCADE,
        n INTEGER NOT NULL, step_index INTEGER, path TEXT NOT NULL, text BLOB NOT NULL,
        checkpoint_text TEXT NOT NULL, PRIMARY KEY (replay_id, n))""",
)


def pack(text: str) -> bytes:
    """The compressed form of a stored text (records, request bodies, archives)."""
    return zlib.compress(text.encode(), 6)


def unpack(blob: bytes) -> str:
    return zlib.decompress(blob).decode()


def record_without_decisions(record: str) -> str:
    """A preparation's JSON without its stages' decisions (the decisions table keeps them)."""
    data = json.loads(record)
    for stage in data.get("stages", ()):
        stage["decisions"] = []
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _m003_rows(db: Database) -> None:
    db.conn.create_function("wb_pack", 1, pack, deterministic=True)
    db.conn.create_function("wb_strip", 1, record_without_decisions, deterministic=True)
    typed(db).execute("INSERT OR IGNORE INTO request_bodies (hash, body) "
               "SELECT hash, wb_pack(json) FROM request_messages")
    typed(db).execute("INSERT INTO request_messages_m003 (replay_id, id, hash) "
               "SELECT replay_id, id, hash FROM request_messages")
    figures = ", ".join(name for name, _ in STEP_FIGURE_COLUMNS)
    extracted = ", ".join(f"json_extract(json, '$.{name}')" for name, _ in STEP_FIGURE_COLUMNS)
    scalars = ("replay_id, step_index, preparation_id, phase, response_message_index, "
               "final_input_tokens, provider_prompt_tokens, provider_usage_kind, input_budget, "
               "pressure_line, reminder_line, compaction_applied, message_count, error_stage, "
               "error_kind, error_message, final_request_ref")
    typed(db).execute(f"INSERT INTO preparations_m003 ({scalars}, {figures}, record) "
               f"SELECT {scalars}, {extracted}, wb_pack(wb_strip(json)) FROM preparations")
    typed(db).execute("INSERT INTO archives_m003 (replay_id, n, step_index, path, text, checkpoint_text) "
               "SELECT replay_id, n, step_index, path, wb_pack(text), checkpoint_text FROM archives")


@MIGRATIONS()
def m003_compact_evidence(db: Database) -> None:
    """A smaller store: request bodies kept once per store (shared by every replay that sent them)
    and compressed; preparation records compressed and without the decisions the decisions table
    already holds, with the whole-request figures the views chart as columns; archive texts
    compressed. Existing replays are converted in place."""
    for statement in _M003_TABLES:
        typed(db).execute(statement)
    _m003_rows(db)
    for table in ("request_messages", "preparations", "archives"):
        typed(db).execute(f"DROP TABLE {table}")
        typed(db).execute(f"ALTER TABLE {table}_m003 RENAME TO {table}")
    typed(db).execute("CREATE INDEX preparations_by_id ON preparations (preparation_id)")
    typed(db).execute("CREATE INDEX request_messages_by_hash ON request_messages (hash)")


@MIGRATIONS()
def m004_session_lineage(db: Database) -> None:
    """What an import could not place, and where a session comes from: ``unplaced_count`` and
    ``unplaced_json`` (each line the importer read but could not place in the conversation, with
    why) so the session list and header show them; ``parent_id``, the session a sub-agent's (or
    a recorded compaction request's) transcript belongs to. Sessions stored before keep 0, [] and
    NULL: they were imported without these counts."""
    typed(db).execute("ALTER TABLE sessions ADD COLUMN unplaced_count INTEGER NOT NULL DEFAULT 0")
    typed(db).execute("ALTER TABLE sessions ADD COLUMN unplaced_json TEXT NOT NULL DEFAULT '[]'")
    typed(db).execute("ALTER TABLE sessions ADD COLUMN parent_id TEXT")
    typed(db).execute("CREATE INDEX sessions_by_parent ON sessions (parent_id)")


def apply_migrations(db: Database) -> None:
    """Bring ``db`` up to the newest schema (a no-op when it already is)."""
    MIGRATIONS.apply(db)


def migration_names() -> tuple[str, ...]:
    """Every registered migration, in application order."""
    return tuple(m.name for m in MIGRATIONS.pending(Database(memory=True)))
