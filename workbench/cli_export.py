"""``workbench export TARGET --otlp OUT``: a replay's preparations as OpenTelemetry GenAI spans.

``TARGET`` is a saved replay id (``workbench replays``), or a transcript file or stored session id,
which is then replayed under ``--config`` (a YAML file or a preset name; default: bundled) first.
The OTLP JSON file loads into tracing tools that read OTLP and imports back as format ``otel``
(:mod:`workbench.otlp_export`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from iris.errors import WorkbenchError

from .otlp_export import otlp_document, write_otlp

__all__ = ["export_saved_replay", "register"]


class UsageError(WorkbenchError):
    """The command line was incomplete."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export a replay's preparations (OpenTelemetry GenAI spans)")
    p.add_argument("target", metavar="TARGET",
                   help="a saved replay id (see `workbench replays`), a transcript file, or a "
                        "stored session id (replayed under --config)")
    p.add_argument("--otlp", metavar="OUT", help="write OTLP JSON to this file")
    p.add_argument("--config", metavar="FILE",
                   help="for a transcript or session: configuration YAML or preset name")
    p.add_argument("--format", help="transcript format of a TARGET file (default: detect)")
    p.set_defaults(handler=_export)


def export_saved_replay(store, replay_id: str, out: str | Path) -> tuple[Path, int]:
    """Write a saved replay as OTLP JSON; returns the path and the number of model-call spans."""
    from .services.replay import open_saved

    saved = open_saved(store, replay_id)
    session = store.session(saved.info.session_id)
    preps = [saved.preparation(step.step_index) for step in saved.steps]
    doc = otlp_document(session, preps, lambda p: saved.request(p.final_request_ref)
                        if p.final_request_ref else None, replay_name=saved.info.name)
    return write_otlp(out, doc), len(preps)


def _export(args: argparse.Namespace) -> int:
    from .storage.store import open_store

    if not args.otlp:
        raise UsageError("say what to write: --otlp OUT")
    with open_store() as store:
        if store.replays.exists(args.target):
            path, count = export_saved_replay(store, args.target, args.otlp)
        else:
            path, count = _replay_and_export(store, args)
    print(f"wrote {count} model-call spans to {path} (OTLP JSON)")
    return 0


def _replay_and_export(store, args: argparse.Namespace) -> tuple[Path, int]:
    from iris.errors import StorageError

    from .importers import load_session
    from .notebook import replay

    if Path(args.target).is_file():
        session = load_session(args.target, format=args.format).session
    elif any(s.id == args.target for s in store.list_sessions()):
        session = store.session(args.target)
    else:
        raise StorageError(f"{args.target!r} is neither a saved replay id, a transcript file nor a "
                           "stored session id (see `workbench replays` and `workbench sessions`)")
    result = replay(session, args.config)
    return result.export_otlp(args.otlp), len(result.preparations)
