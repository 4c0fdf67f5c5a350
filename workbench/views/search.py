"""Search and filters over one session (the Messages page and the notebook's ``search``): text,
tool names, file paths and errors, filtered by role, tool, error and what a replay did with each
message at a step (sent whole, reduced, left out by a compaction or a drop), with counts, and a link
to the step that first sent the message.

One row per content block (a message's text, thinking, each tool call and each tool result), so a
hit names the block it is in. Pure functions of the session and, for the state, of one prepared
request; the page only reads widgets and shows the frame.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import pandas as pd
from iris.frozen import FrozenModel
from iris.preparation.records import PreparedRequest
from iris.session import Session, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock

__all__ = ["SEARCH_COLUMNS", "STATES", "SearchQuery", "block_frame", "counts_caption", "message_states", "search",
           "search_counts", "snippet"]

SEARCH_COLUMNS = ["message", "step", "role", "kind", "tool", "paths", "error", "state", "match",
                  "link"]
#: What a replay did with a message at a step, in the words the filter offers.
STATES = ("sent whole", "reduced", "left out", "not sent yet")
SNIPPET_CHARS = 160
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file", "cwd", "workdir")


class SearchQuery(FrozenModel):
    """What to find: every field empty finds every block."""

    text: str = ""
    """Case-insensitive; matched in the block's text, its tool's name, arguments and paths."""
    roles: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    errors_only: bool = False
    states: tuple[str, ...] = ()


def _paths(arguments: Mapping[str, Any]) -> list[str]:
    return [str(v) for k, v in arguments.items() if k in _PATH_KEYS and isinstance(v, str) and v]


def _step_of(responses: Sequence[int], index: int) -> int | None:
    """The step that first sends message ``index`` (the step of the first response at or after
    it; a response's own step); None after the last response."""
    k = bisect.bisect_left(responses, index)
    return k if k < len(responses) else None


def block_frame(session: Session) -> pd.DataFrame:
    """Every content block of the session: message, step, role, kind, tool, paths, error, and
    the full text searched (``haystack``)."""
    responses = [b.assistant_message for b in session.index.batches]
    names = {c.id: c.name for m in session.messages for c in m.content if isinstance(c, ToolCallBlock)}
    args = {c.id: c.arguments for m in session.messages for c in m.content
            if isinstance(c, ToolCallBlock)}
    rows = []
    for i, message in enumerate(session.messages):
        step = _step_of(responses, i)
        for block in message.content:
            if isinstance(block, (TextBlock, ThinkingBlock)):
                kind, tool, paths, error, text = block.type, "", [], False, block.text
            elif isinstance(block, ToolCallBlock):
                kind, tool, paths, error = "tool_call", block.name, _paths(block.arguments), False
                text = json.dumps(block.arguments, ensure_ascii=False, sort_keys=True)
            elif isinstance(block, ToolResultBlock):
                kind, tool, error, text = "tool_result", names.get(block.call_id, ""), block.is_error, block.text
                paths = _paths(args.get(block.call_id, {}))
            else:
                continue
            rows.append({"message": i, "step": step, "role": message.role, "kind": kind, "tool": tool,
                         "paths": ", ".join(paths), "error": error,
                         "haystack": "\n".join((tool, *paths, text))})
    frame = pd.DataFrame(rows, columns=["message", "step", "role", "kind", "tool", "paths", "error",
                                        "haystack"])
    frame["step"] = frame["step"].astype("Int64")
    return frame


def message_states(request: PreparedRequest | None, step_response: int | None,
                   n_messages: int) -> dict[int, str]:
    """What the request of one step did with each session message: ``reduced`` (sent with a mark:
    trimmed, folded, summarised, externalised), ``sent whole``, ``left out`` (recorded before the
    step but not sent: compacted into a checkpoint or dropped), ``not sent yet`` (the step's
    response or later). Without a request, every message is ``not sent yet``."""
    if request is None or step_response is None:
        return dict.fromkeys(range(n_messages), "not sent yet")
    sent: dict[int, str] = {}
    for mark in request.marks:
        if mark.history_index is not None:
            reduced = bool(mark.marks) or sent.get(mark.history_index) == "reduced"
            sent[mark.history_index] = "reduced" if reduced else "sent whole"
    return {i: sent.get(i, "left out" if i < step_response else "not sent yet")
            for i in range(n_messages)}


def snippet(text: str, needle: str, width: int = SNIPPET_CHARS) -> str:
    """One line of ``text`` around the first match of ``needle`` (its start without a needle)."""
    flat = " ".join(text.split())
    at = flat.lower().find(needle.lower()) if needle else 0
    start = max(at - width // 3, 0) if at >= 0 else 0
    piece = flat[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


def search(blocks: pd.DataFrame, query: SearchQuery, *, states: Mapping[int, str] | None = None,
           session_id: str = "", replay_id: str | None = None) -> pd.DataFrame:
    """The blocks ``query`` finds, in session order, with a snippet of the match and a link: to the
    step that first sent the message on Step-through when a replay is given, else to the message on
    the Messages page."""
    keep = pd.Series(True, index=blocks.index)
    if query.text:
        keep &= blocks["haystack"].str.contains(query.text, case=False, regex=False)
    if query.roles:
        keep &= blocks["role"].isin(list(query.roles))
    if query.tools:
        keep &= blocks["tool"].isin(list(query.tools))
    if query.errors_only:
        keep &= blocks["error"].astype(bool)
    state_of = [(states or {}).get(int(m), "—") for m in blocks["message"]]
    if query.states:
        keep &= pd.Series([s in query.states for s in state_of], index=blocks.index)
    found = pd.DataFrame(blocks.loc[keep]).assign(state=pd.Series(state_of, index=blocks.index)[keep])
    found["match"] = [snippet(t, query.text) for t in found["haystack"]]
    found["link"] = [_link(session_id, replay_id, int(m), s) for m, s in zip(found["message"],
                                                                             found["step"], strict=True)]
    return pd.DataFrame(found[SEARCH_COLUMNS]).reset_index(drop=True)


def _link(session_id: str, replay_id: str | None, message: int, step: Any) -> str:
    if replay_id is not None and not pd.isna(step):
        return "step-through?" + urlencode({"session": session_id, "replay": replay_id,
                                            "step": int(step)})
    return "messages?" + urlencode({"session": session_id, "message": message})


def search_counts(found: pd.DataFrame) -> dict[str, dict[str, int]]:
    """How many found blocks per role, kind, tool (blocks of a tool), state, and errors."""
    counts = {column: {str(k): int(v) for k, v in found[column].value_counts().items()
                       if k and k != "—"}  # no tool; no replay step to state
              for column in ("role", "kind", "tool", "state")}
    counts["error"] = {"errors": sum(bool(e) for e in found["error"])}
    return counts


def counts_caption(found: pd.DataFrame) -> str:
    """E.g. "12 blocks in 9 messages · assistant 9, user 3 · Bash 4, Read 2 · 2 errors · reduced 5"."""
    if found.empty:
        return "Nothing found."
    counts = search_counts(found)
    blocks, messages = len(found), len(set(found["message"]))
    parts = [(f"{blocks:,} block{'s' if blocks != 1 else ''} in {messages:,} "
              f"message{'s' if messages != 1 else ''}")]
    for column in ("role", "tool", "state"):
        if counts[column]:
            parts.append(", ".join(f"{k} {v:,}" for k, v in counts[column].items()))
    if counts["error"]["errors"]:
        errors = counts["error"]["errors"]
        parts.append(f"{errors:,} error{'s' if errors != 1 else ''}")
    return " · ".join(parts)
