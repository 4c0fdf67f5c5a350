"""What a session shows of its sub-agents and of the agent's recorded compaction requests
(R-TWIN-2), as plain data from the figures of ``workbench.analysis.session_counts``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import pandas as pd

from ..analysis.words import counted
from .markup import code_span, plain

__all__ = ["SUBAGENT_COLUMNS", "compaction_request_lines", "request_session_notice", "subagent_card",
           "subagent_frame"]

SUBAGENT_COLUMNS = ["Tool call", "Message", "Sub-agent session", "Model calls", "Tool calls",
                    "Prompt tokens", "Output tokens", "Billed (USD)", "Recorded by the parent",
                    "Open"]


def _recorded(row: Mapping[str, Any]) -> str:
    parts = []
    if row.get("recorded_tool_calls") is not None:
        parts.append(f"{row['recorded_tool_calls']:,} tool uses")
    if row.get("recorded_tokens") is not None:
        parts.append(f"{row['recorded_tokens']:,} tokens in its last call")
    return ", ".join(parts) or "—"


def _session_link(stored_id: str | None) -> str | None:
    """The Messages page of a stored sub-agent session (None while it is not imported)."""
    return None if stored_id is None else f"messages?{urlencode({'session': stored_id})}"


def subagent_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per tool call that ran a sub-agent: the call, the sub-agent's own session, its model
    calls, tool calls and tokens (empty while its transcript is not imported) and what the parent
    recorded of it."""
    data = [[r["call_id"], r["message"], r["session_id"] + ("" if r["imported"] else " (not imported)"),
             r["model_calls"], r["tool_calls"], r["prompt_tokens"], r["output_tokens"],
             r.get("billed_usd"), _recorded(r), _session_link(r.get("stored_id"))]
            for r in rows]
    frame = pd.DataFrame(data, columns=SUBAGENT_COLUMNS)
    for column in ("Message", "Model calls", "Tool calls", "Prompt tokens", "Output tokens"):
        frame[column] = frame[column].astype("Int64")
    frame["Billed (USD)"] = frame["Billed (USD)"].astype("Float64")
    return frame


def subagent_card(row: Mapping[str, Any]) -> str:
    """The line a tool call's card shows of the sub-agent it ran (Markdown): its model calls, tool
    calls, tokens and recorded bill, linked to the sub-agent's own session on the Messages page;
    while its transcript is not imported, what the parent recorded of it."""
    name = row.get("agent_id") or row.get("session_id") or "sub-agent"
    if row.get("stored_id") is None or row.get("model_calls") is None:
        recorded = _recorded(row)
        return (f"**Sub-agent** {code_span(name)}: its transcript is not imported"
                + ("" if recorded == "—" else f"; the parent recorded {recorded}") + ".")
    bill = row.get("billed_usd")
    money = "no price known" if bill is None else f"billed ${bill:,.4f}"
    link = _session_link(row["stored_id"])
    return (f"**Sub-agent** {code_span(name)}: {counted(row['model_calls'], 'model call')}, "
            f"{counted(row['tool_calls'], 'tool call')}, {row['prompt_tokens']:,} prompt / "
            f"{row['output_tokens']:,} output tokens, {money} · [open its session]({link})")


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
                 "figure 'Compaction input (parent's conversation)' below is the prompt the "
                 "provider counted for the call, as the parent states it.")
    return text
