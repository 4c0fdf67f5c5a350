"""Tool kinds: what each real tool name means for reduction, per tool dialect.

Real transcripts name the same action differently (Claude Code ``Read``/``Bash``, Codex
``exec_command``/``apply_patch``, chat-completions agents ``bash``). Reduction only cares about the
*kind* of a tool; :class:`ToolKindMap` resolves a name to a kind with the documented default table
of a dialect (:data:`iris.session.ToolDialect`, which the importer states on the session header),
overridable per name. Unknown names are ``other``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from ..errors import ConfigError
from ..session import ToolDialect

__all__ = ["DEFAULT_TOOL_KINDS", "FORMATS", "FORMAT_ALIASES", "ToolKind", "ToolKindMap"]

ToolKind = Literal["read", "edit", "write", "delete", "shell", "search", "glob", "web_fetch", "skill",
                   "todo", "other"]
TOOL_KINDS: tuple[str, ...] = get_args(ToolKind)

# Claude Code names (native sessions use the same names).
_CLAUDE: dict[str, ToolKind] = {
    "Read": "read", "NotebookRead": "read", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit",
    "Write": "write", "Bash": "shell", "BashOutput": "shell", "Grep": "search", "Glob": "glob",
    "LS": "glob", "WebFetch": "web_fetch", "WebSearch": "web_fetch", "Skill": "skill",
    "TodoWrite": "todo", "Delete": "delete",
}
# Codex CLI rollouts.
_CODEX: dict[str, ToolKind] = {
    "shell": "shell", "exec_command": "shell", "local_shell": "shell", "container.exec": "shell",
    "write_stdin": "shell", "apply_patch": "edit", "update_plan": "todo", "view_image": "read",
    "web_search": "web_fetch",
}
# OpenAI chat-completions agents (mini-swe-agent, SWE-agent, OpenHands style tools).
_CHAT: dict[str, ToolKind] = {
    "bash": "shell", "execute_bash": "shell", "run_command": "shell", "shell": "shell",
    "read_file": "read", "view_file": "read", "open_file": "read", "write_file": "write",
    "create_file": "write", "edit_file": "edit", "str_replace": "edit", "apply_patch": "edit",
    "delete_file": "delete", "search": "search", "grep": "search", "search_file": "search",
    "search_dir": "search", "find_file": "glob", "glob": "glob", "list_dir": "glob",
    "fetch": "web_fetch", "web_fetch": "web_fetch", "todo_write": "todo",
}
# Chord's own lowercase names; also the fallback for every format (matched case-insensitively).
_COMMON: dict[str, ToolKind] = {
    "read": "read", "edit": "edit", "write": "write", "delete": "delete", "bash": "shell",
    "shell": "shell", "grep": "search", "glob": "glob", "web_fetch": "web_fetch", "webfetch": "web_fetch",
    "skill": "skill", "todo_write": "todo", "todowrite": "todo", "multiedit": "edit",
    "ls": "glob", "websearch": "web_fetch", "patch": "edit", "apply_patch": "edit",
    "exec_command": "shell",
}

#: The documented default mapping of every tool dialect.
DEFAULT_TOOL_KINDS: dict[ToolDialect, dict[str, ToolKind]] = {
    "claude": _CLAUDE, "codex": _CODEX, "chat": _CHAT,
}
#: Older names ``format`` accepts for a dialect (docs/reduction.md).
FORMAT_ALIASES: dict[str, ToolDialect] = {
    "native": "claude", "claude_code": "claude", "openai_chat": "chat",
}
_DIALECT_OF: dict[str, ToolDialect] = {**{d: d for d in DEFAULT_TOOL_KINDS}, **FORMAT_ALIASES}
#: Every name ``ToolKindMap(format=...)`` accepts: the dialects, then the older names.
FORMATS: tuple[str, ...] = tuple(_DIALECT_OF)

# str_replace_editor (SWE-agent/OpenHands) is one tool whose ``command`` argument decides the kind.
_EDITOR_TOOLS = ("str_replace_editor", "str_replace_based_edit_tool")
_EDITOR_COMMANDS: dict[str, ToolKind] = {"view": "read", "create": "write", "str_replace": "edit",
                                          "insert": "edit", "undo_edit": "edit"}


class ToolKindMap:
    """Tool name → :data:`ToolKind` for one tool dialect, with per-name overrides.

    ``format`` names the dialect (``claude``, ``codex``, ``chat``) or one of its older names
    (:data:`FORMAT_ALIASES`: ``native``, ``claude_code``, ``openai_chat``); :attr:`format` is the
    dialect. Lookup order: an override (exact name, then lowercase), the dialect's table (exact
    name), the common lowercase table, else ``other``.
    """

    def __init__(self, overrides: Mapping[str, str] | None = None, format: str = "claude") -> None:
        dialect = _DIALECT_OF.get(format)
        if dialect is None:
            raise ConfigError(f"unknown tool dialect {format!r}; expected one of {FORMATS}",
                              field="tool_kinds.format")
        for name, kind in (overrides or {}).items():
            if kind not in TOOL_KINDS:
                raise ConfigError(f"unknown tool kind {kind!r}; expected one of {TOOL_KINDS}",
                                  field=f"tool_kinds.overrides.{name}")
        self.format: ToolDialect = dialect
        self.overrides: dict[str, ToolKind] = dict(overrides or {})  # type: ignore[arg-type]
        self._lower: dict[str, ToolKind] = {k.lower(): v for k, v in self.overrides.items()}
        self._table = DEFAULT_TOOL_KINDS[dialect]

    @classmethod
    def for_dialect(cls, dialect: ToolDialect | None) -> ToolKindMap:
        """The default map of a session's tool dialect (its header's ``tool_dialect``); a session
        that states none uses the Claude Code names."""
        return cls(format=dialect or "claude")

    def kind(self, tool_name: str) -> ToolKind:
        """The kind of a tool name (``other`` when unknown)."""
        if tool_name in self.overrides:
            return self.overrides[tool_name]
        low = tool_name.lower()
        if low in self._lower:
            return self._lower[low]
        if tool_name in self._table:
            return self._table[tool_name]
        return _COMMON.get(low, "other")

    def kind_of_call(self, tool_name: str, arguments: Mapping[str, Any]) -> ToolKind:
        """Like :meth:`kind`, refined by arguments for multi-purpose tools (``str_replace_editor``)."""
        if tool_name not in self.overrides and tool_name.lower() in _EDITOR_TOOLS:
            return _EDITOR_COMMANDS.get(str(arguments.get("command", "")), "other")
        return self.kind(tool_name)

    def table(self) -> dict[str, ToolKind]:
        """The effective explicit table (format defaults plus overrides), for documentation/UI."""
        return {**self._table, **self.overrides}

    def __repr__(self) -> str:
        return f"ToolKindMap(format={self.format!r}, overrides={self.overrides!r})"
