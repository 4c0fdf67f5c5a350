"""The ``## Files and Evidence`` section of an extractive checkpoint: the files and commands of the
head the rest of the session is most likely to need (R-FID-3).

What an agent most often has to relearn after a compaction is concrete: the file it was editing,
the command that proved a fix, the files a task description listed. The section lists them as they
were written, so a later mention matches: files edited, read, named in commands and searches, and
named by tool results (a task description, a status listing); each simple command of the shell
calls with the outcome of its last run (``ok``/``failed``, and the first line of the output when
the call ran that command alone). Files under the project folder are written relative to it (said
once), other files under the same home folder from ``~/``.

The engine cannot see what the session will do after the compaction. It ranks each fact by how
the head used it (a file edited or named by the user first, one read or a command run next, one
named in a command, a search or the assistant's prose next, one a tool result listed last, less the
longer the listing) times how recently (raised a little for a fact used many times), and fills the
section's allowance with the likeliest facts per character it takes (the count of the others is
said: they stay in the archive); each group lists the likeliest first.

This module finds its facts itself: it shares no code with :mod:`iris.fidelity`, which scores the
checkpoint (a test checks that neither imports the other).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from ..session import Message, TextBlock

__all__ = ["DEFAULT_EVIDENCE_CHARS", "evidence_allowance", "evidence_section", "shell_command",
           "shell_output", "simple_commands", "workspace_root"]

DEFAULT_EVIDENCE_CHARS = 4000
"""The section's size when the caller gives no summary allowance."""
EVIDENCE_CHARS_PER_TOKEN = 2
"""Characters of evidence per token of the summary allowance."""
_OUTCOME_CHARS = 48
_SEGMENT_CHARS = 60
"""Names listed after one mention of their folder before it is written again."""
_LONG_FOLDER = 40
"""A folder longer than this is written whole once per list, then as ``…/`` and its last two
folders."""
_DETAILED = 10
"""Commands listed with the first line of their last output (the others with ok/failed only)."""
_COMMAND_CHARS = 200
_RESULT_CHARS = 20_000
_FILE_ARGS = ("file_path", "path", "filePath", "filename", "notebook_path")
_SHELL = re.compile(r"bash|shell|exec|command|terminal|run", re.IGNORECASE)
_SEARCH_ARGS = ("pattern", "glob", "query", "path")
_PATHLIKE = re.compile(r"(?<![\w/.~:-])(?:\.{1,2}/|~/|/)?(?:[\w.@+-]+/)+[\w@+-][\w.@+-]*")
_NAMED = re.compile(r"\.[A-Za-z]{1,5}$")
_SHELL_HEADER = re.compile(r"\A(?:(?:Chunk ID|Wall time|Original token count):[^\n]*\n"
                           r"|Process exited with code (-?\d+)[^\n]*\n)+(?:Output:\n?)?")
"""The lines a shell tool puts before a command's output (Codex's exec_command), with the exit
status it states."""
_TAGGED = re.compile(r"<(system-reminder|local-command-[\w-]+|command-[\w-]+|task-notification)>"
                     r".*?</\1>", re.DOTALL)
"""What the agent inserted in a user message (not typed by the user)."""
_DIFF_SIDE = re.compile(r"^[ab]/(?=[^/]+/)")
"""A diff's ``a/`` or ``b/`` side of a file path."""
_BARE = re.compile(r"^[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,4}$")
"""A file name without a folder (a shell word of a command: ``nl -ba STRATEGY.md``)."""
_HOME = re.compile(r"^/(?:home|Users)/[^/]+/")
"""The home folder of a project folder."""
_PATCH_ARGS = ("input", "patch")
_PATCH_FILE = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$", re.MULTILINE)
"""The files a patch (Codex's apply_patch) adds, changes, deletes or moves to."""
_READERS = frozenset({"cat", "sed", "nl", "head", "tail", "less", "more", "bat", "wc", "grep",
                      "rg", "diff", "jq", "awk"})
"""Programs whose path arguments are files the command reads."""
_BUILT = re.compile(r"(?:^|/)(?:_build|node_modules|\.git|dist|target|__pycache__|\.venv|deps)/"
                    r"|\.(?:beam|pyc|o|class)$")
