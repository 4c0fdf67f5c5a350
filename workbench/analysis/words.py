"""How every surface writes a count: digits grouped by thousands and the noun in the number it
takes (``1 step``, ``2 steps``, ``214,992 lines``). The pages, the report, the notebook's HTML
and the command line word counts with these, so one count reads the same everywhere."""

from __future__ import annotations

__all__ = ["counted", "thousands"]


def thousands(n: int) -> str:
    """``15189688`` → ``15,189,688``."""
    return f"{n:,}"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``counted(1, "step")`` → ``1 step``; ``counted(214992, "line")`` → ``214,992 lines``;
    ``plural`` for a noun that does not take an ``s`` (``counted(2, "is", "are")``)."""
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"
