"""Display forms of the views' structured columns.

The views' DataFrames hold data: numbers, booleans, lists and dicts (``decision_kinds`` is a
``{kind: count}`` dict, ``cut_points`` a list of ``{"step", "cut_index"}`` dicts, the provider's
count is a nullable integer with an ``estimated`` flag), so a notebook can filter, sum and
``pd.concat`` them. Pages, the notebook's HTML and the report turn them into words only when they
show them, with the functions here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import pandas as pd
from pandas.api.types import is_number

#: What a table cell shows for a value that is not there (the command line's word for it too).
MISSING = "—"

__all__ = ["MISSING", "TEXT_COLUMNS", "cut_points_text", "dashed", "display_frame", "kinds_text",
           "provider_label"]


def kinds_text(kinds: Mapping[str, int] | None) -> str:
    """``{"kept-recent": 2, "trimmed": 1}`` → ``"2 kept-recent, 1 trimmed"`` (kinds sorted)."""
    return ", ".join(f"{n} {kind}" for kind, n in sorted((kinds or {}).items()))


def cut_points_text(points: Sequence[Mapping[str, Any]] | None) -> str:
    """``[{"step": 23, "cut_index": 61}]`` → ``"step 23 @ 61"``."""
    return ", ".join(f"step {p['step']} @ {p['cut_index']}" for p in points or ())


def provider_label(tokens: Any, estimated: Any) -> str:
    """A provider count with thousands separators, ``≈`` before a frozen estimate, ``—`` when none."""
    if tokens is None or pd.isna(tokens):
        return "—"
    return ("≈" if bool(estimated) else "") + f"{int(tokens):,}"


#: Structured columns and the words each is shown as.
TEXT_COLUMNS: dict[str, Callable[[Any], str]] = {"decision_kinds": kinds_text,
                                                   "cut_points": cut_points_text}


def _words(value: Any, words: Callable[[Any], str]) -> Any:
    return words(value) if isinstance(value, (Mapping, list, tuple)) else value


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as shown: structured columns in words, and ``provider_tokens`` with its
    ``estimated`` flag as one ``provider_label`` column in its place."""
    shown = frame.copy()
    for column, words in TEXT_COLUMNS.items():
        if column in shown.columns:
            shown[column] = pd.Series([_words(v, words) for v in shown[column]], index=shown.index,
                                      dtype="str")
    if {"provider_tokens", "estimated"} <= set(shown.columns):
        labels = [provider_label(t, e) for t, e in zip(shown["provider_tokens"], shown["estimated"])]
        shown.insert(list(shown.columns).index("provider_tokens"), "provider_label",
                     pd.Series(labels, index=shown.index, dtype="str"))
        shown = shown.drop(columns=["provider_tokens", "estimated"])
    return shown


def _cell(value: Any) -> str:
    if value is None or (not isinstance(value, (list, tuple, dict)) and bool(pd.isna(value))):
        return MISSING
    if is_number(value) and not isinstance(value, (bool, complex)):
        number = float(cast("float", value))
        return f"{int(number):,}" if number.is_integer() else str(value)
    return str(value)


def dashed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for ``st.dataframe`` with :data:`MISSING` in its empty cells: each column with an
    empty cell becomes text (whole numbers with thousands separators). The browser's table draws
    its own grey "None" over an empty cell whatever a Styler says, so the cell must hold the dash;
    a number format in the column's configuration must then be dropped (``ui.tables``)."""
    holes = [c for c in frame.columns if bool(frame[c].isna().any())]
    if not holes:
        return frame
    shown = frame.copy()
    for column in holes:
        shown[column] = pd.Series([_cell(v) for v in frame[column]], index=frame.index,
                                  dtype="object")
    return shown
