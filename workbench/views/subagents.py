"""What a session shows of its sub-agents and of the agent's recorded compaction requests
(R-TWIN-2), as plain data from the figures of ``workbench.analysis.session_counts``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .markup import plain

__all__ = ["SUBAGENT_COLUMNS", "compaction_request_lines", "request_session_notice", "subagent_frame"]

SUBAGENT_COLUMNS = ["Tool call", "Message", "Sub-agent session", "Model calls", "Tool calls",
                    "Prompt tokens", "Output tokens", "Recorded by the parent"]


def _recorded(row: Mapping[str, Any]) -> str:
    parts = []
    if row.get("recorded_tool_calls") is not None:
        parts.append(f"{row['recorded_tool_calls']:,} tool uses")
    if row.get("recorded_tokens") is not None:
        parts.append(f"{row['recorded_tokens']:,} tokens in its last call")
    return ", ".join(parts) or "—"


def subagent_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per tool call that ran a sub-agent: the call, the sub-agent's own session, its model
    calls, tool calls and tokens (empty while its transcript is not imported) and what the parent
    recorded of it."""
    data = [[r["call_id"], r["message"], r["session_id"] + ("" if r["imported"] else " (not imported)"),
             r["model_calls"], r["tool_calls"], r["prompt_tokens"], r["output_tokens"], _recorded(r)]
            for r in rows]
    frame = pd.DataFrame(data, columns=SUBAGENT_COLUMNS)
    for column in ("Message", "Model calls", "Tool calls", "Prompt tokens", "Output tokens"):
        frame[column] = frame[column].astype("Int64")
    return frame


def compaction_request_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One sentence per recorded compaction whose summary call the transcript records."""
    return [f"The compaction at message #{r['at_message']} was written by the agent's own summary call "
            f"({r['request_session_id']}): its {r['prompt_tokens']:,} prompt tokens "
            f"({r['cache_read_tokens']:,} of them cache reads) are the compaction's real input; "
            f"{r['output_tokens']:,} output tokens recorded." for r in rows]


def request_session_notice(agent_id: str | None, parent_id: str | None, *, usage_page: bool = False) -> str | None:
    """What a recorded compaction request's own session is (None for any other session): its
    prompt is the parent's conversation, so its size is the compaction's input, never overhead.
    ``usage_page`` adds what that means for the page's overhead figure."""
    if not agent_id or not agent_id.startswith("acompact-") or not parent_id:
        return None
    text = (f"This is the agent's recorded compaction request of session {plain(parent_id)}: its prompt is "
            "that session's whole conversation, so its prompt tokens are the compaction's real input "
            "(not unrecorded overhead), and its answer is the recorded summary.")
    if usage_page:
        text += (" The transcript of this request holds only the request's last messages: the "
                 "figure 'Compaction input (parent's conversation)' below is the part of the "
                 "prompt it does not hold.")
    return text
