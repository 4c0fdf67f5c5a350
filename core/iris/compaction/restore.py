"""Files re-attached after a compaction (``compaction.restore_recent_reads``).

Claude Code does not send the summary alone after it compacts: it re-reads the files the
conversation read most recently (up to 5 files, 50,000 tokens in all; files whose read is still
in the kept messages are skipped) and attaches them after the summary; a file over 5,000 tokens
comes back as a short reference, not its text (Claude Code's ``compact_file_reference``).
The transcript does not record these attachments, so a replay rebuilds them from what the recorded
reads showed: per file, every numbered line any read of it displayed (a later read of a line wins),
else the latest read's text. Lines an edit changed after the last read are not re-read: the replay
has no disk to read them from. See docs/profiles.md.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

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
    paths: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for message in history:
        for call in message.tool_calls:
            if kinds.kind_of_call(call.name, call.arguments) == "read" and (p := _path(call)):
                paths[call.id] = p
        for result in message.tool_results:
            if result.call_id in paths and not result.is_error and result.text.strip():
                out.append((paths[result.call_id], result.text))
    return out


def _file_text(texts: Sequence[str]) -> str:
    """The file as the reads showed it: their numbered lines merged, else the latest text."""
    lines: dict[int, str] = {}
    for text in texts:
        lines.update(numbered_lines(text))
    if not lines:
        return texts[-1]
    return "\n".join(f"{n:>6}→{lines[n]}" for n in sorted(lines))


def _within(text: str, path: str, limit: int, estimator: TokenEstimator) -> tuple[str, int]:
    """``text`` when it fits in ``limit`` tokens, else a note naming the file: Claude Code
    attaches a file over its per-file limit as a reference (``compact_file_reference``), not
    cut; the token count of what is attached."""
    tokens = estimator.count(text)
    if tokens <= limit:
        return text, tokens
    note = (f"[{path} was read before the conversation was summarised; at {tokens:,} tokens it "
            f"is over the {limit:,}-token limit for a restored file, so only this reference "
            "comes back: read it again if needed]")
    return note, estimator.count(note)


def restored_reads(history: Sequence[Message], tail: Sequence[Message], rule: RestoreReads, *,
                   kinds: ToolKindMap, estimator: TokenEstimator) -> tuple[Message, ...]:
    """The messages re-attaching the most recently read files of ``history`` (newest first),
    skipping files whose read is still in ``tail``."""
    in_tail = {p for p, _ in _reads(tail, kinds)}
    by_path: dict[str, list[str]] = {}
    for path, text in _reads(history, kinds):
        by_path.setdefault(path, []).append(text)
        by_path[path] = by_path.pop(path)  # most recently read last
    out: list[Message] = []
    spent = 0
    for path in reversed(by_path):
        if len(out) == rule.files:
            break
        if path in in_tail:
            continue
        text, tokens = _within(_file_text(by_path[path]), path, rule.tokens_per_file, estimator)
        if spent + tokens > rule.total_tokens:
            break
        spent += tokens
        body = f'<{RESTORED_TAG} path="{html.escape(path)}">\n{text}\n</{RESTORED_TAG}>'
        out.append(Message(role="user", content=(TextBlock(text=body),), synthetic=True))
    return tuple(out)
