"""The importer protocol and the registry of every importer: built-in ones and plugins.

An importer is any object with a ``name``, a detection ``priority`` (lower is asked first), a
``detect(record)`` that says whether one JSON value belongs to its format, and a ``load(path, …)``
that returns a :class:`iris.session.Session`. Detection hands ``detect`` each of a JSON Lines file's
first records, or the whole document of a single-document file.

Other packages add importers without editing this one, through the entry-point group
``context_workbench.importers``; the entry point names an importer object or a class to
instantiate without arguments::

    [project.entry-points."context_workbench.importers"]
    my_format = "my_package.importer:MyImporter"

A plugin whose name is already registered, or that fails to load or lacks the protocol, is left
out and listed by :func:`plugin_problems` (one bad plugin never breaks imports).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from iris.errors import SessionFormatError
from iris.frozen import UNCHANGED
from iris.session import Session, ToolDialect

from . import detect_rules as rules

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "Importer", "formats", "get_importer", "importers",
           "plugin_problems", "reload_plugins", "tool_dialect", "with_tool_dialect"]

ENTRY_POINT_GROUP = "context_workbench.importers"
PLUGIN_PRIORITY = 60
"""The priority a plugin without one gets: after every specific built-in format, before the
catch-all OpenAI chat message list."""


@runtime_checkable
class Importer(Protocol):
    """What an importer provides (see the module docstring). ``name`` and ``priority`` are read
    only: a plain attribute or a frozen dataclass field provides them."""

    @property
    def name(self) -> str: ...

    @property
    def priority(self) -> int: ...

    def detect(self, record: Any) -> bool: ...

    def load(self, path: Path, *, lenient: bool, skipped: list[SessionFormatError],
             warnings: list[SessionFormatError], content_hash: str) -> Session: ...


@dataclass(frozen=True)
class BuiltinImporter:
    """A built-in importer whose loader module is imported only when a file of its format is read."""

    name: str
    priority: int
    detector: Callable[[Any], bool]
    target: str
    """``module:function`` of the loader, relative to this package."""
    description: str = ""
    dialect: ToolDialect | None = None
    """Whose tool names the format's transcripts use (:data:`iris.session.ToolDialect`); the
    loaded session's header states it. None: the file says (the native format)."""

    def detect(self, record: Any) -> bool:
        return self.detector(record)

    def load(self, path: Path, *, lenient: bool, skipped: list[SessionFormatError],
             warnings: list[SessionFormatError], content_hash: str) -> Session:
        module, function = self.target.split(":")
        loader = getattr(importlib.import_module(f"{__package__}.{module}"), function)
        return with_tool_dialect(loader(path, lenient=lenient, skipped=skipped, warnings=warnings,
                                        content_hash=content_hash), self.dialect)


NATIVE = BuiltinImporter("native", 10, rules.is_native, "registry:load_native_file",
                         "the workbench's own JSON Lines")
CODEX = BuiltinImporter("codex", 20, rules.is_codex, "codex:load_codex", "Codex CLI rollouts",
                        dialect="codex")
CLAUDE_CODE = BuiltinImporter("claude_code", 30, rules.is_claude_code, "claude_code:load_claude_code",
                              "Claude Code transcripts", dialect="claude")
SWE_AGENT = BuiltinImporter("swe_agent", 40, rules.is_swe_agent, "swe_agent:load_swe_agent",
                            "SWE-agent .traj trajectories (1.x and 0.x)", dialect="chat")
OTEL = BuiltinImporter("otel", 50, rules.is_otel, "otel:load_otel",
                       "OpenTelemetry GenAI spans (OTLP JSON or a span list)", dialect="chat")
OPENAI_CHAT = BuiltinImporter("openai_chat", 90, rules.is_openai_chat, "openai_chat:load_openai_chat",
                              "OpenAI chat message lists (incl. mini-swe-agent)", dialect="chat")
BUILTIN: tuple[BuiltinImporter, ...] = (NATIVE, CODEX, CLAUDE_CODE, SWE_AGENT, OTEL, OPENAI_CHAT)
"""Always registered, also where the package's own entry points are not installed (a checkout
used without ``pip install``); the package declares them as entry points too."""


def load_native_file(path: Path, *, lenient: bool, skipped: list[SessionFormatError],
                     warnings: list[SessionFormatError], content_hash: str) -> Session:
    """The native loader with the protocol's arguments (a native file carries its own id)."""
    from .native import load_native

    return load_native(path, lenient=lenient, skipped=skipped, warnings=warnings)


def tool_dialect(source_format: str) -> ToolDialect | None:
    """The tool dialect a built-in format's transcripts use (None: unknown, or the native
    format, whose files state it)."""
    return next((b.dialect for b in BUILTIN if b.name == source_format), None)


def with_tool_dialect(session: Session, dialect: ToolDialect | None = None) -> Session:
    """``session`` with its header's tool dialect stated: as the header has it, else ``dialect``,
    else the one of the format that wrote it (:func:`tool_dialect`; a native file or a stored
    session written before headers stated it)."""
    header = session.header
    if header.tool_dialect is not None:
        return session
    stated = dialect or tool_dialect(header.source_format)
    if stated is None:
        return session
    return session.evolve(**UNCHANGED, header=header.evolve(**UNCHANGED, tool_dialect=stated))


def importers() -> tuple[Importer, ...]:
    """Every registered importer, in detection order (priority, then built-ins first)."""
    return _registry()[0]


def formats() -> tuple[str, ...]:
    """The names of every registered importer, in detection order."""
    return tuple(imp.name for imp in importers())


def get_importer(name: str) -> Importer:
    for imp in importers():
        if imp.name == name:
            return imp
    raise SessionFormatError(f"unknown format {name!r}; supported: {', '.join(formats())}")


def plugin_problems() -> tuple[str, ...]:
    """Why each plugin entry point that was left out was left out."""
    return _registry()[1]


def reload_plugins() -> None:
    """Read the entry points again (after installing a plugin in a running process)."""
    _registry.cache_clear()


@cache
def _registry() -> tuple[tuple[Importer, ...], tuple[str, ...]]:
    found: list[Importer] = list(BUILTIN)
    problems: list[str] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            obj = ep.load()
            imp = obj() if isinstance(obj, type) else obj
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break importing
            problems.append(f"{ep.name} ({ep.value}): cannot be loaded ({type(exc).__name__}: {exc})")
            continue
        if any(imp is b for b in BUILTIN):
            continue  # this package's own entry points: registered already
        problem = _check(imp, {i.name for i in found})
        if problem:
            problems.append(f"{ep.name} ({ep.value}): {problem}")
            continue
        found.append(imp)
    order = {id(imp): n for n, imp in enumerate(found)}
    found.sort(key=lambda imp: (getattr(imp, "priority", PLUGIN_PRIORITY), order[id(imp)]))
    return tuple(found), tuple(problems)


def _check(imp: Any, taken: set[str]) -> str | None:
    if not (isinstance(getattr(imp, "name", None), str) and callable(getattr(imp, "detect", None))
            and callable(getattr(imp, "load", None))):
        return "not an importer (needs name, detect(record) and load(path, ...))"
    if imp.name in taken:
        return f"the format name {imp.name!r} is already registered"
    if not isinstance(getattr(imp, "priority", PLUGIN_PRIORITY), int):
        return "priority must be an integer"
    return None
