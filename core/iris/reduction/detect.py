"""Content detectors used by classification (R-RED-3, R-RED-5), as the reference describes them.

High risk, diff, confirmation, build log, search hits, numbered source, JSON/NDJSON, skill
envelopes and the read-only shell allow-list. Each is a pure function of text (and the command).
"""

from __future__ import annotations

import json
import re

__all__ = [
    "head_lines", "is_build_log", "is_confirmation", "is_diff", "is_high_risk", "is_json_document",
    "is_ndjson",
    "is_numbered_source", "is_read_only_shell", "is_search_content", "is_skill", "search_hits",
]

_HIGH_RISK = ("traceback", "panic:", "exception", "segmentation fault", "permission denied",
              "access denied", "unauthorized", "forbidden", "expected:", "actual:", "assertion failed",
              "assert failed", "--- fail", "npm err!", "fatal:")
_DIFF_META = ("new file mode", "deleted file mode", "old mode", "new mode", "rename from", "rename to",
              "copy from", "copy to", "binary files", "git binary patch", "index ")
_CONFIRM = re.compile(r"\b\w+ successfully\b|background task (?:started|completed)|\bdone\b", re.IGNORECASE)
# User authorisation results (seed 002 剪裁规则, 确认/权限: "用户授权结果"): the user, a permission or
# an access was approved, allowed or granted. Kept narrow: the subject comes first (at most one
# auxiliary between), or "… by the user"; a negation anywhere makes it no confirmation (a
# denial is a permission error, kept by the high-risk rule, never "[Confirmed]").
_AUTHORISED = re.compile(
    r"\b(?:user|permission|access|approval)\s+(?:(?:has|have|was|is|been)\s+)?"
    r"(?:approved|allowed|granted|authori[sz]ed)\b"
    r"|\b(?:approved|allowed|granted|authori[sz]ed)\s+by\s+(?:the\s+)?user\b", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:not|never|no longer|denied|deny|rejected|refused|declined|revoked)\b"
                      r"|n't\b", re.IGNORECASE)
_LOG_START = ("fail ", "--- fail", "build failed", "lint failed", "panic:", "traceback", "diagnostics:")
_LOG_WORDS = ("error", "warning", "fail", "panic", "traceback", "exception")
_SEARCH_LINE = re.compile(r"^(?P<path>[^:\s][^:]*?):(?P<line>\d{1,15})(?::\d+)?[:\-](?P<text>.*)$")
_NUMBERED = re.compile(r"^\s*\d+\s")
_NUMBERED_ARROW = re.compile(r"^\s*\d+(?:→|\t)")
_READ_ONLY_FIRST = {"pwd", "ls", "cat", "which", "head", "tail", "wc", "stat", "file", "du", "df"}
_READ_ONLY_GIT = {"status", "log", "diff", "show", "branch", "rev-parse"}
_SHELL_META = set(";|&`$><\\()*?[]{}\n")


_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: ")


def head_lines(text: str, n: int) -> tuple[list[str], str]:
    """``text.splitlines()[:n]`` without splitting the whole of a long text, and a prefix of the
    text holding at least those lines (detectors only look at the first lines)."""
    k = 4096
    while k < len(text):
        part = text[:k]
        lines = part.splitlines()
        if len(lines) > n + 1:  # the first n lines are complete: same as splitting it all
            return lines[:n], part
        k *= 4
    return text.splitlines()[:n], text


def is_diff(text: str) -> bool:
    """A unified/git diff header followed by a hunk or git metadata in the first 80 lines, or an
    apply-patch envelope."""
    lines, head = head_lines(text, 80)
    if "***" not in head and "diff --git" not in head and "--- " not in head and "+++ " not in head:
        return False  # none of the lines can start a header or an envelope
    header = False
    for line in lines:
        if line.startswith("*** Begin Patch") or _PATCH_FILE.match(line):
            return True
        if line.startswith(("diff --git", "--- ", "+++ ")):
            header = True
        elif header and (line.startswith("@@") or line.lower().startswith(_DIFF_META)):
            return True
    return False


def is_high_risk(text: str, *, shell: bool = False, diff: bool | None = None) -> bool:
    """Failure logs, stack traces, permission/security errors, assertion output, or a diff
    (``diff``: :func:`is_diff` already computed for this text)."""
    if is_diff(text) if diff is None else diff:
        return True
    low = text[:65536].lower()
    if any(marker in low for marker in _HIGH_RISK):
        return True
    return shell and "failed" in low


