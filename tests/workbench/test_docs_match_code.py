"""The docs say what the code does: docs/cli.md's command table and sections are the parser's
commands, every ``workbench …`` command line in README.md and docs/*.md parses (a fenced example in
full, an inline mention by its command and options), and README's formats table and limits agree
with the registered importers (R-UI-9, R-SES-4)."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from workbench.cli import build_parser
from workbench.importers.registry import BUILTIN

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = {o for a in parser._actions for o in a.option_strings}
    for action in parser._actions:  # `replays delete`: a nested command's options count too
        if isinstance(action, argparse._SubParsersAction):
            for nested in action.choices.values():
                found |= _options(nested)
    return found


def _fenced_commands(text: str) -> list[tuple[int, str]]:
    """``workbench …`` lines inside fenced or indented code blocks, continuation lines joined."""
    found: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^(?: {4,}|\t)\s*(?:\$ )?(workbench\s.*)$", lines[i])
        if match:
            start, command = i + 1, match.group(1)
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            found.append((start, command))
        i += 1
    return found


def _argv(command: str) -> list[str]:
    """A documented command line as argv: up to a pipe, redirection or comment."""
    argv: list[str] = []
    for token in shlex.split(command, comments=True)[1:]:
        if token in ("|", "<", ">", "&&", ";"):
            break
        argv.append(token)
    return argv


def _name_problems(where: str, words: list[str],
                   subparsers: dict[str, argparse.ArgumentParser]) -> list[str]:
    """The command of ``words`` exists and every option they name is one of its options."""
    if not words or words[0] in ("…", "--version", "--help"):
        return []
    if words[0] not in subparsers:
        return [f"{where}: unknown command {words[0]!r}"]
    known = _options(subparsers[words[0]])
    flags = [word.strip("[]()") for word in words[1:]]
    named = [option for flag in flags if flag.startswith("-") for part in flag.split("/")
             if (option := part.split("=")[0]).startswith("-") and len(option) > 1]
    return [f"{where}: `workbench {words[0]}` has no {option}" for option in named
            if option not in known]


def test_r_ui_9_every_fenced_workbench_example_parses():
    """An example parses in full; a synopsis (``[--opt X]``) names its command and options."""
    subparsers = _subparsers()
    problems = []
    for doc in DOCS:
        for line, command in _fenced_commands(doc.read_text("utf-8")):
            where = f"{doc.name}:{line}"
            if "[" in command:
                problems += _name_problems(where, command.split()[1:], subparsers)
                continue
            argv = _argv(command)
            if argv and argv[0] not in subparsers and argv[0] != "--version":
                problems.append(f"{where}: unknown command {argv[0]!r}")
                continue
            try:
                build_parser().parse_args(argv)
            except SystemExit:
                problems.append(f"{where}: does not parse: {command}")
    assert not problems, "\n".join(problems)


def test_r_ui_9_every_inline_workbench_mention_names_a_command_and_its_options():
    """Inline mentions (`` `workbench replay --json` ``, a section's synopsis) leave out required
    arguments, so they are checked by command and option names, not parsed."""
    subparsers = _subparsers()
    problems = []
    for doc in DOCS:
        text = doc.read_text("utf-8")
        for match in re.finditer(r"`workbench ([^`]+)`", text):
            where = f"{doc.name}:{text.count(chr(10), 0, match.start()) + 1}"
            problems += _name_problems(where, match.group(1).split(), subparsers)
    assert not problems, "\n".join(problems)


def test_r_ui_9_the_command_table_and_sections_of_cli_md_are_the_parsers_commands():
    text = (ROOT / "docs" / "cli.md").read_text("utf-8")
    table = set(re.findall(r"^\| `([a-z-]+)` \|", text, re.MULTILINE))
    sections = set(re.findall(r"^## `workbench ([a-z-]+)", text, re.MULTILINE))
    commands = set(_subparsers())
    assert table == commands, f"table lacks {commands - table}, has extra {table - commands}"
    assert sections == commands, f"no section for {commands - sections}, extra {sections - commands}"


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_r_ses_4_readme_formats_table_lists_every_registered_format():
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", (ROOT / "README.md").read_text("utf-8"), re.MULTILINE))
    assert {imp.name for imp in BUILTIN} <= rows


@pytest.mark.parametrize("importer", [imp for imp in BUILTIN if imp.name != "native"],
                         ids=lambda imp: imp.name)
def test_r_ses_4_readme_limits_do_not_call_a_registered_format_unimported(importer):
    """An importer's description starts with the product and the file kind ("SWE-agent .traj
    trajectories"): those words never stand in the Limits' "Not imported" list."""
    limits = _readme_section("Limits").replace("`", "")
    (not_imported,) = re.findall(r"- Not imported:.*?(?=\n- |\Z)", limits, re.DOTALL)
    name = " ".join(importer.description.split()[:2])
    assert name not in " ".join(not_imported.split()), (importer.name, not_imported)
