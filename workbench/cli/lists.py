"""``workbench sessions`` and ``workbench replays``: list what the store holds, delete replays.

Both print an aligned table by default and take ``--json``, ``--nl`` or ``--csv`` for scripts
(the sqlite-utils / llm conventions). Numbers stay numbers in every machine-readable format.
"""

from __future__ import annotations

import argparse
from typing import Any

from iris.errors import StorageError

from ..views.terminal import add_format_options, write_rows

__all__ = ["REPLAY_COLUMNS", "SESSION_COLUMNS", "register", "replay_rows", "session_rows"]

#: The keys of ``wb.sessions()`` (:func:`workbench.notebook.tables.sessions`) for the same facts.
SESSION_COLUMNS = ("id", "title", "format", "messages", "responses", "estimated_tokens", "imported_at",
                   "unplaced_lines", "parent_id")
REPLAY_COLUMNS = ("id", "session_id", "name", "steps", "compactions", "failed", "final_tokens",
                  "summariser", "created_at")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sessions", help="list stored sessions")
    add_format_options(p)
    p.set_defaults(handler=_sessions)

    r = sub.add_parser("replays", help="list saved replays (`replays delete ID` removes one)")
    add_format_options(r)
    r.add_argument("--session", metavar="SESSION_ID", help="only the replays of this session")
    r.set_defaults(handler=_replays)
    actions = r.add_subparsers(dest="replays_action")
    d = actions.add_parser("delete", help="delete a saved replay and everything it stored")
    d.add_argument("replay_id", metavar="REPLAY_ID", help="as listed by `workbench replays`")
    d.set_defaults(handler=_delete_replay)


def session_rows(store: Any) -> list[dict[str, Any]]:
    """One dict per stored session, in the columns of :data:`SESSION_COLUMNS`."""
    return [{"id": s.id, "title": s.title, "format": s.format, "messages": s.message_count,
             "responses": s.response_count, "estimated_tokens": s.estimated_tokens,
             "imported_at": s.imported_at, "unplaced_lines": s.unplaced_count,
             "parent_id": s.parent_id}
            for s in store.list_sessions()]


def replay_rows(store: Any, session_id: str | None = None) -> list[dict[str, Any]]:
    """One dict per saved replay (all sessions, or one), in the columns of :data:`REPLAY_COLUMNS`."""
    return [{"id": i.id, "session_id": i.session_id, "name": i.name, "steps": i.step_count,
             "compactions": i.compactions_applied, "failed": i.failed_count,
             "final_tokens": i.final_tokens, "summariser": i.summariser, "created_at": i.created_at}
            for i in store.replays.list(session_id)]


def _sessions(args: argparse.Namespace) -> int:
    from ..storage.store import open_store

    with open_store() as store:
        rows = session_rows(store)
    if not rows and args.output_format == "table":
        print("No sessions stored. Import one: workbench import PATH")
        return 0
    if args.output_format == "table":
        rows = [{**r, "title": r["title"][:48]} for r in rows]
    write_rows(rows, SESSION_COLUMNS, args.output_format)
    return 0


def _replays(args: argparse.Namespace) -> int:
    from ..storage.store import open_store

    with open_store() as store:
        if args.session:
            store.row_of(args.session)  # an unknown id is an error naming it
        rows = replay_rows(store, args.session)
    if not rows and args.output_format == "table":
        print("No replays saved. Make one: workbench replay SESSION --name NAME "
              "(or workbench replay --defaults)")
        return 0
    write_rows(rows, REPLAY_COLUMNS, args.output_format)
    return 0


def _delete_replay(args: argparse.Namespace) -> int:
    from ..storage.store import open_store

    with open_store() as store:
        if not store.replays.delete(args.replay_id):
            raise StorageError(f"no saved replay {args.replay_id!r} (see `workbench replays`)")
    print(f"deleted replay {args.replay_id}")
    return 0
