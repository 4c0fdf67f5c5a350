"""Facts a span of messages states, by kind, and their normalised matching keys (R-FID-1).

A compaction replaces a span of messages with a checkpoint. What the rest of the session may need
from that span are concrete, checkable facts: the files it worked on, the commands it ran, the code
identifiers it looked for or defined, the errors it met, the URLs and measured numbers it named and
the user's explicit instructions. This module finds them with plain string rules (no model), and
gives each one a *key*: the normalised form that :mod:`.matching` looks for in other text.

Where each kind comes from:

- ``paths``: the file arguments of tool calls, path-like words in commands, patterns and user text
  (and, by :mod:`.record`, paths a tool result stated that a later tool call used);
- ``commands``: the simple commands of shell calls (split at ``&&``, ``||``, ``;``; the first stage
  of a pipeline; redirections and ``cd`` dropped; a fragment cut off by a here-document dropped);
- ``identifiers``: snake_case, camelCase and PascalCase words in search patterns and commands, and
  the functions and classes of those forms an edit or write defines;
- ``errors``: the first meaningful line of a failed tool result;
- ``urls``, ``numbers`` (with a unit): tool arguments, user text and assistant text;
- ``instructions``: user sentences with a constraint word ("don't", "always", "must", "only"…).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, cast

from ..frozen import FrozenModel
from ..session import Message, TextBlock

__all__ = ["FACT_KINDS", "Fact", "FactKind", "Normaliser", "command_parts", "command_text",
           "extract_facts", "facts_with_last_use", "is_identifier", "message_mentions",
           "result_paths", "tool_inputs"]

FactKind = Literal["paths", "commands", "identifiers", "errors", "urls", "numbers", "instructions"]
FACT_KINDS: tuple[FactKind, ...] = ("paths", "commands", "identifiers", "errors", "urls",
                                    "numbers", "instructions")

PATH_KEYS = ("path", "file_path", "filePath", "filename", "notebook_path")
_SHELL_TOOL = re.compile(r"bash|shell|exec|command|terminal|run", re.IGNORECASE)
_EDIT_TOOL = re.compile(r"edit|write|patch|replace|create", re.IGNORECASE)
_PATTERN_KEYS = ("pattern", "query", "regex", "glob", "symbol", "name")
_EDIT_TEXT_KEYS = ("new_string", "content", "new_str", "file_text", "patch", "input")

_PATH = re.compile(r"(?<![\w:/.~-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]+")
_FILE = re.compile(r"(?<![\w/.-])[\w-]+\.(?:py|md|ts|tsx|js|jsx|go|rs|json|ya?ml|toml|txt|sh|ex|exs"
                   r"|heex|eex|css|html|sql|c|h|cpp|java|rb|lock|cfg|ini)\b")
_URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`]+")
_IDENT = re.compile(r"(?<![\w.$-])[A-Za-z_][A-Za-z0-9_]{3,}(?![\w-])")
_DEFINED = re.compile(r"\b(?:def|defp|defmacro|class|function|func|interface|struct)\s+"
                      r"([A-Za-z_][A-Za-z0-9_?!]{2,})")
_UNIT_WORDS = (r"%|ms|µs|us|ns|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|[kKMGT]i?B"
               r"|bytes?|px|rem|em|pt|tokens?|lines?|chars?|characters?|[kMG]Hz|°[CF]|x|×")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)\s?(" + _UNIT_WORDS + r")(?![\w])")
_CONSTRAINT = re.compile(r"\b(don'?t|do not|never|always|must|mustn'?t|should|shouldn'?t|make sure|"
                         r"ensure|only|avoid|without|instead|please|need to|keep)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_TAGGED = re.compile(r"<(system-reminder|local-command-[\w-]+|command-[\w-]+|task-notification)>"
                     r".*?</\1>", re.DOTALL)
_TOOL_ERROR_TAG = re.compile(r"</?tool_use_error>")
_EXIT_LINE = re.compile(r"^(exit code \d+|error|command failed)\W*$", re.IGNORECASE)
_ERRORISH = re.compile(r"error|exception|failed|fatal|traceback|not found|denied|cannot|invalid",
                       re.IGNORECASE)
_UNIT_CANON = {"sec": "s", "secs": "s", "second": "s", "seconds": "s", "min": "min", "mins": "min",
               "minute": "min", "minutes": "min", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
               "day": "d", "days": "d", "byte": "b", "bytes": "b", "token": "tokens",
               "line": "lines", "char": "chars", "character": "chars", "characters": "chars",
               "×": "x"}
_SKIP_COMMANDS = {"cd", "echo", "sleep", "true", "false", "clear", "pwd", "export", "set"}
_NOT_PATHS = {"/dev/null", "/dev/stdout", "/dev/stderr", "and/or", "n/a", "w/o"}
MAX_RESULT_CHARS = 20_000
"""How much of one tool result is read for the paths it states."""
MAX_FACT_CHARS = 200
"""Longer commands and sentences are cut to this many characters (matched as a prefix)."""


class Fact(FrozenModel):
    """One fact a span stated."""

    kind: FactKind
    text: str
    """As it was written (shortened to ``MAX_FACT_CHARS``)."""
    key: str
    """The normalised form matched in other text (see :class:`Normaliser`)."""
    message: int
    """Session index of the message that first stated it."""
    from_result: bool = False
    """First seen in a tool result (and used in a later tool call's arguments)."""


class Normaliser:
    """The normal form every text is compared in: the workspace root removed (an absolute path
    and the same path relative to the project are one path) and whitespace collapsed."""

    def __init__(self, workspace_root: str | None) -> None:
        root = (workspace_root or "").rstrip("/")
        self._root = re.compile(re.escape(root) + r"/?") if len(root) > 1 else None

    def text(self, text: str) -> str:
        text = self._root.sub("", text) if self._root is not None else text
        return " ".join(text.split())

    def path(self, path: str) -> str:
        key = self.text(path.strip("`'\"()[]{}<>,;:")).rstrip(".")
        while key.startswith("./"):
            key = key[2:]
        return key


def _strings(value: object) -> Iterator[str]:
    """Every string inside a tool-call argument value (lists and objects walked)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in cast("Mapping[str, object]", value).values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in cast("Sequence[object]", value):
            yield from _strings(v)


def command_text(arguments: Mapping[str, Any]) -> str | None:
    """The command line of a shell tool call's arguments (``command`` or ``cmd``, a list joined)."""
    command: object = arguments.get("command") or arguments.get("cmd")
    if isinstance(command, list):
        command = " ".join(map(str, cast("list[object]", command)))
    return command if isinstance(command, str) else None


def _split_unquoted(command: str) -> list[str]:
    """``command`` split at ``&&``, ``||``, ``;`` and line breaks outside quotes; a here-document
    ends the split (its body is not commands)."""
    parts: list[str] = []
    quote, start, i = "", 0, 0
    while i < len(command):
        ch = command[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif command.startswith("<<", i):
            break
        elif ch in ";\n" or command.startswith(("&&", "||"), i):
            parts.append(command[start:i])
            i += 1 if ch in ";\n" else 2
            start = i
            continue
        i += 1
    parts.append(command[start:i])
    return parts


def _fragment(part: str) -> bool:
    """Whether a simple command is cut off: an unclosed quote or ``$(`` (the first line of a
    quoted here-document, ``git commit -m "$(cat``), which no later command states as such."""
    quote, depth, i = "", 0, 0
    while i < len(part):
        ch = part[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif part.startswith("$(", i):
            depth += 1
            i += 1
        elif ch == ")" and depth:
            depth -= 1
        i += 1
    return bool(quote) or depth > 0


_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "for", "while", "case", "esac",
             "{", "}", "(", ")"}


def command_parts(command: str) -> list[str]:
    """The simple commands of a shell command line, in order (see the module doc)."""
    out: list[str] = []
    for part in _split_unquoted(re.sub(r"\\\n\s*", " ", command)):
        first = re.split(r"\s\|\s", part.split("\n", 1)[0], maxsplit=1)[0]
        first = re.sub(r"\s\d?>>?\s?(&\d|\S+)|\s\d?<\s?\S+", "", f" {first} ").strip()
        words = first.split()
        if _fragment(first):
            continue
        if words and words[0] not in _SKIP_COMMANDS and words[0] not in _KEYWORDS \
                and not words[0].startswith("#"):
            out.append(" ".join(words))
    return out


def _paths(text: str, norm: Normaliser) -> Iterator[str]:
    for m in _PATH.finditer(text):
        raw = m.group(0).rstrip(".,:;")
        if "://" in text[m.start():m.end() + 3] or raw.lower() in _NOT_PATHS:
            continue
        last = raw.rsplit("/", 1)[-1]
        if "." in last.strip(".") or raw.startswith(("/", "~", "./", "../")):
            key = norm.path(raw)
            if key and ("/" in key or "." in key.strip(".")):
                yield key
    for m in _FILE.finditer(text):
        yield norm.path(m.group(0))


def is_identifier(word: str) -> bool:
    """Whether ``word`` reads as a code identifier: snake_case (not an all-caps constant),
    camelCase or PascalCase with an inner capital; a plain word never is."""
    inner = word.strip("_")
    return bool(("_" in inner and not inner.isupper()) or re.search(r"[a-z][A-Z]", word)
                or re.fullmatch(r"[A-Z][a-z0-9]+[A-Z]\w*", word))


def _identifiers(text: str) -> Iterator[str]:
    scrubbed = _URL.sub(" ", _PATH.sub(" ", _FILE.sub(" ", text)))
    for m in _IDENT.finditer(scrubbed):
        if is_identifier(m.group(0)):
            yield m.group(0)


def number_key(number: str, unit: str) -> str:
    unit = _UNIT_CANON.get(unit.lower(), unit.lower())
    return number.replace(",", ".") + unit


def numbers(text: str) -> Iterator[str]:
    for m in _NUMBER.finditer(text):
        yield number_key(m.group(1), m.group(2))


def _urls(text: str) -> Iterator[str]:
    for m in _URL.finditer(text):
        yield m.group(0).rstrip(".,:;!?'\"").rstrip("/")


def user_text(message: Message) -> str:
    """What a person typed: the text blocks of a real user message, without the agent's tagged
    insertions (system reminders, local command output)."""
    if message.role != "user" or message.synthetic or message.is_compaction_summary:
        return ""
    text = "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
    return _TAGGED.sub(" ", text).strip()


def assistant_text(message: Message) -> str:
    if message.role != "assistant":
        return ""
    return "\n".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()


def _instructions(text: str) -> Iterator[str]:
    for sentence in _SENTENCE.split(text):
        sentence = " ".join(sentence.split())
        if _CONSTRAINT.search(sentence) and len(content_words(sentence)) >= 3:
            yield sentence[:MAX_FACT_CHARS]


_STOP = frozenset({"the", "and", "for", "you", "that", "this", "with", "are", "not", "but", "can",
                   "was", "have", "has", "from", "all", "any", "its", "it's", "into", "then", "than",
                   "they", "them", "there", "what", "when", "will", "your", "our", "out", "use",
                   "please", "don't", "dont", "do", "make", "sure", "only", "always", "never", "should",
                   "must", "keep"})


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words of three letters or more that carry meaning (instruction matching)."""
    return frozenset(w for w in re.findall(r"[a-z0-9_'./-]{3,}", text.lower()) if w not in _STOP)


def _error_line(text: str) -> str | None:
    lines = [" ".join(line.split()) for line in _TOOL_ERROR_TAG.sub("", text).splitlines()]
    lines = [line for line in lines if line and not _EXIT_LINE.match(line)]
    if not lines:
        return None
    line = next((x for x in lines if _ERRORISH.search(x)), lines[0])
    return line[:MAX_FACT_CHARS]


def _call_facts(message: Message, norm: Normaliser) -> Iterator[tuple[FactKind, str, str]]:
    for call in message.tool_calls:
        args = call.arguments
        for key in PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                path = norm.path(value)
                if path:
                    yield "paths", value, path
        command = command_text(args) if _SHELL_TOOL.search(call.name) else None
        if command is not None:
            for part in command_parts(command):
                key = norm.text(part)[:MAX_FACT_CHARS]
                yield "commands", part[:MAX_FACT_CHARS], key
        searched = [v for k in _PATTERN_KEYS if isinstance(v := args.get(k), str)]
        for text in [*searched, *([command] if command else [])]:
            for path in _paths(text, norm):
                yield "paths", path, path
            for word in _identifiers(text):
                yield "identifiers", word, word
        if _EDIT_TOOL.search(call.name):
            for key in _EDIT_TEXT_KEYS:
                for text in _strings(args.get(key)):
                    for m in _DEFINED.finditer(text):
                        if is_identifier(m.group(1).rstrip("?!")):
                            yield "identifiers", m.group(1), m.group(1)
        for text in _strings(args):
            for url in _urls(text):
                yield "urls", url, url
        for text in [*searched, *([command] if command else [])]:
            for key in numbers(text):
                yield "numbers", key, key


def _text_facts(message: Message, norm: Normaliser) -> Iterator[tuple[FactKind, str, str]]:
    typed, said = user_text(message), assistant_text(message)
    for text in (typed, said):
        for url in _urls(text):
            yield "urls", url, url
        for key in numbers(_URL.sub(" ", text)):
            yield "numbers", key, key
    for path in _paths(_URL.sub(" ", typed), norm):
        yield "paths", path, path
    for sentence in _instructions(typed):
        yield "instructions", sentence, " ".join(sorted(content_words(sentence)))


def _error_facts(message: Message, norm: Normaliser) -> Iterator[tuple[FactKind, str, str]]:
    for result in message.tool_results:
        if result.is_error and (line := _error_line(result.text)) is not None:
            yield "errors", line, norm.text(line).lower()[:120]


def extract_facts(messages: Iterable[tuple[int, Message]], *, workspace_root: str | None = None
                  ) -> tuple[Fact, ...]:
    """The facts of ``(session index, message)`` pairs, each once (its first statement), in
    order of appearance."""
    return tuple(fact for fact, _ in facts_with_last_use(messages, workspace_root=workspace_root))


def facts_with_last_use(messages: Iterable[tuple[int, Message]], *,
                        workspace_root: str | None = None) -> tuple[tuple[Fact, int], ...]:
    """Each fact of :func:`extract_facts` with the index of the last message that stated it."""
    norm = Normaliser(workspace_root)
    seen: dict[tuple[FactKind, str], Fact] = {}
    last: dict[tuple[FactKind, str], int] = {}
    for index, message in messages:
        if message.is_compaction_summary:
            continue
        found = [*_call_facts(message, norm), *_text_facts(message, norm),
                 *_error_facts(message, norm)]
        for kind, text, key in found:
            if not key:
                continue
            if (kind, key) not in seen:
                seen[kind, key] = Fact(kind=kind, text=text, key=key, message=index)
            last[kind, key] = index
    return tuple((fact, last[fact.kind, fact.key]) for fact in seen.values())


def tool_inputs(message: Message) -> str:
    """Every string of ``message``'s tool calls' arguments."""
    return "\n".join(text for call in message.tool_calls for text in _strings(call.arguments))


def result_paths(message: Message, norm: Normaliser) -> Iterator[str]:
    """The keys of the file paths with a folder (``a/b.py``, not a bare ``b.py`` nor a route
    ``/api/items``) that ``message``'s tool results state; the first :data:`MAX_RESULT_CHARS` characters of each result are read."""
    for result in message.tool_results:
        for key in _paths(result.text[:MAX_RESULT_CHARS], norm):
            if key.startswith(("a/", "b/")) and f"--- {key}" in result.text \
                    or f"+++ {key}" in result.text:
                key = key[2:]  # a diff's a/ and b/ sides name the file itself
            if "/" in key.strip("/") and "." in key.rsplit("/", 1)[-1].strip("."):
                yield key  # a file (a route such as /api/items is not one)


def message_mentions(message: Message) -> str:
    """What a later message *mentions*: its tool calls' arguments, a person's text, the
    assistant's prose (tool results and reasoning are not mentions)."""
    parts = [user_text(message), assistant_text(message)]
    for call in message.tool_calls:
        parts.extend(_strings(call.arguments))
    return "\n".join(p for p in parts if p)
