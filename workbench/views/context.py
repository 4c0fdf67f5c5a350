"""Tables of the Context page, from a built context (``workbench.services.context.ContextView``):
one row per built message, one row per validation problem.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["messages_frame", "problems_frame"]


def messages_frame(view: Any) -> pd.DataFrame:
    """One row per built message: position, role, sender, characters, local tokens."""
    return pd.DataFrame(
        [{"position": m.message.position, "role": m.message.role, "sender": m.message.sender,
          "characters": m.chars, "tokens (local estimate)": m.tokens} for m in view.messages],
        columns=["position", "role", "sender", "characters", "tokens (local estimate)"])


def problems_frame(view: Any) -> pd.DataFrame:
    """One row per validation problem: field path, line, reason and file."""
    return pd.DataFrame(
        [{"field": p.field or "", "line": p.line, "problem": p.problem, "file": p.source or ""}
         for p in view.problems], columns=["field", "line", "problem", "file"])
