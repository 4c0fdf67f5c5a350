"""Files re-attached after a compaction (``compaction.restore_recent_reads``).

Claude Code does not send the summary alone after it compacts. Its rule (the same from 1.0 to
2.1.88 in the published analyses and source of ``compact.ts``): the file state it keeps per path
(set by a Read, an Edit and a Write alike, each stamped with a time) is saved and cleared; the 5
most recent entries, leaving out the session's plan file and its CLAUDE.md memory files, are read
again from disk, each limited to 5,000 tokens; a file over that comes back as a short reference
naming it (``compact_file_reference``), not its text; the attachments are then taken in order
while their JSON stays within 50,000 tokens (counted at 4 characters a token), a file that does
not fit is left out and the next may still fit. Up to 2.1.85 a Read is stamped with the time it
ran; from 2.1.86 with the file's modification time (the transcript does not record it, so files
only read rank after the edited ones). A restored file is sent as a Read call and its result,
each in a ``<system-reminder>``: the result JSON-quoted up to 2.1.85, as text (``N<tab>`` line
numbers) from 2.1.86, followed by the reminder the session's reads carried. The files restored
are read again, so they are in the file state at the next compaction. See docs/profiles.md.

The transcript does not record these attachments, and the replay has no disk: it rebuilds each
file as the disk had it at the compaction from the recorded calls. The last full read (a read
from the first line that did not stop at its limit) or a Write gives the whole text; a partial
read gives the lines it displayed (a later read of a line wins); each later Edit/MultiEdit is
applied to the text known before it (its ``old_string`` replaced by its ``new_string``, line
numbers after it shifted). Where the replay does not know the whole file (partial reads, an edit
of text it never saw), the note of the compaction says so; such a file counts as large as the line
count its last read recorded (Claude Code ``toolUseResult.file.totalLines``) suggests, else its
highest line number displayed.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ..reduction.facts import numbered_lines
from ..reduction.toolkinds import ToolKindMap
from ..session import Message, TextBlock, ToolCallBlock
from ..tokens import TokenEstimator
from .config import RestoreReads

__all__ = ["RESTORED_TAG", "Restored", "restore_files", "restored_reads"]

RESTORED_TAG = "restored-file"
_PATH_KEYS = ("file_path", "path", "filePath", "filename", "file", "notebook_path", "target_file")
_READ_LINES = 2000
"""Claude Code's Read shows at most this many lines when the call sets no limit."""
_MEMORY_FILES = frozenset({"CLAUDE.md", "CLAUDE.local.md"})
_REMINDER_OPEN = "<system-reminder>"
_CALLED = "Called the Read tool with the following input: "
_RESULT = "Result of calling the Read tool:"
_ATTACHMENT_FIELDS = 250
"""Characters of an attachment's JSON besides the path and content (its type, uuid, timestamp,
line counts and key names), counted towards the 50,000-token budget."""


def _path(call: ToolCallBlock) -> str | None:
    return next((str(call.arguments[k]) for k in _PATH_KEYS
                 if isinstance(call.arguments.get(k), str)), None)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _edits(call: ToolCallBlock) -> list[tuple[str, str, bool]]:
    """``(old, new, replace_all)`` of an edit call (Claude Code ``Edit``/``MultiEdit``)."""
    args: Mapping[str, Any] = call.arguments
    many = args.get("edits")
    raw: list[Any] = cast("list[Any]", many) if isinstance(many, list) else [args]
    out: list[tuple[str, str, bool]] = []
    for edit in raw:
        if isinstance(edit, Mapping):
            fields = cast("Mapping[str, Any]", edit)
            old, new = fields.get("old_string"), fields.get("new_string")
            if isinstance(old, str) and isinstance(new, str):
                out.append((old, new, bool(fields.get("replace_all"))))
    return out


