"""``workbench export TARGET --otlp OUT | --otlp-endpoint URL``: a replay's preparations as
OpenTelemetry GenAI spans.

``TARGET`` is a saved replay id (``workbench replays``), or a transcript file (``-``: standard
input) or stored session id, which is then replayed under ``--config`` (a YAML file or a preset
name; default: bundled) first. ``--otlp`` writes OTLP JSON (it imports back as format ``otel``; ``-``: standard output);
``--otlp-endpoint`` sends OTLP protobuf over HTTP to a tracing tool (Phoenix, Langfuse, a
Collector); both may be given. See :mod:`workbench.views.otlp_export` (the spans) and
:mod:`workbench.services.otlp` (the file and the receiver).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from iris.errors import IrisError

__all__ = ["export_saved_replay", "register"]


class UsageError(IrisError):
    """The command line was incomplete."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export a replay's preparations (OpenTelemetry GenAI spans)")
    p.add_argument("target", metavar="TARGET",
                   help="a saved replay id (see `workbench replays`), a transcript file ('-': standard "
                        "input), or a stored session id (replayed under --config)")
    p.add_argument("--otlp", metavar="OUT", help="write OTLP JSON to this file ('-': standard output)")
    p.add_argument("--otlp-endpoint", metavar="URL",
                   help="send OTLP protobuf over HTTP to this receiver (a base URL such as "
                        "http://localhost:6006, or the full .../v1/traces URL)")
    p.add_argument("--otlp-header", metavar="KEY=VALUE", action="append", default=[],
                   help="an HTTP header for --otlp-endpoint, e.g. 'Authorization=Basic …' "
                        "(repeatable; default: OTEL_EXPORTER_OTLP_HEADERS)")
    p.add_argument("--shift-to-now", action="store_true",
                   help="move the spans so that the session ends now (tracing tools open on the "
                        "last hours); default: the transcript's own times")
    p.add_argument("--config", metavar="FILE",
                   help="for a transcript or session: configuration YAML or preset name")
    p.add_argument("--format", help="transcript format of a TARGET file (default: detect)")
    p.set_defaults(handler=_export)


def export_saved_replay(store, replay_id: str, out: str | Path, *,
                        shift_to_now: bool = False) -> tuple[Path, int]:
    """Write a saved replay as OTLP JSON; returns the path and the number of model-call spans."""
    from ..services.otlp import write_otlp
    from ..views.otlp_export import spans_document

    spans = _saved_spans(store, replay_id, shift_to_now)
    calls = sum(1 for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == "chat")
    return write_otlp(out, spans_document(spans)), calls


def _saved_spans(store, replay_id: str, shift_to_now: bool) -> list:
    from ..services.costs import session_subagents
    from ..services.replay import open_saved
    from ..views.otlp_export import otlp_spans

    saved = open_saved(store, replay_id)
    session = store.session(saved.info.session_id)
    preps = [saved.preparation(step.step_index) for step in saved.steps]
    subagents = session_subagents(store, saved.info.session_id) if session.subagents else ()
    return otlp_spans(session, preps, lambda p: saved.request(p.final_request_ref)
                      if p.final_request_ref else None, replay_name=saved.info.name,
                      shift_to_now=shift_to_now, subagents=subagents)


def _export(args: argparse.Namespace) -> int:
    # the OpenTelemetry SDK and protobuf load only for this command (every command builds the parser)
    from ..services.otlp import push_otlp, write_otlp
    from ..services.output import STDOUT, write_output
    from ..storage.store import open_store
    from ..views.otlp_export import spans_document

    if not args.otlp and not args.otlp_endpoint:
        raise UsageError("say where the spans go: --otlp OUT (OTLP JSON file) or --otlp-endpoint URL")
    headers = _headers(args.otlp_header)
    with open_store() as store:
        if args.target != "-" and store.replays.exists(args.target):
            spans = _saved_spans(store, args.target, args.shift_to_now)
        else:
            spans = _replay_spans(store, args)
    count = sum(1 for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == "chat")
    # with the spans on standard output (--otlp -), what was done goes to standard error
    note = sys.stderr if args.otlp == STDOUT else sys.stdout
    if args.otlp == STDOUT:
        write_output(STDOUT, json.dumps(spans_document(spans), ensure_ascii=False,
                                        separators=(",", ":")) + "\n", "the OTLP file")
        print(f"wrote {count} model-call spans to standard output (OTLP JSON)", file=note)
    elif args.otlp:
        path = write_otlp(args.otlp, spans_document(spans))
        print(f"wrote {count} model-call spans to {path} (OTLP JSON)")
    if args.otlp_endpoint:
        url = push_otlp(spans, args.otlp_endpoint, headers=headers)
        print(f"sent {count} model-call spans to {url} (OTLP protobuf)", file=note)
    return 0


def _headers(pairs: list[str]) -> dict[str, str] | None:
    headers = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--otlp-header {pair!r}: expected KEY=VALUE")
        headers[key.strip()] = value.strip()
    return headers or None


def _replay_spans(store, args: argparse.Namespace) -> list:
    from iris.errors import StorageError

    from ..importers import load_session
    from ..importers.claude_progress import subagent_sessions
    from ..notebook import replay
    from ..services.costs import session_subagents
    from ..views.otlp_export import otlp_spans

    if args.target == "-" or Path(args.target).is_file():
        source = _source(args.target)
        session = load_session(source, format=args.format).session
        subagents = subagent_sessions(source) if session.subagents and \
            session.header.source_format == "claude_code" else ()
    elif any(s.id == args.target for s in store.list_sessions()):
        session = store.session(args.target)
        subagents = session_subagents(store, args.target) if session.subagents else ()
    else:
        raise StorageError(f"{args.target!r} is neither a saved replay id, a transcript file nor a "
                           "stored session id (see `workbench replays` and `workbench sessions`)")
    result = replay(session, args.config)
    return otlp_spans(result.session, result.preparations, result.result.request,
                      replay_name=result.label, shift_to_now=args.shift_to_now, subagents=subagents)


def _source(target: str) -> str | Path:
    from . import stdin_file

    return stdin_file() if target == "-" else target
