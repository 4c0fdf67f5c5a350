"""Read-back and search over a session's committed material: ``context_read`` / ``context_search``
(R-POL-3…6).

The tools never re-run the source tool and hold no lifecycle store: a :class:`ContextAccessPort` is
built from a lookup of session id → committed messages plus the directory that holds artifacts,
and answers with :class:`ContextReadPage` / :class:`ContextSearchPage`. Every bad reference or
out-of-range parameter is a :class:`~iris.errors.ContextAccessError` naming the parameter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import model_validator

from ..errors import ContextAccessError
from ..frozen import FrozenModel
from ..reduction.artifacts import LOGICAL_ROOT
from ..session import Message, ToolCallBlock, ToolResultBlock, block_text
from .positional import PositionalModel

__all__ = [
    "READ_LIMIT_MAX", "SEARCH_LIMIT_MAX", "SEARCH_SCAN_WINDOW", "ContextAccessPort", "ContextReadPage",
    "ContextReadParams", "ContextSearchMatch", "ContextSearchPage", "ContextSearchParams", "parse_ref",
]

READ_LIMIT_MAX = 8000
SEARCH_LIMIT_MAX = 20
SEARCH_SCAN_WINDOW = 200
"""``context_search`` scans at most this many messages per call."""
SNIPPET_CHARS = 160
_REF = re.compile(r"^(?:message:(\d+)|result:(\d+):(\d+))$")


_Frozen = FrozenModel


def _parameters(data: object, tool: str) -> dict[str, Any]:
    """A copy of the tool call's JSON object of parameters (checked field by field after)."""
    if not isinstance(data, dict):
        raise ContextAccessError(f"{tool} parameters must be an object")
    return dict(cast("dict[str, Any]", data))


def _whole(data: dict[str, Any], name: str, default: int, low: int, high: int | None) -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ContextAccessError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ContextAccessError(f"{name} must be {bound}, got {value}")
    return value


class ContextReadParams(_Frozen):
    """``context_read(ref, offset=0, limit=4000, representation="text")``."""

    ref: str
    offset: int = 0
    """Python str index (characters, not bytes or tokens), non-negative."""
    limit: int = 4000
    """Characters per page, 1–8000."""
    representation: Literal["text", "raw"] = "text"

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: object) -> dict[str, Any]:
        data = _parameters(data, "context_read")
        parse_ref(data.get("ref"))
        data["offset"] = _whole(data, "offset", 0, 0, None)
        data["limit"] = _whole(data, "limit", 4000, 1, READ_LIMIT_MAX)
        rep = data.get("representation", "text")
        if rep not in ("text", "raw"):
            raise ContextAccessError(f"representation must be 'text' or 'raw', got {rep!r}")
        return data


class ContextSearchParams(_Frozen):
    """``context_search(query, after=0, limit=10)``."""

    query: str
    after: int = 0
    """Message index where scanning starts, non-negative."""
    limit: int = 10
    """Matches per page, 1–20."""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: object) -> dict[str, Any]:
        data = _parameters(data, "context_search")
        query = data.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ContextAccessError(f"query must be a non-blank string, got {query!r}")
        data["after"] = _whole(data, "after", 0, 0, None)
        data["limit"] = _whole(data, "limit", 10, 1, SEARCH_LIMIT_MAX)
        return data


class ContextReadPage(PositionalModel):
    ref: str
    representation: Literal["text", "raw"]
    offset: int
    next_offset: int
    """Offset of the next page (``offset + len(content)``)."""
    has_more: bool
    content: str


class ContextSearchMatch(PositionalModel):
    ref: str
    """``result:N:B`` for a tool result, else ``message:N``."""
    role: str
    tool_name: str | None = None
    snippet: str


class ContextSearchPage(PositionalModel):
    matches: tuple[ContextSearchMatch, ...]
    next_after: int
    """Continue scanning from this message index."""
    has_more: bool
    """More messages remain to scan (may be true with no matches)."""


def parse_ref(ref: object) -> tuple[int, int | None]:
    """``message:N`` → (N, None); ``result:N:B`` → (N, B); anything else is an error."""
    m = _REF.match(ref) if isinstance(ref, str) else None
    if not m:
        raise ContextAccessError(f"ref must be 'message:N' or 'result:N:B', got {ref!r}")
    if m.group(1) is not None:
        return int(m.group(1)), None
    return int(m.group(2)), int(m.group(3))


Lookup = Callable[[str], Sequence[Message] | None] | Mapping[str, Sequence[Message]]