"""Build output and dependencies a tool result lists (a stack trace, a listing), left out."""
_NOT_COMMANDS = frozenset({"cd", "echo", "sleep", "true", "false", "clear", "pwd", "export",
                           "set", "if", "then", "else", "elif", "fi", "do", "done", "for",
                           "while", "case", "esac", "{", "}", "(", ")"})
_REDIRECT = re.compile(r"\s\d?>>?\s?(?:&\d|\S+)|\s\d?<\s?\S+")


def evidence_allowance(max_tokens: int) -> int:
    """The section's largest size in characters for a summary of at most ``max_tokens`` tokens."""
    return max(max_tokens * EVIDENCE_CHARS_PER_TOKEN, 0)


def shell_command(name: str, arguments: Mapping[str, Any]) -> str | None:
    """The command line of a shell tool call (``command``/``cmd``, a list joined), else None."""
    if not _SHELL.search(name):
        return None
    value: object = arguments.get("command") or arguments.get("cmd")
    if isinstance(value, list):
        value = " ".join(map(str, cast("list[object]", value)))
    return value if isinstance(value, str) else None


def shell_output(text: str, failed: bool) -> tuple[str, bool]:
    """A shell call's output without the header a tool puts before it (Codex's ``Chunk ID``,
    ``Wall time``, ``Process exited with code N``, ``Output:``), and whether the call failed: its
    error flag, or a non-zero exit status the header states."""
    header = _SHELL_HEADER.match(text)
    if header is None:
        return text, failed
    code = header.group(1)
    return text[header.end():], failed or (code is not None and code != "0")


def _balanced(text: str) -> bool:
    """No quote or ``$(`` left open (a here-document's first line is not a whole command)."""
    quote, depth = "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(" and text[i - 1:i] == "$":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
    return not quote and not depth