def is_confirmation(text: str) -> bool:
    """Short confirmation-like output (≤180 chars, ≤3 lines): the reference's phrases, or a user
    authorisation result without a negation ("User approved: yes, allow this operation.")."""
    stripped = text.strip()
    if not (0 < len(stripped) <= 180 and stripped.count("\n") < 3):
        return False
    if _CONFIRM.search(stripped) is not None:
        return True
    return _AUTHORISED.search(stripped) is not None and _NEGATED.search(stripped) is None


def is_build_log(text: str) -> bool:
    """A build/test/lint log: a line starting with a failure marker, or ≥2 lines naming problems."""
    low_all = text.lower()
    # every start marker but "diagnostics:" holds a log word; lowercasing is per character, so a
    # word in a lowered line is in the lowered text: without any, no line can count
    if not any(w in low_all for w in _LOG_WORDS) and "diagnostics:" not in low_all:
        return False
    hits = 0
    for line in text.splitlines():
        low = line.strip().lower()
        if low.startswith(_LOG_START):
            return True
        if any(w in low for w in _LOG_WORDS):
            hits += 1
            if hits >= 2:
                return True
    return False


def search_hits(text: str, limit: int | None = None) -> list[tuple[str, int, str]]:
    """``(path, line, text)`` of every ``path:line:text`` line (path must contain / \\ or .)."""
    hits: list[tuple[str, int, str]] = []
    for line in (text.splitlines() if limit is None else head_lines(text, limit)[0]):
        m = _SEARCH_LINE.match(line)
        if m and any(c in m.group("path") for c in "/\\."):
            hits.append((m.group("path"), int(m.group("line")), m.group("text").strip()))
    return hits


def is_search_content(text: str) -> bool:
    """At least 2 of the first 24 lines parse as ``path:line:text`` (:func:`search_hits`)."""
    hits = 0
    for line in head_lines(text, 24)[0]:
        m = _SEARCH_LINE.match(line)
        if m and any(c in m.group("path") for c in "/\\."):
            hits += 1
            if hits == 2:  # enough: the rest of the lines change nothing
                return True
    return False


def is_numbered_source(text: str) -> bool:
    """At least 4 of the first 16 lines start with digits and whitespace (or Claude's arrow)."""
    hits = 0
    for ln in head_lines(text, 16)[0]:
        if _NUMBERED.match(ln) or _NUMBERED_ARROW.match(ln):
            hits += 1
            if hits == 4:
                return True
    return False


def is_json_document(text: str) -> bool:
    """A whole JSON object or array."""
    s = text.strip()
    if not s or (s[0], s[-1]) not in (("{", "}"), ("[", "]")):
        return False
    try:
        json.loads(s)
    except ValueError:
        return False
    return True


def is_ndjson(text: str) -> bool:
    """JSON lines: several lines, the first lines each a ``{…}`` object."""
    lines = _first_filled(text.strip(), 8)
    if len(lines) < 2:
        return False
    return all(ln.startswith("{") and ln.endswith("}") for ln in lines)


def _first_filled(text: str, n: int) -> list[str]:
    """The first ``n`` non-blank lines of ``text``, stripped, without splitting all of a long text
    (a line cut by the end of a prefix is left for the next, longer prefix)."""
    k = 1024
    while True:
        whole = k >= len(text)
        filled: list[str] = []
        for line in text.splitlines() if whole else text[:k].splitlines()[:-1]:
            line = line.strip()
            if line:
                filled.append(line)
                if len(filled) == n:
                    return filled
        if whole:
            return filled
        k *= 4


def is_skill(text: str) -> bool:
    """A skill body: its envelope carries a ``<root>`` anchor."""
    return "<root>" in text[:4096]


def is_read_only_shell(command: str | None) -> bool:
    """The command is on the static read-only allow-list (no shell metacharacters)."""
    if not command:
        return False
    cmd = command.strip()
    if not cmd or any(c in _SHELL_META for c in cmd):
        return False
    words = cmd.split()
    first = words[0]
    if first == "git":
        return len(words) > 1 and words[1] in _READ_ONLY_GIT
    if first not in _READ_ONLY_FIRST:
        return False
    if first == "tail" and ("-f" in words[1:] or "-F" in words[1:]):
        return False
    return not (first == "file" and "-C" in words[1:])