def _reminder(text: str) -> str | None:
    """The ``<system-reminder>`` a read result ends with (Claude Code appends one to every file
    it shows, model permitting), with the blank line before it; None when it ends otherwise."""
    at = text.rfind("\n\n" + _REMINDER_OPEN)
    if at < 0 or not text.rstrip().endswith("</system-reminder>"):
        return None
    return text[at:]


@dataclass
class _File:
    """What the replay knows of one file on disk: ``lines`` by number; ``whole``: they are the
    whole file (a full read, a write); ``unknown``: an edit changed text the replay never saw."""

    lines: dict[int, str] = field(default_factory=dict[int, str])
    whole: bool = False
    unknown: bool = False
    total: int | None = None
    """The file's line count as the last read recorded it (shifted by the edits applied since)."""
    touched: int = 0
    modified: int = -1

    def read(self, arguments: Mapping[str, Any], text: str, total: int | None = None) -> None:
        shown = numbered_lines(text)
        if not shown:
            return
        offset, limit = _int(arguments.get("offset")), _int(arguments.get("limit"))
        first = shown[0][0]
        if total is not None:  # the read recorded the file's length: all of it shown or not
            full = first <= 1 and len(shown) >= total
        else:
            full = (first <= 1 and (offset is None or offset <= 1)
                    and len(shown) < (limit if limit is not None else _READ_LINES))
        if full:
            self.lines, self.whole, self.unknown = dict(shown), True, False
        else:
            self.lines.update(shown)
            self.whole = self.whole and max(n for n, _ in shown) <= len(self.lines)
        self.total = total if total is not None else self.total

    def write(self, content: str) -> None:
        self.lines = dict(enumerate(content.split("\n"), 1))
        self.whole, self.unknown, self.total = True, False, None

    def edit(self, changes: Sequence[tuple[str, str, bool]], result: str) -> None:
        for old, new, every in changes:
            if not old:
                if not self.lines:  # an empty old_string creates the file with new_string
                    self.write(new)
                continue
            if not self._apply(old, new, every):
                self.unknown = True
                self.whole = False
                self.lines.update(numbered_lines(result))  # the snippet its result displays

    def _apply(self, old: str, new: str, every: bool) -> bool:
        """Replace ``old`` in the known runs of consecutive lines (the first match, or every
        one), shifting the line numbers after each change; False when no run holds it."""
        runs: list[tuple[int, list[str]]] = []
        for n in sorted(self.lines):
            if runs and n == runs[-1][0] + len(runs[-1][1]):
                runs[-1][1].append(self.lines[n])
            else:
                runs.append((n, [self.lines[n]]))
        out: dict[int, str] = {}
        shift, done = 0, False
        for start, texts in runs:
            joined = "\n".join(texts)
            if old in joined and (every or not done):
                joined = joined.replace(old, new) if every else joined.replace(old, new, 1)
                done = True
            now = joined.split("\n")
            out.update((start + shift + i, line) for i, line in enumerate(now))
            shift += len(now) - len(texts)
        if done:
            self.lines = out
            if self.total is not None:
                self.total = max(self.total + shift, 0)
        return done

    def raw(self) -> str:
        return "\n".join(self.lines[n] for n in sorted(self.lines))

    def scale(self) -> float:
        """The whole file's size over what the replay knows of it: 1 when it knows the whole
        file, else the file's recorded line count (or, not recorded, the highest line number
        known) over the lines known (a read with an offset or a limit shows part of a longer
        file, which Claude Code reads again whole)."""
        if self.whole or not self.lines:
            return 1.0
        return max(1.0, (self.total or max(self.lines)) / len(self.lines))


