"""The ``workbench`` command line: serve the app, import transcripts, list and inspect sessions (R-UI-9).

Every subcommand is a ``register(subparsers)`` function that adds its parser and sets ``handler``
(``args -> exit code``). The three built-in ones (``run``, ``import``, ``inspect``) live here;
every other one is in the module :data:`COMMANDS` names for it, so this file stays small.
Errors the project raises on purpose (:class:`iris.errors.IrisError`) are printed as one line
naming the file, line and field, with exit code 1 and no traceback.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from iris.errors import IrisError

__all__ = ["COMMANDS", "COMMAND_MODULES", "STDIN", "build_parser", "main", "shown", "stdin_file", "streamlit_command"]

#: The module that registers each subcommand outside this file (its ``register(subparsers) ->
#: None``): a command line that names one of them imports only that module (``workbench
#: sessions`` needs no replay engine); help, an unknown name or a command missing here register
#: every module. A new command is one entry here (and its row and section in docs/cli.md).
COMMANDS: dict[str, str] = {"sessions": "workbench.cli.lists", "replays": "workbench.cli.lists",
                            "replay": "workbench.cli.replay", "report": "workbench.report",
                            "batch": "workbench.cli.batch", "export": "workbench.cli.export",
                            "watch": "workbench.cli.watch", "twin-check": "workbench.cli.twin"}

#: Modules that contribute subcommands, in the order their commands are listed.
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))

APP_PATH = Path(__file__).resolve().parents[1] / "ui" / "app.py"


def streamlit_command(port: int, app: Path = APP_PATH) -> list[str]:
    """The Streamlit invocation ``workbench run`` uses (also used by the browser tests): Streamlit's
    command line started by :mod:`workbench.ui.serve`, which imports what the first page run needs
    before the server starts."""
    return [sys.executable, "-m", "workbench.ui.serve", "run", str(app),
            "--server.port", str(port), "--server.address", "127.0.0.1",
            "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",
            # a local tool: no "Deploy" button in the toolbar
            "--client.toolbarMode", "minimal"]


# ------------------------------------------------------------------------------------ standard input

#: How messages name standard input (``-`` for a transcript or ``--config``).
STDIN = "<stdin>"
_stdin_copies: list[Path] = []
_stdin_read: set[int] = set()


def stdin_file(suffix: str = "") -> Path:
    """Standard input as a file (read once per command): the importers and the configuration
    loader read files (format detection probes the start, gzip is known by its magic bytes), so
    what is piped in is copied into a private temporary file, removed when the command ends.
    Messages that name the copy say ``<stdin>`` (:func:`shown`)."""
    if id(sys.stdin) in _stdin_read:
        raise IrisError("standard input ('-') can be read only once per command")
    if sys.stdin is None or sys.stdin.isatty():
        raise IrisError("'-' reads standard input, but nothing is piped in "
                             "(e.g. `cat session.jsonl | workbench import -`)")
    folder = Path(tempfile.mkdtemp(prefix="workbench-stdin-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / f"stdin{suffix}"
    with path.open("wb") as out:
        shutil.copyfileobj(sys.stdin.buffer, out)
    _stdin_read.add(id(sys.stdin))
    _stdin_copies.append(path)
    return path


def shown(text: str) -> str:
    """``text`` with the temporary copy of standard input named ``<stdin>``."""
    for path in _stdin_copies:
        text = text.replace(str(path.resolve()), STDIN).replace(str(path), STDIN)
    return text


def _stdin_config(args: argparse.Namespace) -> None:
    """``--config -``: the configuration YAML from standard input (``batch`` takes a list)."""
    config = getattr(args, "config", None)
    if config == "-":
        args.config = str(stdin_file(".yaml"))
    elif isinstance(config, list) and "-" in config:
        args.config = [str(stdin_file(".yaml")) if c == "-" else c for c in config]


# ------------------------------------------------------------------------------------ run


def _register_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="serve the workbench on 127.0.0.1")
    p.add_argument("--port", type=int, default=8501)
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("streamlit") is None:
        raise IrisError("the app needs Streamlit, which is an optional extra: "
                             "pip install 'context-workbench[app]'")
    print(f"Context Workbench: http://127.0.0.1:{args.port}", flush=True)
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    cmd = streamlit_command(args.port)
    os.execve(cmd[0], cmd, env)  # replaces this process: Ctrl+C and kill reach Streamlit directly
    return 0  # pragma: no cover


# ------------------------------------------------------------------------------------ import


def _register_import(sub: argparse._SubParsersAction) -> None:
    from ..importers import formats

    p = sub.add_parser("import", help="import transcripts into the store (files or directories)")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="session files (.jsonl, .json, .traj, also .gz) or directories, "
                        "searched recursively; '-' reads one transcript from standard input")
    p.add_argument("--lenient", action="store_true", help="skip bad lines and report them")
    p.add_argument("--format", help=f"{', '.join(formats())} (default: detect)")
    p.add_argument("--quiet", action="store_true", help="print only errors")
    p.set_defaults(handler=_import)


def _import(args: argparse.Namespace) -> int:
    from ..storage.store import open_store

    files, failures = _expand_paths([str(stdin_file()) if p == "-" else p for p in args.paths])
    counts = {"imported": 0, "already stored": 0, "failed": failures}
    with open_store() as store:
        for path in files:
            counts[_import_one(store, path, args)] += 1
    if not args.quiet and any(Path(p).is_dir() for p in args.paths):
        print(f"{len(files)} files: " + ", ".join(f"{n} {what}" for what, n in counts.items()))
    return 1 if counts["failed"] else 0


def _expand_paths(paths: Sequence[str]) -> tuple[list[str], int]:
    """The files to import (directories searched recursively) and how many arguments failed."""
    from ..importers.files import session_files

    files: list[str] = []
    failures = 0
    for path in paths:
        if not Path(path).is_dir():
            files.append(path)
            continue
        found = session_files(Path(path))
        if not found:
            failures += 1
            print(f"error: {path}: no session files (.jsonl, .json, .traj, also .gz) in this "
                  "directory or below", file=sys.stderr)
        files.extend(str(f) for f in found)
    return files, failures


def _import_one(store, path: str, args: argparse.Namespace) -> str:
    """Import one file and print its outcome; returns the summary bucket it falls in."""
    from ..views.terminal import printable, progress_bar

    try:
        with progress_bar(Path(path).name, quiet=args.quiet) as progress:
            outcome = store.import_file(path, format=args.format, lenient=args.lenient,
                                        progress=progress)
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop the others
        report_error(exc)
        return "failed"
    verb = "imported" if outcome.created else "already stored"
    if not args.quiet:
        unplaced = f", {len(outcome.unplaced)} unplaced lines" if outcome.unplaced else ""
        if outcome.subagents:
            n = len(outcome.subagents)
            unplaced += (f", {n} sub-agent{'' if n == 1 else 's'} from its agent_progress lines "
                         "stored as its children")
        print(f"{verb}: {printable(shown(path))} -> {printable(outcome.session_id)} ({outcome.format}, "
              f"{outcome.message_count} messages, {len(outcome.skipped)} skipped lines{unplaced})")
    path = shown(path)
    for skip in outcome.skipped:
        print(f"  skipped {path}:{skip.line}: {skip.problem}", file=sys.stderr)
    for line in outcome.unplaced:
        print(f"  unplaced {path}{f':{line.line}' if line.line else ''}: {line.problem}", file=sys.stderr)
    for note in () if args.quiet else outcome.warnings:
        print(f"  note {path}{f':{note.line}' if note.line else ''}: {note.problem}", file=sys.stderr)
    return verb


# ------------------------------------------------------------------------------------ inspect


def _register_inspect(sub: argparse._SubParsersAction) -> None:
    from ..importers import formats

    p = sub.add_parser("inspect", help="counts of a transcript file, without storing it")
    p.add_argument("path", metavar="PATH",
                   help="a transcript file (.jsonl, .json, .traj, also .gz); '-' reads standard input")
    p.add_argument("--json", action="store_true", help="print one JSON object (the only output form)")
    p.add_argument("--lenient", action="store_true",
                   help="skip lines that cannot be read and count them (default: stop at the first)")
    p.add_argument("--format", help=f"{', '.join(formats())} (default: detect)")
    p.set_defaults(handler=_inspect)


def _inspect(args: argparse.Namespace) -> int:
    from ..analysis.session_counts import inspect_session
    from ..importers import load_session

    path = stdin_file() if args.path == "-" else args.path
    result = load_session(path, format=args.format, lenient=args.lenient)
    counts = inspect_session(result)
    if args.path == "-":
        counts["path"] = STDIN
    print(json.dumps(counts, sort_keys=True, ensure_ascii=False))
    return 0


# ------------------------------------------------------------------------------------ main

_BUILTIN = (_register_run, _register_import, _register_inspect)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or (``command`` given) of the built-in ones and ``command``
    (its module alone imported: the others bring in the engine, the exporters and their
    libraries, most of a short command's start-up)."""
    parser = argparse.ArgumentParser(prog="workbench", description="Context Workbench")
    parser.add_argument("--version", action=_VersionAction, nargs=0,
                        help="show the installed version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    for register in _BUILTIN:
        register(sub)
    builtin = command in ("run", "import", "inspect")
    only = COMMANDS.get(command or "")
    for module in () if builtin else (only,) if only else COMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand a command line names (its first argument that is not an option; the
    top-level options take no value)."""
    return next((a for a in argv if not a.startswith("-")), None)


class _VersionAction(argparse.Action):
    """``--version``, read from the installed metadata only when asked (``importlib.metadata``
    costs about 28 ms, paid at every start when argparse's own version action formats it)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("context-workbench")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"


#: Libraries ``sqlite_utils`` imports when installed only to map their scalar types to column types.
_SQLITE_UTILS_OPTIONAL = ("pandas", "numpy")


def _import_sqlite_utils_without_pandas() -> None:
    """Import ``sqlite_utils`` with pandas and numpy hidden (about 0.5 s of start-up otherwise).

    The command line stores no pandas or numpy values; the modules are hidden only while
    ``sqlite_utils`` loads, so a later ``import pandas`` (reports, batch tables) works as usual.
    """
    if "sqlite_utils" in sys.modules or any(m in sys.modules for m in _SQLITE_UTILS_OPTIONAL):
        return
    for name in _SQLITE_UTILS_OPTIONAL:
        # None in sys.modules makes ``import name`` raise ImportError (the import system's documented
        # marker; the stubs type sys.modules as holding modules only)
        sys.modules[name] = None  # pyright: ignore[reportArgumentType]
    try:
        importlib.import_module("sqlite_utils")
    finally:
        for name in _SQLITE_UTILS_OPTIONAL:
            del sys.modules[name]


#: Subcommands whose arguments say whether they open the store (their parser sets ``opens_store``,
#: ``args -> bool``): ``workbench replay FILE`` and ``workbench report FILE`` read the file and never
#: import sqlite-utils.
_STORE_OPTIONAL = ("replay", "report")


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command(argv)
    if command not in _STORE_OPTIONAL:
        _import_sqlite_utils_without_pandas()
    args = build_parser(command).parse_args(argv)
    if getattr(args, "opens_store", _opens_store)(args):
        _import_sqlite_utils_without_pandas()
    try:
        _stdin_config(args)
        return args.handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`workbench inspect x | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        if os.environ.get("WORKBENCH_DEBUG"):
            raise
        print(f"error: {_describe(exc)}", file=sys.stderr)
        return 1


def _opens_store(args: argparse.Namespace) -> bool:
    """Whether a command whose parser does not say may open the store (any command may)."""
    return True


def report_error(exc: BaseException) -> None:
    """``error: …`` for an error a command caught to go on with other work (a file of several):
    with ``WORKBENCH_DEBUG`` set, the traceback of an unexpected one comes first, as it does for
    an error that ends the command."""
    if os.environ.get("WORKBENCH_DEBUG") and not isinstance(exc, IrisError):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    print(f"error: {_describe(exc)}", file=sys.stderr)


def _describe(exc: BaseException) -> str:
    """Our own errors already name file/line/field; anything else is labelled as unexpected."""
    if isinstance(exc, IrisError):
        return shown(str(exc))
    return f"unexpected {type(exc).__name__}: {exc} (set WORKBENCH_DEBUG=1 for the traceback)"
