"""A command line imports the module of the subcommand it names, not every subcommand's module.

Building the parser of every subcommand imports the replay engine, the exporters and their
libraries: most of the start-up of a short command such as ``workbench sessions``. The map
``workbench.cli.COMMANDS`` names each subcommand's module; these tests check the map against what
the modules really register and that a named command loads nothing else.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys

import pytest

from workbench.cli import COMMAND_MODULES, COMMANDS, build_parser


def _registered(module: str) -> set[str]:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    importlib.import_module(module).register(sub)
    return set(sub.choices)


def test_r_ui_9_each_mapped_command_is_registered_by_its_module():
    """R-UI-9: every subcommand in ``COMMANDS`` is registered by the module it names, and that
    module is one of ``COMMAND_MODULES``; a parser built for one command parses it."""
    for command, module in COMMANDS.items():
        assert module in COMMAND_MODULES
        assert command in _registered(module), (command, module)
    args = build_parser("sessions").parse_args(["sessions"])
    assert args.command == "sessions" and callable(args.handler)


def test_r_ui_9_help_and_unknown_names_register_every_command():
    """R-UI-9: without a command (``--help``) or with a name the map does not know, every module
    registers its commands, so the full list is shown and a new command still runs. Every
    command a module registers is in ``COMMANDS`` (the one list a new command is added to)."""
    everything = _commands(build_parser(None))
    assert set(COMMANDS) | {"run", "import", "inspect"} == everything
    assert everything == _commands(build_parser("no-such-command"))


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    """The subcommand names a parser knows (argparse keeps them on its subparsers action)."""
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]  # pyright: ignore[reportPrivateUsage]
    return set(actions[0].choices)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]


@pytest.mark.slow  # starts a process
def test_r_ui_9_a_short_command_does_not_import_the_engine_or_exporters(tmp_path):
    """R-UI-9: ``workbench sessions`` (in a new process) lists the store without importing the
    replay engine or the exporters; ``workbench replay`` imports the engine but not the
    exporters."""
    probe = ("import sys, json; from workbench.cli import main; code = main(sys.argv[1:]); "
             "print(json.dumps({'code': code, 'loaded': [m for m in ('iris.replay', "
             "'workbench.cli.export', 'workbench.cli.replay', 'workbench.views.otlp_export') "
             "if m in sys.modules]}))")
    env = {**os.environ, "WORKBENCH_HOME": str(tmp_path)}

    def run(*argv: str) -> dict[str, object]:
        out = subprocess.run([sys.executable, "-c", probe, *argv], env=env, capture_output=True,
                             text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    assert run("sessions") == {"code": 0, "loaded": []}
    replay = run("replay", "--defaults")
    assert replay["code"] == 0 and "iris.replay" in replay["loaded"]  # type: ignore[operator]
    assert "workbench.cli.export" not in replay["loaded"]  # type: ignore[operator]


@pytest.mark.slow  # starts a process
def test_r_ui_9_building_the_parser_reads_no_package_metadata():
    """R-UI-9: ``--version`` reads the installed distribution's metadata only when it is asked for;
    building the parser of a command (every start) opens none of this project's metadata files."""
    script = (
        "import sys\n"
        "from workbench.cli import build_parser\n"
        "opened = []\n"
        "sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == 'open' "
        "and args and 'context_workbench' in str(args[0]) and str(args[0]).endswith(('METADATA', 'PKG-INFO'))"
        " else None)\n"
        "build_parser('import')\n"
        "build_parser()\n"
        "print(len(opened))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "0", done.stdout + done.stderr
    version = subprocess.run([sys.executable, "-m", "workbench.cli", "--version"],
                             capture_output=True, text=True, timeout=120, check=True)
    assert version.stdout.startswith("workbench ")


@pytest.mark.slow  # starts a process
def test_r_ui_9_an_import_does_not_load_the_engine_pandas_or_the_vocabulary(tmp_path):
    """R-UI-9 (and the import's start-up, docs/performance.md): ``workbench import FILE`` in a new
    process stores the session without importing the replay engine, the saved-replay records,
    pandas, numpy or the tokenizer (its token count is made by whatever first tokenises it)."""
    heavy = ("iris.replay", "iris.preparation.pipeline", "iris.compaction", "workbench.records",
             "workbench.storage.replays", "pandas", "numpy", "plotly", "tiktoken", "iris.vocabulary")
    probe = ("import sys, json; from workbench.cli import main; code = main(sys.argv[1:]); "
             f"print(json.dumps({{'code': code, 'loaded': [m for m in {heavy!r} if m in sys.modules]}}))")
    sample = os.path.join(os.path.dirname(__file__), "..", "..", "sample_sessions", "bugfix.jsonl")
    out = subprocess.run([sys.executable, "-c", probe, "import", sample],
                         env={**os.environ, "WORKBENCH_HOME": str(tmp_path)}, capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == {"code": 0, "loaded": []}
    assert (tmp_path / "workbench.db").is_file()


@pytest.mark.slow  # starts a process
def test_r_ui_9_a_report_of_a_file_does_not_open_the_store(tmp_path):
    """R-UI-9: ``workbench report FILE`` reads the transcript and writes the report without
    importing sqlite-utils or creating a store; ``report --replay`` still reads the store."""
    probe = ("import sys, json; from workbench.cli import main; code = main(sys.argv[1:]); "
             "print(json.dumps({'code': code, 'sqlite_utils': 'sqlite_utils' in sys.modules}))")
    sample = os.path.join(os.path.dirname(__file__), "..", "..", "sample_sessions", "bugfix.jsonl")
    out = subprocess.run([sys.executable, "-c", probe, "report", sample, "--out", str(tmp_path / "r.html")],
                         env={**os.environ, "WORKBENCH_HOME": str(tmp_path / "home")}, capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == {"code": 0, "sqlite_utils": False}
    assert (tmp_path / "r.html").stat().st_size > 0 and not (tmp_path / "home").exists()
