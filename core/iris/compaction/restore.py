"""Files re-attached after a compaction (``compaction.restore_recent_reads``).

Claude Code does not send the summary alone after it compacts: it re-reads the files the
conversation touched most recently (its file state is updated by a read, an edit and a write
alike; up to 5 files, 50,000 tokens in all; files whose read is still in the kept messages are
skipped) and attaches them after the summary; a file over 5,000 tokens comes back as a short
reference, not its text (Claude Code's ``compact_file_reference``). The transcript does not record
these attachments, so a replay rebuilds them from what the recorded calls showed: per file, every
numbered line any read of it displayed (a later read of a line wins), the whole text a write gave,
an edit's replacement applied to the text known before it (else the lines its result displays).
Lines outside what the calls showed are not re-read: the replay has no disk to read them from.
See docs/profiles.md.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..reduction.facts import numbered_lines
from ..reduction.toolkinds import ToolKindMap
from ..session import Message, TextBlock, ToolCallBlock
from ..tokens import TokenEstimator
from .config import RestoreReads

__all__ = ["RESTORED_TAG", "restored_reads"]

RESTORED_TAG = "restored-file"
_PATH_KEYS = ("file_path", "path", "filePath", "filename", "file", "notebook_path", "target_file")


def _path(call: ToolCallBlock) -> str | None:
    return next((str(call.arguments[k]) for k in _PATH_KEYS
                 if isinstance(call.arguments.get(k), str)), None)


def _reads(history: Sequence[Message], kinds: ToolKindMap) -> list[tuple[str, str]]:
    """``(path, result text)`` of every successful read in ``history``, oldest first."""
    return [(p, text) for p, kind, text, _ in _touches(history, kinds) if kind == "read"]


def _touches(history: Sequence[Message], kinds: ToolKindMap
             ) -> list[tuple[str, str, str, ToolCallBlock]]:
    """``(path, kind, result text, call)`` of every successful read, edit or write in
    ``history``, oldest first: each makes its file recent (Claude Code's file state is updated
    by Read, Edit and Write alike)."""
    calls: dict[str, tuple[str, str, ToolCallBlock]] = {}
    out: list[tuple[str, str, str, ToolCallBlock]] = []
    for message in history:
        for call in message.tool_calls:
            kind = kinds.kind_of_call(call.name, call.arguments)
            if kind in ("read", "edit", "write") and (p := _path(call)):
                calls[call.id] = (p, kind, call)
        for result in message.tool_results:
            if result.call_id in calls and not result.is_error:
                path, kind, call = calls[result.call_id]
                if kind != "read" or result.text.strip():
                    out.append((path, kind, result.text, call))
    return out


def _numbered(text: str) -> str:
    return "\n".join(f"{n:>6}→{line}" for n, line in enumerate(text.split("\n"), 1))


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
            if isinstance(old, str) and isinstance(new, str) and old:
                out.append((old, new, bool(fields.get("replace_all"))))
    return out


class _File:
    """What the replay knows of one file: the lines the reads (and edit snippets) displayed, or
    the whole text a write gave or an edit changed."""

    def __init__(self) -> None:
        self.lines: dict[int, str] = {}
        self.whole: str | None = None
        self.latest = ""

    def read(self, text: str) -> None:
        shown = numbered_lines(text)
        if self.whole is not None and shown:
            self.lines = dict(enumerate(self.whole.split("\n"), 1))
            self.whole = None
        self.lines.update(shown)
        self.latest = text

    def write(self, content: str) -> None:
        self.whole, self.lines = content, {}

    def edit(self, call: ToolCallBlock, result: str) -> None:
        text = self.whole if self.whole is not None else (
            "\n".join(self.lines[n] for n in sorted(self.lines)) if self.lines else None)
        changes = _edits(call)
        if text is not None and changes and all(old in text for old, _, _ in changes):
            for old, new, every in changes:
                text = text.replace(old, new) if every else text.replace(old, new, 1)
            self.write(text)
        else:  # the snippet the edit's result displays, where the replay knows no more
            self.read(result)

    def scale(self) -> float:
        """How much larger the file is than what the calls showed: the highest line number
        displayed over the lines displayed (a read with an offset or a limit shows part of a
        longer file, which Claude Code re-reads whole); 1 for a written or edited text."""
        if self.whole is not None or not self.lines:
            return 1.0
        return max(self.lines) / len(self.lines)

    def text(self) -> str:
        if self.whole is not None:
            return _numbered(self.whole)
        if not self.lines:
            return self.latest
        return "\n".join(f"{n:>6}→{self.lines[n]}" for n in sorted(self.lines))


def _within(text: str, path: str, limit: int, estimator: TokenEstimator, scale: float = 1.0
            ) -> tuple[str, int]:
    """``text`` when the file fits in ``limit`` tokens, else a note naming the file: Claude Code
    attaches a file over its per-file limit as a reference (``compact_file_reference``), not
    cut; the token count of what is attached. ``scale``: the whole file's size over the text's
    (the file's lines the reads did not show count towards the limit)."""
    tokens = estimator.count(text)
    if round(tokens * scale) <= limit:
        return text, tokens
    tokens = round(tokens * scale)
    note = (f"[{path} was read before the conversation was summarised; at {tokens:,} tokens it "
            f"is over the {limit:,}-token limit for a restored file, so only this reference "
            "comes back: read it again if needed]")
    return note, estimator.count(note)


def restored_reads(history: Sequence[Message], tail: Sequence[Message], rule: RestoreReads, *,
                   kinds: ToolKindMap, estimator: TokenEstimator) -> tuple[Message, ...]:
    """The messages re-attaching the most recently read, edited or written files of
    ``history`` (newest first), skipping files whose read is still in ``tail``."""
    in_tail = {p for p, _ in _reads(tail, kinds)}
    files: dict[str, _File] = {}
    for path, kind, text, call in _touches(history, kinds):
        file = files.pop(path, None) or _File()
        files[path] = file  # most recently touched last
        if kind == "read":
            file.read(text)
        elif kind == "write" and isinstance(content := call.arguments.get("content"), str):
            file.write(content)
        elif kind == "edit":
            file.edit(call, text)
    out: list[Message] = []
    spent = 0
    for path in reversed(files):
        if len(out) == rule.files:
            break
        if path in in_tail:
            continue
        text, tokens = _within(files[path].text(), path, rule.tokens_per_file, estimator,
                               files[path].scale())
        if not text.strip():
            continue
        if spent + tokens > rule.total_tokens:
            break
        spent += tokens
        body = f'<{RESTORED_TAG} path="{html.escape(path)}">\n{text}\n</{RESTORED_TAG}>'
        out.append(Message(role="user", content=(TextBlock(text=body),), synthetic=True))
    return tuple(out)
