"""The one text diff of the workbench: a unified diff of an edit ("" when nothing changed).

The Templates page shows a template edit with it, a re-run compares the summary request and the
checkpoint the engine produced before and after an edit.
"""

from __future__ import annotations

import difflib

__all__ = ["unified_diff"]


def unified_diff(original: str, edited: str, *, fromfile: str, tofile: str) -> str:
    """Unified diff of two texts, line by line ("" when equal)."""
    return "".join(difflib.unified_diff(original.splitlines(keepends=True),
                                        edited.splitlines(keepends=True),
                                        fromfile=fromfile, tofile=tofile))