def _restored_file(message: Message) -> tuple[str, str] | None:
    """``(path, result text)`` of a file this module attached at an earlier compaction (it is
    in Claude Code's file state at the next one: restoring it read it again)."""
    if message.role != "user" or not message.synthetic:
        return None
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    if len(texts) == 1 and texts[0].startswith(f'<{RESTORED_TAG} path="'):
        head, _, rest = texts[0].partition("\n")
        path = html.unescape(head[len(f'<{RESTORED_TAG} path="'):-2])
        return path, rest.rpartition(f"\n</{RESTORED_TAG}>")[0]
    if len(texts) != 2 or not texts[0].startswith(f"{_REMINDER_OPEN}\n{_CALLED}"):
        return None
    try:
        called = json.loads(_unwrap(texts[0])[len(_CALLED):])
        result = _unwrap(texts[1])
        body = (json.loads(result[len(_RESULT) + 1:]) if result.startswith(_RESULT + ' "')
                else result[len(_RESULT) + 1:])
    except ValueError:
        return None
    path = cast("dict[str, Any]", called).get("file_path") if isinstance(called, dict) else None
    return (path, body) if isinstance(path, str) and isinstance(body, str) else None


def _wrap(text: str) -> str:
    return f"{_REMINDER_OPEN}\n{text}\n</system-reminder>"


def _unwrap(text: str) -> str:
    return text[len(_REMINDER_OPEN) + 1:-len("</system-reminder>") - 1]


def _files(history: Sequence[Message], kinds: ToolKindMap) -> tuple[dict[str, _File], str]:
    """Every file the recorded calls read, edited or wrote (and the earlier restores), as the
    replay knows it at the end of ``history``; and the reminder the latest read ended with."""
    calls: dict[str, tuple[str, str, ToolCallBlock]] = {}
    files: dict[str, _File] = {}
    reminder = ""
    for position, message in enumerate(history):
        again = _restored_file(message)
        if again is not None and numbered_lines(again[1]):
            file = files.setdefault(again[0], _File())
            file.read({}, again[1])
            file.touched = position
            continue
        for call in message.tool_calls:
            kind = kinds.kind_of_call(call.name, call.arguments)
            if kind in ("read", "edit", "write") and (p := _path(call)):
                calls[call.id] = (p, kind, call)
        for result in message.tool_results:
            if result.call_id not in calls or result.is_error:
                continue
            path, kind, call = calls[result.call_id]
            file = files.setdefault(path, _File())
            file.touched = position
            if kind == "read":
                file.read(call.arguments, result.text, result.file_lines)
                reminder = _reminder(result.text) or ("" if numbered_lines(result.text)
                                                      else reminder)
            elif kind == "write" and isinstance(content := call.arguments.get("content"), str):
                file.write(content)
                file.modified = position
            elif kind == "edit":
                file.edit(_edits(call), result.text)
                file.modified = position
    return files, reminder


def _read_paths(messages: Sequence[Message], kinds: ToolKindMap) -> set[str]:
    """Paths a successful read in ``messages`` showed (their text is still in the request)."""
    calls = {c.id: p for m in messages for c in m.tool_calls
             if kinds.kind_of_call(c.name, c.arguments) == "read" and (p := _path(c))}
    return {calls[r.call_id] for m in messages for r in m.tool_results
            if r.call_id in calls and not r.is_error and r.text.strip()}


