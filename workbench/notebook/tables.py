"""The notebook's session tables (R-UI-8): the stored sessions, the messages of one session and the
messages of one prepared request, as typed DataFrames (see :mod:`workbench.notebook.frames`).

    wb.sessions()                  # one row per stored session (`workbench sessions`)
    wb.messages(session)           # one row per recorded message (the Messages page's table)
    r.step(12).messages()          # one row per message of that step's final request
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from iris.session import Session, ToolCallBlock

from .frames import SCHEMAS, rows_frame, typed

__all__ = ["messages", "request_frame", "sessions"]

#: The Messages page's column titles → the notebook's names.
_MESSAGE_NAMES = {"#": "index", "Role": "role", "Batch": "batch", "Content": "content",
                  "Estimate": "estimate", "Prompt tokens": "prompt_tokens", "Input": "input_tokens",
                  "Cache read": "cache_read_tokens", "Cache write": "cache_write_tokens",
                  "Output": "output_tokens", "Error": "error"}


def load_session(source: str | Path, *, format: str | None = None, lenient: bool = False) -> Session:
    """A session from a transcript file (any supported format) or from the store by its id."""
    from ..services.imports import path_or_stored_id
    from ..storage.store import open_store

    return path_or_stored_id(source, open_store, format=format, lenient=lenient)[1]


def sessions(*, store_path: str | Path | None = None) -> pd.DataFrame:
    """Every stored session, newest import first: id, title, format, messages, responses,
    tool_calls, estimated_tokens, imported_at (UTC), source_path, parent_id (a sub-agent's parent
    session, else None) and unplaced_lines (lines the import could not place)."""
    from ..storage.store import open_store

    with open_store(store_path) as store:
        summaries = store.list_sessions()
    rows = [{"id": s.id, "title": s.title, "format": s.format, "messages": s.message_count,
             "responses": s.response_count, "tool_calls": s.tool_call_count,
             "estimated_tokens": s.estimated_tokens,
             "imported_at": pd.Timestamp(s.imported_at).tz_convert("UTC"),
             "source_path": s.source_path, "parent_id": s.parent_id,
             "unplaced_lines": s.unplaced_count} for s in summaries]
    return rows_frame(rows, "sessions")


def messages(session: Session | str | Path) -> pd.DataFrame:
    """One row per recorded message: index, role, batch, content (a one-line summary), estimate
    (local tokens), the provider's prompt/input/cache/output tokens (missing when the message has
    no usage), model, timestamp (UTC), tool_calls (names), error, compaction_summary, synthetic."""
    from iris.tokens import default_estimator

    from ..views.messages import message_frame

    if not isinstance(session, Session):
        session = load_session(session)
    frame = message_frame(session, default_estimator()).rename(columns=_MESSAGE_NAMES)
    msgs = session.messages
    frame["model"] = pd.Series([m.model for m in msgs], index=frame.index, dtype="str")
    frame["timestamp"] = pd.to_datetime(pd.Series([m.timestamp for m in msgs], index=frame.index,
                                                  dtype="object"), utc=True)
    frame["tool_calls"] = pd.Series([[b.name for b in m.content if isinstance(b, ToolCallBlock)]
                                     for m in msgs], index=frame.index, dtype="object")
    frame["compaction_summary"] = [bool(m.is_compaction_summary) for m in msgs]
    frame["synthetic"] = [bool(m.synthetic) for m in msgs]
    return typed(frame.reindex(columns=list(SCHEMAS["messages"])), "messages")


def request_frame(request_messages: Sequence) -> pd.DataFrame:
    """One row per message of a final request (:class:`~workbench.views.step_through.
    RequestMessage`): position, role, origin, label, marks (a list), chars, history_index,
    changed (the recorded message was reduced, folded or summarised), text, original_text."""
    rows = [{"position": m.position, "role": m.role, "origin": m.origin, "label": m.label,
             "marks": list(m.marks), "chars": m.chars, "history_index": m.history_index,
             "changed": m.original_text is not None, "text": m.text,
             "original_text": m.original_text} for m in request_messages]
    return rows_frame(rows, "request")