class ContextAccessPort:
    """The runner's port behind ``context_read``/``context_search`` over committed messages."""

    def __init__(self, lookup: Lookup, artifact_root: Path | str | None = None) -> None:
        self._lookup: Callable[[str], Sequence[Message] | None] = (
            cast("Mapping[str, Sequence[Message]]", lookup).get if isinstance(lookup, Mapping)
            else lookup)
        self.artifact_root = Path(artifact_root).resolve() if artifact_root else None

    def _messages(self, session_id: str) -> Sequence[Message]:
        found = self._lookup(session_id)
        if found is None:
            raise ContextAccessError(f"unknown session {session_id!r}")
        return found

    def read(self, session_id: str, params: ContextReadParams,
             workspace_root: Path | str | None = None) -> ContextReadPage:
        messages = self._messages(session_id)
        n, b = parse_ref(params.ref)
        if n >= len(messages):
            raise ContextAccessError(f"ref {params.ref!r}: message {n} does not exist "
                                     f"(the session has {len(messages)} messages)")
        msg = messages[n]
        if b is None:
            if params.representation == "raw":
                raise ContextAccessError(f"ref {params.ref!r}: raw is only available for result refs "
                                         "with an artifact")
            full = "\n".join(block_text(x) for x in msg.content)
        else:
            block = msg.content[b] if b < len(msg.content) else None
            if not isinstance(block, ToolResultBlock):
                raise ContextAccessError(f"ref {params.ref!r}: block {b} of message {n} is not a tool result")
            full = self._raw(params.ref, block, workspace_root) if params.representation == "raw" else block.text
        if params.offset > len(full):
            raise ContextAccessError(f"offset {params.offset} is beyond the end ({len(full)} characters)")
        content = full[params.offset:params.offset + params.limit]
        nxt = params.offset + len(content)
        return ContextReadPage(ref=params.ref, representation=params.representation, offset=params.offset,
                               next_offset=nxt, has_more=nxt < len(full), content=content)

    def _raw(self, ref: str, block: ToolResultBlock, workspace_root: Path | str | None) -> str:
        if not block.artifact_path:
            raise ContextAccessError(f"ref {ref!r}: raw is only available for results with an artifact")
        roots = [r for r in (self.artifact_root, Path(workspace_root).resolve() if workspace_root else None) if r]
        if not roots:  # the recorded path is untrusted input: without a root nothing is "inside"
            raise ContextAccessError(f"ref {ref!r}: no artifact root or workspace to read raw artifacts from")
        path = Path(block.artifact_path)
        if block.artifact_path.startswith(f"{LOGICAL_ROOT}/"):  # the session directory's files
            path = roots[0] / block.artifact_path[len(LOGICAL_ROOT) + 1:]
        elif not path.is_absolute():
            path = roots[0] / path
        path = path.resolve()
        if not any(path.is_relative_to(r) for r in roots):
            raise ContextAccessError(f"ref {ref!r}: artifact {str(path)!r} is outside the session's directories")
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ContextAccessError(f"ref {ref!r}: cannot read artifact {str(path)!r}: {exc}") from None

    def search(self, session_id: str, params: ContextSearchParams) -> ContextSearchPage:
        messages = self._messages(session_id)
        needle = params.query.casefold()
        names = {b.id: b.name for m in messages for b in m.content if isinstance(b, ToolCallBlock)}
        matches: list[ContextSearchMatch] = []
        end = min(len(messages), params.after + SEARCH_SCAN_WINDOW)
        i = params.after
        while i < end and len(matches) < params.limit:
            found = _match_message(i, messages[i], needle, names)
            if found:
                matches.append(found)
            i += 1
        return ContextSearchPage(matches=tuple(matches), next_after=i, has_more=i < len(messages))


def _match_message(i: int, msg: Message, needle: str, names: Mapping[str, str]) -> ContextSearchMatch | None:
    """The first block of a message whose text contains the casefolded query (one match per message)."""
    for bi, block in enumerate(msg.content):
        text = block_text(block)  # results: the committed preview; externalised full text is not opened
        folded = text.casefold()
        at = folded.find(needle)
        if at < 0:
            continue
        start = max(0, at - SNIPPET_CHARS // 2)
        snippet = text[start:start + SNIPPET_CHARS].replace("\n", " ")
        if isinstance(block, ToolResultBlock):
            return ContextSearchMatch(ref=f"result:{i}:{bi}", role=msg.role,
                                      tool_name=names.get(block.call_id), snippet=snippet)
        tool = block.name if isinstance(block, ToolCallBlock) else None
        return ContextSearchMatch(ref=f"message:{i}", role=msg.role, tool_name=tool, snippet=snippet)
    return None
