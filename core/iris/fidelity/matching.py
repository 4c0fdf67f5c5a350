"""Whether a text states a fact, as a person reading it would say (R-FID-1, R-FID-4).

Every kind has its rule, applied to text normalised by :class:`~.facts.Normaliser`:

- ``paths``: the path as a whole word (``src/a.py`` is not in ``src/a.pyc``, ``src/a`` is not in
  ``src/a.py``); a directory written with a trailing slash (``priv/static/assets/``); a shorter
  form of the same path, two components or more, that ends it (``session/state.go`` for
  ``cmd/entire/cli/session/state.go``) or a longer one it ends (the absolute path); or the file's
  name within :data:`FOLDER_WINDOW` characters of its folder (``state.go`` next to ``session/``);
- ``commands``: the command as whole shell words (``bd show X`` is not in ``bd show X.4``);
- ``identifiers``: the word bounded by non-word characters;
- ``errors``, ``urls``: the key anywhere (errors compared lower-cased);
- ``numbers``: the same number with the same canonical unit;
- ``instructions``: one line holding :data:`INSTRUCTION_OVERLAP` of its content words.
"""

from __future__ import annotations

import re

from .facts import Fact, FactKind, content_words, numbers

__all__ = ["FOLDER_WINDOW", "INSTRUCTION_OVERLAP", "Matcher"]

INSTRUCTION_OVERLAP = 0.75
"""Share of an instruction's content words one line must hold to count as stating it again."""
FOLDER_WINDOW = 80
"""How near (in characters) a file's name and its folder must stand to name the file."""

_PATH_CHARS = re.compile(r"[\w.@+~/-]")
_PATH_WORD = re.compile(r"[\w.@+~/-]+")
_LEADING = re.compile(r"^(?:(?:~|\.{1,2})?/)+")
# A path ends where no path character follows; a slash or dot followed by more of a path
# continues it (``a/b`` is not in ``a/b/c`` nor in ``a/b.py``), a trailing one does not.
_PATH_END = r"(?![\w@+-]|[./][\w@+-])"
_CMD_START = r"(?<![^\s;&|(`'\"$])"
_CMD_END = r"(?=$|[\s;&|)`'\"]|[.,:](?:\s|$))"


def _path_token(text: str, start: int, end: int) -> str:
    """The whole path-like word of ``text`` around ``[start, end)``."""
    while start > 0 and _PATH_CHARS.match(text, start - 1):
        start -= 1
    return _LEADING.sub("", text[start:end])


class _PathRule:
    """The matching rule of one path key (see the module doc)."""

    def __init__(self, key: str) -> None:
        self.key = key.rstrip("/")
        parts = self.key.split("/")
        self.tail = "/".join(parts[-2:]) if len(parts) > 1 else self.key
        self.tail_re = re.compile(r"(?<![\w.@+-])" + re.escape(self.tail) + _PATH_END)
        self.name = parts[-1]
        self.folder = "/".join(parts[:-1])
        named = len(parts) > 1 and "." in self.name.strip(".")
        self.name_re = (re.compile(r"(?<![\w./@+-])" + re.escape(self.name) + _PATH_END)
                        if named else None)

    def _same_file(self, token: str) -> bool:
        """Whether the whole path word ``token`` names this path (a suffix of two components or
        more, or a longer path ending in it)."""
        return (token == self.key or self.key.endswith("/" + token)
                or token.endswith("/" + self.key))

    def _in_folder(self, folder: str) -> bool:
        return bool(folder) and (self.folder == folder or self.folder.endswith("/" + folder))

    def found(self, text: str) -> bool:
        if self.tail in text:
            for m in self.tail_re.finditer(text):
                if self._same_file(_path_token(text, m.start(), m.end())):
                    return True
        if self.name_re is None or self.name not in text:
            return False
        for m in self.name_re.finditer(text):
            window = text[max(m.start() - FOLDER_WINDOW, 0):m.end() + FOLDER_WINDOW]
            for word in _PATH_WORD.finditer(window):
                token = word.group(0).rstrip(".")
                folder = _LEADING.sub("", token).rstrip("/")
                if ("/" in folder or token.endswith("/")) and self._in_folder(folder):
                    return True
        return False


class Matcher:
    """Finds a fact's key in normalised text, by the rule of its kind (the module doc)."""

    def __init__(self) -> None:
        self._rules: dict[tuple[FactKind, str], re.Pattern[str] | _PathRule] = {}

    def _rule(self, fact: Fact) -> re.Pattern[str] | _PathRule:
        found = self._rules.get((fact.kind, fact.key))
        if found is None:
            key = re.escape(fact.key)
            if fact.kind == "paths":
                found = _PathRule(fact.key)
            elif fact.kind == "commands":
                found = re.compile(_CMD_START + key + _CMD_END)
            elif fact.kind == "identifiers":
                found = re.compile(r"(?<!\w)" + key + r"(?!\w)")
            else:
                found = re.compile(key)
            self._rules[fact.kind, fact.key] = found
        return found

    def found(self, fact: Fact, text: str, lower: str) -> bool:
        """Whether normalised ``text`` (``lower``: the same, lower-cased, line breaks kept)
        states ``fact``."""
        if fact.kind == "numbers":
            return fact.key in lower and fact.key in set(numbers(text))
        if fact.kind == "instructions":
            return _states_instruction(fact, lower)
        if fact.kind == "errors":
            return fact.key in lower
        rule = self._rule(fact)
        if isinstance(rule, _PathRule):
            return rule.found(text)
        return fact.key in text and rule.search(text) is not None


def _states_instruction(fact: Fact, lower: str) -> bool:
    wanted = set(fact.key.split())
    if not wanted:
        return False
    for line in re.split(r"(?<=[.!?])\s+|\n+", lower):
        if len(wanted & content_words(line)) >= INSTRUCTION_OVERLAP * len(wanted):
            return True
    return False
