"""The floor of a replay: the least work any replay of a transcript must do, as a program.

A replay cannot do less than: start Python, load the vocabulary (the packaged cl100k table,
``iris/data``, through the same decoded-table cache the engine uses), parse every line of the
transcript, and encode each message's text once. This script does exactly that and nothing else
(no records, no validation, no store, no pipeline), so ``make bench`` can report the replay's
cost as a multiple of it, measured in the same run:

* the **floor process**: ``python bench/floor.py FILE`` (start-up and vocabulary included);
* the **in-process floor**: :func:`floor_counts` with the vocabulary already loaded.

The texts are what the engine's estimator counts per block (``iris.session.block_text``): a text,
thinking or tool-result text, and a tool call as its name and its arguments' sorted JSON. Lines
of the three formats are read: native (``type: message``), Claude Code (``user``/``assistant``
lines' ``message.content``) and Codex rollouts (``response_item`` payloads). A gzipped file
(``.gz``) is read as the engine reads it. Every other line is parsed and skipped.

    python bench/floor.py TRANSCRIPT [--json]     # prints lines, texts and tokens
"""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

__all__ = ["FloorError", "floor_counts", "line_texts", "main", "transcript_lines"]


class Encoding(Protocol):
    """What the floor needs of a tiktoken encoding."""

    def encode_ordinary(self, text: str) -> list[int]: ...


class FloorError(Exception):
    """A transcript the floor cannot read (missing, unreadable); the message names the file."""


def transcript_lines(path: Path) -> Iterator[bytes]:
    """The raw lines of a transcript (decompressed when it ends in ``.gz``)."""
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as fh:
            yield from fh
    except FileNotFoundError:
        raise FloorError(f"{str(path)!r}: no such transcript file") from None
    except OSError as exc:
        raise FloorError(f"{str(path)!r}: cannot read the transcript ({exc.strerror or exc})") from None


def _call_text(name: Any, arguments: Any) -> str:
    return f"{name} {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}"


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content
                         if isinstance(part, dict) and part.get("type") == "text")
    return ""


def _block_text(block: Any) -> str:
    """The text of one content block of a native or Claude Code message ("" for an image)."""
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind in ("text", "thinking"):
        return block.get("text") or block.get("thinking") or ""
    if kind == "tool_result":
        return _result_text(block.get("text", block.get("content")))
    if kind == "tool_call":
        return _call_text(block.get("name"), block.get("arguments"))
    if kind == "tool_use":
        return _call_text(block.get("name"), block.get("input"))
    return ""


def _codex_texts(payload: dict[str, Any]) -> list[str]:
    kind = payload.get("type")
    if kind == "message":
        return [c.get("text", "") for c in payload.get("content") or () if isinstance(c, dict)]
    if kind == "reasoning":
        return [s.get("text", "") for s in payload.get("summary") or () if isinstance(s, dict)]
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = payload.get("output")
        return [output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)]
    if kind == "function_call":
        return [f"{payload.get('name')} {payload.get('arguments') or ''}"]
    if kind == "custom_tool_call":
        return [f"{payload.get('name')} {payload.get('input') or ''}"]
    return []


def line_texts(obj: Any) -> list[str]:
    """The message texts one parsed transcript line holds (none for the lines outside the
    model's context: headers, progress, usage events)."""
    if not isinstance(obj, dict):
        return []
    kind = obj.get("type")
    if kind == "message":  # native
        return [_block_text(b) for b in obj.get("content") or ()]
    if kind in ("user", "assistant"):  # Claude Code
        content = (obj.get("message") or {}).get("content")
        if isinstance(content, str):
            return [content]
        return [_block_text(b) for b in content or ()]
    if kind == "response_item" and isinstance(obj.get("payload"), dict):  # Codex rollout
        return _codex_texts(obj["payload"])
    return []


def floor_counts(path: Path, encoding: Encoding, lines: Iterable[bytes] | None = None) -> dict[str, int]:
    """Parse every line of ``path`` and encode each message's text once: the in-process floor.
    Returns the lines parsed, the non-empty texts encoded and their tokens."""
    n_lines = n_texts = tokens = 0
    for raw in transcript_lines(path) if lines is None else lines:
        if not raw.strip():
            continue
        n_lines += 1
        try:
            obj = json.loads(raw)
        except ValueError:
            continue  # a damaged line is parsed (that is the work) and skipped
        for text in line_texts(obj):
            if text:
                n_texts += 1
                tokens += len(encoding.encode_ordinary(text))
    return {"lines": n_lines, "texts": n_texts, "tokens": tokens}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0].startswith("-"):
        print("usage: python bench/floor.py TRANSCRIPT [--json]", file=sys.stderr)
        return 2
    path = Path(args[0])
    if not path.is_file():
        print(f"floor: {str(path)!r}: no such transcript file", file=sys.stderr)
        return 2
    from iris.vocabulary import cl100k_encoding

    try:
        counts = floor_counts(path, cl100k_encoding())
    except FloorError as exc:
        print(f"floor: {exc}", file=sys.stderr)
        return 2
    if "--json" in args[1:]:
        print(json.dumps(counts))
    else:
        print(f"{counts['lines']} lines, {counts['texts']} texts, {counts['tokens']} tokens")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
