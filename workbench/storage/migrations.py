"""Numbered schema migrations of the SQLite store, registered with ``sqlite_utils.Migrations``.

Each migration is a function ``mNNN_name(db)`` that sqlite-utils runs once, inside a transaction,
and records in its ``_sqlite_migrations`` table. Shipped migrations are never edited: a later
issue that needs a table or a column appends ``m002_…``, ``m003_…`` below (registration order is
application order), and a test applies them to a blank database and to the previous schema.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlite_utils import Database, Migrations

    #: The one migration set of the workbench store (built on first use by ``__getattr__``).
    MIGRATIONS: Migrations

from ._chunks import Chunk, dumps, prefix_key, store_bodies
from ._sql import SQLDatabase, typed

__all__ = ["MIGRATIONS", "RECORD_FIELDS_IN_STEPS", "STEP_COLUMNS", "STEP_FIGURE_COLUMNS",
           "STEP_ROW_FIELDS", "apply_migrations", "migration_names", "pack", "pending_migrations",
           "record_without_decisions", "unpack"]

#: The migrations in application order. The one migration set of the workbench store,
#: ``MIGRATIONS``, is built from them when first used: importing sqlite-utils costs tens of
#: milliseconds that a process reading only this module's column lists (a replay of a file
#: that never opens the store) need not pay.
_REGISTERED: list[Callable[[Database], None]] = []


def _migration(fn: Callable[[Database], None]) -> Callable[[Database], None]:
    _REGISTERED.append(fn)
    return fn


@functools.cache
def _migration_set() -> Migrations:
    from sqlite_utils import Migrations

    migrations = Migrations("context-workbench")
    for fn in _REGISTERED:
        migrations()(fn)
    return migrations


def __getattr__(name: str) -> object:
    if name == "MIGRATIONS":
        return _migration_set()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@_migration
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


@_migration
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


#: The scalar columns of a step (``workbench.records.StepRow``), in the order m002 declared them.
STEP_ROW_FIELDS = (
    "step_index", "preparation_id", "phase", "response_message_index", "final_input_tokens",
    "provider_prompt_tokens", "provider_usage_kind", "input_budget", "pressure_line",
    "reminder_line", "compaction_applied", "message_count", "error_stage", "error_kind",
    "error_message", "final_request_ref")

#: The values of a chunk's ``steps`` line, in order: a step's scalar columns, then its figures.
STEP_COLUMNS = (*STEP_ROW_FIELDS, *(name for name, _ in STEP_FIGURE_COLUMNS))

#: Fields of a preparation record its ``records`` line leaves out (its ``steps`` line has them).
RECORD_FIELDS_IN_STEPS = ("preparation_id", "final_request_ref")


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


@_migration
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


@_migration
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


_REPLAY_COLUMNS = (
    "id, name, session_id, configuration_hash, template_snapshot_id, configuration_snapshot_id, "
    "summariser, created_at, step_count, ready_count, failed_count, cancelled_count, "
    "compactions_applied, final_tokens, record_schema_version, extras_json")

_M005_TABLES = (
    """CREATE TABLE replays_m005 (
        n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        configuration_hash TEXT REFERENCES configurations(hash),
        template_snapshot_id TEXT REFERENCES template_snapshots(id),
        configuration_snapshot_id TEXT NOT NULL, summariser TEXT NOT NULL, created_at TEXT NOT NULL,
        step_count INTEGER NOT NULL, ready_count INTEGER NOT NULL, failed_count INTEGER NOT NULL,
        cancelled_count INTEGER NOT NULL, compactions_applied INTEGER NOT NULL,
        final_tokens INTEGER NOT NULL, record_schema_version INTEGER NOT NULL,
        extras_json TEXT NOT NULL, UNIQUE (session_id, name))""",
    """CREATE TABLE step_chunks (
        replay_n INTEGER NOT NULL REFERENCES replays(n) ON DELETE CASCADE, c INTEGER NOT NULL,
        steps BLOB NOT NULL, marks BLOB NOT NULL, records BLOB NOT NULL, requests BLOB NOT NULL,
        PRIMARY KEY (replay_n, c))""",
    """CREATE TABLE preparation_ids (
        key INTEGER NOT NULL, replay_n INTEGER NOT NULL REFERENCES replays(n) ON DELETE CASCADE,
        step_index INTEGER NOT NULL, c INTEGER NOT NULL, line INTEGER NOT NULL,
        PRIMARY KEY (key, replay_n, step_index)) WITHOUT ROWID""",
    """CREATE TABLE request_bodies_m005 (n INTEGER PRIMARY KEY, hash BLOB NOT NULL,
        body BLOB NOT NULL)""",
    """CREATE TABLE request_parts (
        replay_n INTEGER NOT NULL REFERENCES replays(n) ON DELETE CASCADE, id INTEGER NOT NULL,
        body_n INTEGER NOT NULL, PRIMARY KEY (replay_n, id)) WITHOUT ROWID""",
)


def _m005_by_step(db: SQLDatabase, sql: str, replay_id: str) -> dict[int, list[dict[str, Any]]]:
    """Rows of one replay's old stage or decision table, by step, in the query's order."""
    out: dict[int, list[dict[str, Any]]] = {}
    for r in db.query(sql, [replay_id]):
        out.setdefault(r.pop("step_index"), []).append(r)
    return out


def _m005_chunks(db: SQLDatabase, n: int, replay_id: str
                 ) -> tuple[list[Chunk], list[tuple[int, int, int, int, int]]]:
    """One replay's m003 step, stage, decision and request rows as chunks (the lines the m005
    writer makes), and its preparation-id index rows."""
    figures = [name for name, _ in STEP_FIGURE_COLUMNS]
    stages = _m005_by_step(db, "SELECT step_index, name, before_input_tokens, after_input_tokens "
                           "FROM stages WHERE replay_id = ? ORDER BY step_index, position",
                           replay_id)
    decisions = _m005_by_step(db, "SELECT step_index, stage, position, kind, message_index, json "
                              "FROM decisions WHERE replay_id = ? ORDER BY step_index, stage, "
                              "position", replay_id)
    requests = {r["ref"]: json.loads(zlib.decompress(r["skeleton"])) for r in db.query(
        "SELECT ref, skeleton FROM requests WHERE replay_id = ? ORDER BY ref", [replay_id])}
    chunks, chunk = list[Chunk](), Chunk(0)
    ids: list[tuple[int, int, int, int, int]] = []
    for row in db.query(f"SELECT {', '.join(STEP_ROW_FIELDS)}, {', '.join(figures)}, record "
                        "FROM preparations WHERE replay_id = ? ORDER BY step_index", [replay_id]):
        step, data = row["step_index"], json.loads(unpack(row.pop("record")))
        made = decisions.get(step, [])
        for stage in data["stages"]:
            stage["decisions"] = [json.loads(d["json"]) for d in made if d["stage"] == stage["name"]]
        for field in RECORD_FIELDS_IN_STEPS:
            del data[field]
        marks = [[d["stage"], d["position"], d["kind"], d["message_index"]] for d in made]
        tokens = [[s["name"], s["before_input_tokens"], s["after_input_tokens"]]
                  for s in stages.get(step, [])]
        chunk.add_step(dumps([row[c] for c in STEP_COLUMNS]), dumps([step, marks, tokens]),
                       dumps(data))
        ids.append((prefix_key(row["preparation_id"]), n, step, chunk.number, chunk.steps - 1))
        if row["final_request_ref"] in requests:
            chunk.add_request(row["final_request_ref"], requests.pop(row["final_request_ref"]))
        if chunk.full:
            chunks, chunk = [*chunks, chunk], Chunk(chunk.number + 1)
    for ref, skeleton in requests.items():  # requests no step points at
        chunk.add_request(ref, skeleton)
    return [*chunks, *([] if chunk.empty else [chunk])], ids


def _m005_replay(db: SQLDatabase, n: int, replay_id: str) -> None:
    """One replay's m003 rows written as m005 chunks, index rows and numbered request parts."""
    chunks, ids = _m005_chunks(db, n, replay_id)
    db.conn.executemany("INSERT INTO step_chunks (replay_n, c, steps, marks, records, requests) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        [(n, c.number, *c.row(final=True).values()) for c in chunks])
    db.conn.executemany("INSERT INTO preparation_ids (key, replay_n, step_index, c, line) "
                        "VALUES (?, ?, ?, ?, ?)", ids)
    parts = db.execute("SELECT m.id, b.hash, b.body FROM request_messages m JOIN request_bodies "
                       "b ON b.hash = m.hash WHERE m.replay_id = ? ORDER BY m.id",
                       [replay_id]).fetchall()
    numbers = store_bodies(db.conn, {bytes.fromhex(h): body for _, h, body in parts},
                           lambda body: body, "request_bodies_m005")
    db.conn.executemany("INSERT INTO request_parts (replay_n, id, body_n) VALUES (?, ?, ?)",
                        [(n, i, numbers[bytes.fromhex(h)]) for i, h, _ in parts])


@_migration
def m005_step_chunks(db: Database) -> None:
    """A store about the size of its transcripts: each replay's steps kept in chunks of
    consecutive steps (compressed streams of their scalar columns, decision marks, whole records
    and final requests' skeletons, see ``_chunks``) instead of a row per step, stage, decision
    and request; replays get an integer key their rows use; request bodies are numbered by
    their digest and a replay's parts point at those numbers. Existing replays are converted
    in place and read back the same values."""
    sql = typed(db)
    for statement in _M005_TABLES:
        sql.execute(statement)
    sql.execute(f"INSERT INTO replays_m005 ({_REPLAY_COLUMNS}) SELECT {_REPLAY_COLUMNS} "
                "FROM replays ORDER BY created_at, id")
    for n, replay_id in sql.execute("SELECT n, id FROM replays_m005 ORDER BY n").fetchall():
        _m005_replay(sql, n, replay_id)
    for table in ("preparations", "stages", "decisions", "requests", "request_messages",
                  "request_bodies", "replays"):
        sql.execute(f"DROP TABLE {table}")
    for table in ("replays", "request_bodies"):
        sql.execute(f"ALTER TABLE {table}_m005 RENAME TO {table}")
    sql.execute("CREATE INDEX request_parts_by_body ON request_parts (body_n)")


@_migration
def m006_replay_saving(db: Database) -> None:
    """A replay saved step by step is written in short transactions, one chunk of steps at a
    time, under a row of its own: ``saving`` holds the token of the save that is writing it
    (NULL once finished, when it takes its id and name and the replay it replaces goes).
    Readers list and find only finished replays; a save that died leaves a row the next save
    removes. Existing replays are finished (NULL)."""
    typed(db).execute("ALTER TABLE replays ADD COLUMN saving TEXT")


def apply_migrations(db: Database) -> None:
    """Bring ``db`` up to the newest schema (a no-op when it already is)."""
    _migration_set().apply(db)


def migration_names() -> tuple[str, ...]:
    """Every registered migration, in application order."""
    from sqlite_utils import Database

    return tuple(m.name for m in _migration_set().pending(Database(memory=True)))


def pending_migrations(db: Database) -> tuple[str, ...]:
    """The migrations ``db`` has not had yet (read only: nothing is written)."""
    return tuple(m.name for m in _migration_set().pending(db))