def simple_commands(line: str) -> list[str]:
    """The simple commands of a shell command line as written: split at ``&&``, ``||``, ``;``
    and line breaks outside quotes, up to a here-document; the first stage of a pipeline;
    redirections dropped; ``cd``, ``echo`` and shell keywords left out."""
    line = re.sub(r"\\\n\s*", " ", line)
    pieces: list[str] = []
    quote, start, i = "", 0, 0
    while i < len(line):
        ch = line[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif line.startswith("<<", i):
            break
        elif ch in ";\n" or line.startswith(("&&", "||"), i):
            pieces.append(line[start:i])
            i += 1 if ch in ";\n" else 2
            start = i
            continue
        i += 1
    pieces.append(line[start:i])
    out: list[str] = []
    for piece in pieces:
        stage = re.split(r"\s\|\s", piece.split("\n", 1)[0], maxsplit=1)[0]
        stage = " ".join(_REDIRECT.sub("", f" {stage} ").split())
        words = stage.split()
        if words and words[0] not in _NOT_COMMANDS and not words[0].startswith("#") \
                and _balanced(stage):
            out.append(stage)
    return out


def _pathlike(text: str) -> Iterator[str]:
    """Path-like words with a folder and a file name (or an absolute form), as written; not a
    path after a shell variable (``$ROOT/a.json``, ``${HOME}/.pi``) nor a device (``/dev/null``)."""
    for m in _PATHLIKE.finditer(text):
        word = m.group(0).rstrip(".,:;")
        if "://" in text[m.start():m.end() + 3] or word.startswith("/dev/"):
            continue
        if re.search(r"(?:\$\w*|\})$", text[max(m.start() - 40, 0):m.start()]):
            continue
        if _NAMED.search(word) or word.startswith(("/", "~/", "./")):
            yield word


class _Head:
    """What the head did with files and commands: for each file, how it was used (``edited``,
    ``read``, ``user``, ``named``, ``shown``: :data:`_USES`) with the index of its last use that
    way, and how many paths the tool result that showed it listed; for each command, the index of
    its last run and its outcome (``outcomes``: ok/failed; ``full``: with the output's first line
    when the call ran it alone)."""

    def __init__(self, head: Sequence[Message], edit_tool: re.Pattern[str]) -> None:
        self.paths: dict[str, dict[str, int]] = {}
        self.listed: dict[str, int] = {}
        self.commands: dict[str, int] = {}
        self.outcomes: dict[str, str] = {}
        self.full: dict[str, str] = {}
        self.uses: dict[str, int] = {}
        calls: dict[str, list[str]] = {}
        self.last = len(head) - 1
        for i, message in enumerate(head):
            self._calls(i, message, edit_tool, calls)
            if message.role == "user" and not message.tool_results:
                typed = "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
                for word in _pathlike(_TAGGED.sub("", typed)):
                    self._path(word, "user", i)
            elif message.role == "assistant":
                prose = "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
                for word in _pathlike(prose):
                    if "/" in word.strip("/") and _NAMED.search(word):
                        self._path(word, "named", i, count=False)
            for result in message.tool_results:
                self._outcome(result.text, result.is_error, calls.get(result.call_id, []))
                # in the order written (a set's order changes from run to run)
                shown = [w for w in dict.fromkeys(_DIFF_SIDE.sub("", w) for w in
                                                  _pathlike(result.text[:_RESULT_CHARS]))
                         if "/" in w.strip("/") and _NAMED.search(w) and not _BUILT.search(w)]
                for word in shown:
                    self._path(word, "shown", i, count=False)
                    self.listed[word] = len(shown)

    def _path(self, path: str, how: str, i: int, count: bool = True) -> None:
        self.paths.setdefault(path, {})[how] = i
        if count:
            self.uses[path] = self.uses.get(path, 0) + 1

    def _calls(self, i: int, message: Message, edit_tool: re.Pattern[str],
               calls: dict[str, list[str]]) -> None:
        for call in message.tool_calls:
            args = call.arguments
            edits = edit_tool.search(call.name) is not None
            files = [v for k in _FILE_ARGS if isinstance(v := args.get(k), str) and v.strip()]
            for path in files:
                self._path(path, "edited" if edits else "read", i)
            for key in _PATCH_ARGS:
                value = args.get(key)
                if isinstance(value, str) and "*** " in value:
                    for m in _PATCH_FILE.finditer(value):
                        self._path(m.group(1).strip(), "edited", i)
            line = shell_command(call.name, args)
            if line is not None:
                parts = simple_commands(line)
                calls[call.id] = parts
                for part in parts:
                    key = part[:_COMMAND_CHARS]
                    self.commands[key] = i
                    self.uses[key] = self.uses.get(key, 0) + 1
                    how = "read" if part.split()[0].rsplit("/", 1)[-1] in _READERS else "named"
                    for word in _pathlike(part):
                        self._path(word, how, i)
                    for word in part.split()[1:]:  # a file of the working folder: STRATEGY.md
                        word = word.strip("'\"")
                        if _BARE.match(word) and ".." not in word:  # not a git range
                            self._path(word, how, i)
                in_parts = {w for part in parts for w in _pathlike(part)}
                for word in _pathlike(line):
                    if word not in in_parts:
                        self._path(word, "named", i)
            for key in _SEARCH_ARGS:
                value = args.get(key)
                if isinstance(value, str) and value not in files:
                    for word in _pathlike(value):
                        self._path(word, "named", i)

    def _outcome(self, text: str, failed: bool, parts: Sequence[str]) -> None:
        text, failed = shell_output(text, failed)
        verdict = "failed" if failed else "ok"
        first = next((" ".join(ln.split()) for ln in text.splitlines() if ln.strip()), "")
        if len(first) > _OUTCOME_CHARS:
            first = first[:_OUTCOME_CHARS - 1] + "…"
        for part in parts:
            # the output of a compound call belongs to all its parts together: no first line
            key = part[:_COMMAND_CHARS]
            self.outcomes[key] = verdict
            self.full[key] = f"{verdict}: {first}" if first and len(parts) == 1 else verdict


def workspace_root(head: Sequence[Message]) -> str | None:
    """The project folder: the one that turns the head's absolute file arguments into the relative
    paths its commands name (``/w/p/src/a.py`` and ``git add src/a.py``: ``/w/p``), else the working
    directory most shell calls ran in (``workdir``/``cwd``), else the folder most absolute file
    arguments are under (three levels deep at least), or None."""
    absolute: set[str] = set()
    relative: set[str] = set()
    workdirs: dict[str, int] = {}
    for message in head:
        for call in message.tool_calls:
            workdir = call.arguments.get("workdir") or call.arguments.get("cwd")
            if isinstance(workdir, str) and workdir.startswith("/"):
                workdirs[workdir.rstrip("/")] = workdirs.get(workdir.rstrip("/"), 0) + 1
            for key in _FILE_ARGS:
                value = call.arguments.get(key)
                if isinstance(value, str) and value.startswith("/"):
                    absolute.add(value)
            line = shell_command(call.name, call.arguments)
            if line is not None:
                relative.update(w for w in _pathlike(line) if not w.startswith(("/", "~")))
    roots: dict[str, int] = {}
    for path in absolute:
        for rel in relative:
            if path.endswith("/" + rel.removeprefix("./")):
                root = path[:-len(rel.removeprefix("./")) - 1]
                roots[root] = roots.get(root, 0) + 1
    if roots:
        return max(sorted(roots), key=lambda r: (roots[r], -len(r)))
    if workdirs:
        return max(workdirs, key=lambda w: workdirs[w])
    folders: dict[str, int] = {}
    for path in absolute:
        parts = path.split("/")[1:-1]
        for n in range(3, len(parts) + 1):
            folder = "/" + "/".join(parts[:n])
            folders[folder] = folders.get(folder, 0) + 1
    wide = [f for f, n in folders.items() if n >= 0.6 * len(absolute)]
    return max(sorted(wide), key=len) if wide else None


def _relative(path: str, root: str | None) -> str:
    """``path`` relative to the project folder, or under the home folder the project is in
    written from ``~/``."""
    if root and path.startswith(root + "/"):
        return path[len(root) + 1:]
    home = _HOME.match(root or "")
    if home and path.startswith(home.group(0)):
        return "~/" + path[len(home.group(0)):]
    return path


_NAMED_GROUP = "Named in commands, searches or requests"
_USES: dict[str, tuple[float, str]] = {
    "edited": (1.0, "Edited"), "user": (1.0, _NAMED_GROUP), "read": (0.8, "Read"),
    "named": (0.6, _NAMED_GROUP), "shown": (0.6, "Named by tool results")}
"""How likely a file is to be needed again by how the head used it, and the group it is listed in:
a file the agent changed or the user named most, one it read or ran a command on less, one a tool
result listed least (divided by the square root of how many paths that result listed: the agent
opens few of a long listing)."""
_COMMAND_WEIGHT = 0.8


def _entries(facts: _Head, root: str | None) -> list[tuple[float, str, str]]:
    """``(priority, group, line)`` of every fact, a file in one group only (its strongest use).
    The priority is the likelihood of its use (:data:`_USES`) times the recency of that use (0.3 to
    1 over the head), raised by how often it was used, lowered for a long one."""
    span = max(facts.last, 1)

    def priority(key: str, weight: float, at: int) -> float:
        return weight * (0.3 + 0.7 * at / span) * (1 + 0.1 * min(facts.uses.get(key, 1) - 1, 6))

    worked = {_folder(_relative(p, root))[0] for p, uses in facts.paths.items()
              if "edited" in uses or "read" in uses}

    files: dict[str, tuple[float, float, str]] = {}
    for path, uses in facts.paths.items():
        best, strongest, group = 0.0, 0.0, ""
        shown = _relative(path, root)
        for how, at in uses.items():
            weight, named = _USES[how]
            if how == "shown":
                weight /= math.sqrt(max(facts.listed.get(path, 1), 1))
                if _folder(shown)[0] in worked:  # next to the files the agent works on
                    weight = min(2 * weight, _USES["shown"][0])
            best = max(best, priority(path, weight, at))
            if weight > strongest:
                strongest, group = weight, named
        old = files.get(shown)
        if old is not None:
            best, (strongest, group) = max(best, old[0]), max((strongest, group), old[1:])
        if path.rstrip("/") != root:
            files[shown] = (best, strongest, group)
    out = [(p, group, shown) for shown, (p, _, group) in files.items()]
    for command, at in facts.commands.items():
        out.append((priority(command, _COMMAND_WEIGHT, at), "Commands", command))
    return out


_ORDER = ("Edited", "Read", "Commands", _NAMED_GROUP, "Named by tool results")
_HEADINGS = {**{g: f"{g}:" for g in _ORDER}, "Commands": "Commands run (outcome of the last run):"}
_MORE = "- (+{} less recently used files and commands in the archive)"


def _folder(path: str) -> tuple[str, str]:
    folder, _, name = path.rstrip("/").rpartition("/")
    return folder, name


def _paths_line(paths: Sequence[str]) -> list[str]:
    """Paths written as a person lists them: the files of one folder after the folder, the folder
    repeated every few names (so each name stands near it; a long folder written whole once, then
    by its last two folders after ``…/``), a lone file whole."""
    folders: dict[str, list[str]] = {}
    for path in paths:
        folder, name = _folder(path)
        folders.setdefault(folder, []).append(name)
    out: list[str] = []
    for folder, names in folders.items():
        if not folder or len(names) == 1:
            out += [f"`{folder}/{n}`" if folder else f"`{n}`" for n in names]
            continue
        parts = folder.split("/")
        again = (f"…/{'/'.join(parts[-2:])}" if len(folder) > _LONG_FOLDER and len(parts) > 3
                 else folder)
        written = folder
        segment: list[str] = []
        for name in names:
            segment.append(name)
            if sum(len(n) + 2 for n in segment) > _SEGMENT_CHARS:
                out.append(f"`{written}/`: " + ", ".join(segment))
                written, segment = again, []
        if segment:
            out.append(f"`{written}/`: " + ", ".join(segment))
    return out


def evidence_section(head: Sequence[Message], *, edit_tool: re.Pattern[str],
                     max_chars: int = DEFAULT_EVIDENCE_CHARS) -> str:
    """The section's body (see the module doc) within ``max_chars`` characters, the most recently
    used facts first; empty when the head names no file and runs no command."""
    root = workspace_root(head)
    facts = _Head(head, edit_tool)
    entries = _entries(facts, root)
    if not entries:
        return ""
    siblings: dict[str, int] = {}
    for _, group, text in entries:
        if group != "Commands":
            siblings[_folder(text)[0]] = siblings.get(_folder(text)[0], 0) + 1

    def room(entry: tuple[float, str, str]) -> float:
        """About the characters the entry takes (a folder shared by its siblings)."""
        _, group, text = entry
        if group == "Commands":
            return len(text) + 12
        folder, name = _folder(text)
        return len(name) + 4 + (len(folder) + 6) / siblings[folder]

    # the likeliest facts per character first, so the section holds the most likely use it can
    entries.sort(key=lambda e: (-e[0] / room(e), -e[0]))
    chosen: list[tuple[float, str, str]] = []
    folders: set[tuple[str, str]] = set()
    first = "Likeliest to be needed first" + (f"; paths relative to `{root}/`." if root else ".")
    used = len(first) + len(_MORE) + 12  # the first line and the count of the facts left out
    covered = detailed = 0
    for likely, group, text in entries:
        if group == "Commands":
            outcome = facts.full.get(text, "") if detailed < _DETAILED else facts.outcomes.get(text, "")
            line = f"`{text}`" + (f" → {outcome}" if outcome else "")
            cost = len(line) + 5
        else:
            named = re.compile(r"(?<![\w./-])" + re.escape(text) + r"(?![\w/-])")
            if any(named.search(c[2]) for c in chosen if c[1] == "Commands"):
                covered += 1  # a command kept already names it
                continue
            line = text
            folder, name = _folder(text)
            cost = len(name) + 2 if (group, folder) in folders else len(text) + 8
        if not any(c[1] == group for c in chosen):
            cost += len(_HEADINGS[group]) + 3
        if used + cost <= max_chars:
            chosen.append((likely, group, line))
            used += cost
            if group == "Commands":
                detailed += 1
            else:
                folders.add((group, _folder(text)[0]))
    lines = [first]
    for group in _ORDER:
        mine = [text for _, g, text in sorted(chosen, key=lambda c: -c[0]) if g == group]
        if mine:
            lines.append(f"- {_HEADINGS[group]}")
            lines += [f"  - {line}" for line in (mine if group == "Commands" else _paths_line(mine))]
    if len(chosen) + covered < len(entries):
        lines.append(_MORE.format(len(entries) - len(chosen) - covered))
    return "\n".join(lines)
