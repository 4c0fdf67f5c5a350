"""``workbench watch PATH``: follow transcripts while an agent writes them (R-LIVE-1).

PATH is a Claude Code project folder (``~/.claude/projects/<project>``), a Codex sessions folder
(``~/.codex/sessions``) or one transcript. Each time a transcript grows, its complete lines are
imported into the store under the same session and its ``default`` replay is made again (a file
that no longer extends its stored session is stored as a new session, R-LIVE-2); the app
(``workbench run``) shows the new responses within about two seconds. The follower is
:mod:`workbench.services.live`; this module parses the options and prints one line per update.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("watch", help="follow transcripts as an agent writes them (live view in the app)")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a Claude Code project folder, a Codex sessions folder or a transcript file")
    p.add_argument("--interval", type=float, default=1.0,
                   help="seconds between two looks at the files when no file event arrives "
                        "(default: 1.0)")
    p.add_argument("--no-replay", action="store_true",
                   help="import only; do not make the default replay again after each update")
    p.add_argument("--once", action="store_true",
                   help="import what the files hold now, then exit")
    p.add_argument("--for", dest="seconds", type=float, metavar="SECONDS",
                   help="stop after this many seconds (default: until Ctrl+C)")
    p.set_defaults(handler=_watch)


def _watch(args: argparse.Namespace) -> int:
    from ..services.live import LiveUpdate, Watcher
    from ..storage.store import open_store
    from ..views.live import update_line
    from ..views.terminal import printable

    def show(update: LiveUpdate) -> None:
        print(printable(update_line(update)), flush=True)

    failures: list[str] = []

    def failed(path: Path, exc: Exception) -> None:
        failures.append(str(path))
        if os.environ.get("WORKBENCH_DEBUG"):
            traceback.print_exception(exc, file=sys.stderr)
        print(f"error: {printable(str(exc))}", file=sys.stderr, flush=True)

    with open_store() as store:
        watcher = Watcher(store, args.paths, replay=not args.no_replay, interval=args.interval)
        if args.once:
            for update in watcher.poll(failed):
                show(update)
            return 1 if failures else 0
        print(f"watching {', '.join(printable(p) for p in args.paths)} (Ctrl+C stops)", flush=True)
        watcher.run(show, on_error=failed, until=args.seconds)
    return 0