def _excluded(path: str) -> bool:
    """The session's memory files (CLAUDE.md, CLAUDE.local.md) and its plan file
    (``~/.claude/plans/``), which Claude Code never restores."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name in _MEMORY_FILES or "/.claude/plans/" in path.replace("\\", "/")


def _numbered(file: _File, form: str) -> str:
    if form == "read_text":
        return "\n".join(f"{n}\t{file.lines[n]}" for n in sorted(file.lines))
    return "\n".join(f"{n:>6}→{file.lines[n]}" for n in sorted(file.lines))


def _message(path: str, file: _File | None, form: str, reminder: str, limit: int,
             tokens: int) -> Message:
    """The message attaching ``path`` (its text, or a reference when ``file`` is None)."""
    if form == "tagged":
        text = (_numbered(file, form) if file is not None else
                f"[{path} was read before the conversation was summarised; at {tokens:,} tokens "
                f"it is over the {limit:,}-token limit for a restored file, so only this "
                "reference comes back: read it again if needed]")
        body = f'<{RESTORED_TAG} path="{html.escape(path)}">\n{text}\n</{RESTORED_TAG}>'
        return Message(role="user", content=(TextBlock(text=body),), synthetic=True)
    if file is None:
        note = (f"Note: {path} was read before the last conversation was summarized, but the "
                "contents are too large to include. Use Read tool if you need to access it.")
        return Message(role="user", content=(TextBlock(text=_wrap(note)),), synthetic=True)
    called = _CALLED + json.dumps({"file_path": path}, ensure_ascii=False, separators=(",", ":"))
    content = _numbered(file, form) + reminder
    result = (f"{_RESULT} {json.dumps(content, ensure_ascii=False)}" if form == "read_json"
              else f"{_RESULT}\n{content}")
    return Message(role="user", content=(TextBlock(text=_wrap(called)), TextBlock(text=_wrap(result))),
                   synthetic=True)


@dataclass(frozen=True)
class Restored:
    """The messages re-attaching files after a compaction, and what the replay says of them."""

    messages: tuple[Message, ...]
    note: str


def _describe(path: str, file: _File, referenced: bool) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if referenced:
        state = "a reference (over the per-file limit)"
    elif file.whole:
        state = "whole"
    elif file.total is not None:
        state = f"the {len(file.lines):,} lines the calls displayed (of {file.total:,})"
    else:
        state = (f"the {len(file.lines):,} lines the calls displayed (of at least "
                 f"{max(file.lines):,})")
    return name + ": " + state + ("; an edit of text the calls never displayed is not applied"
                                  if file.unknown else "")


def restore_files(history: Sequence[Message], tail: Sequence[Message], rule: RestoreReads, *,
                  kinds: ToolKindMap, estimator: TokenEstimator, ratio: float = 1.0) -> Restored:
    """The files of ``history`` Claude Code re-attaches after its summary (see the module
    docstring), skipping files whose read is still in ``tail``. ``ratio``: the provider's
    tokens per local token; the per-file limit is in the provider's tokens (Claude Code counts
    the file's text with the provider's token counting)."""
    files, reminder = _files(history, kinds)
    in_tail = _read_paths(tail, kinds)

    def recency(path: str) -> tuple[int, ...]:
        file = files[path]
        if rule.order == "modified":
            return (file.modified >= 0, file.modified if file.modified >= 0 else file.touched)
        return (file.touched,)

    chosen = sorted((p for p in files if p not in in_tail and not _excluded(p)),
                    key=recency, reverse=True)[:rule.files]
    out: list[Message] = []
    said: list[str] = []
    spent = 0
    for path in chosen:
        file = files[path]
        if not file.lines:
            said.append(f"{path.rsplit('/', 1)[-1]}: content unknown (not restored)")
            continue
        raw = file.raw()
        scale = file.scale()
        tokens = round(estimator.count(raw) * scale * ratio)
        referenced = tokens > rule.tokens_per_file
        chars = (len(path) * 2 + _ATTACHMENT_FIELDS if referenced
                 else len(json.dumps(raw, ensure_ascii=False)) * scale + len(path) * 2
                 + _ATTACHMENT_FIELDS)
        budget = math.ceil(chars / 4)
        if spent + budget > rule.total_tokens:
            said.append(f"{path.rsplit('/', 1)[-1]}: left out (over the {rule.total_tokens:,}-token "
                        "budget)")
            continue
        spent += budget
        out.append(_message(path, None if referenced else file, rule.form, reminder,
                            rule.tokens_per_file, tokens))
        said.append(_describe(path, file, referenced))
    note = f"restored files: {'; '.join(said)}" if said else ""
    return Restored(messages=tuple(out), note=note)


def restored_reads(history: Sequence[Message], tail: Sequence[Message], rule: RestoreReads, *,
                   kinds: ToolKindMap, estimator: TokenEstimator) -> tuple[Message, ...]:
    """The messages of :func:`restore_files`."""
    return restore_files(history, tail, rule, kinds=kinds, estimator=estimator).messages
