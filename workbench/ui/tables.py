"""Tables with empty cells shown as ``—`` and their columns named as a reader says them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from workbench.views.display import MISSING, dashed

__all__ = ["dashed_table", "grouped_numbers"]


def grouped_numbers(frame: pd.DataFrame, config: Mapping[str, Any] | None = None
                    ) -> dict[str, Any]:
    """``config`` plus a thousands-separated number format for every integer column it does not
    configure: ``st.dataframe`` draws integers bare (15189688) unless told."""
    columns = dict(config or {})
    for name in frame.columns:
        if name not in columns and pd.api.types.is_integer_dtype(frame[name]) \
                and not pd.api.types.is_bool_dtype(frame[name]):
            columns[str(name)] = st.column_config.NumberColumn(format="localized")
    return columns


def dashed_table(frame: pd.DataFrame, *, key: str, config: Mapping[str, Any]) -> None:
    """``frame`` in ``st.dataframe`` with :func:`~workbench.views.display.dashed` empty cells.

    A column with an empty cell is shown as text, so its number format (a column configuration
    would read "—" as no number and draw "None") is applied here, and only its label is kept."""
    holes = [c for c in frame.columns if bool(frame[c].isna().any())]
    shown = frame.copy() if holes else frame
    columns = dict(config)
    for name in holes:
        fmt = _format(config.get(name))
        if fmt is not None:
            shown[name] = pd.Series([MISSING if pd.isna(v) else fmt % v for v in frame[name]],
                                    index=frame.index, dtype="object")
        if name in config:
            columns[name] = st.column_config.Column(_label(config[name], name))
    st.dataframe(dashed(shown), hide_index=True, key=key, column_config=columns)


def _format(cfg: Any) -> str | None:
    """A printf number format of a column configuration ("localized" is dashed's own form)."""
    fmt = ((cfg.get("type_config") or {}).get("format") if isinstance(cfg, Mapping) else None)
    return fmt if isinstance(fmt, str) and fmt.startswith("%") else None


def _label(cfg: Any, name: str) -> str:
    label = cfg.get("label") if isinstance(cfg, Mapping) else cfg if isinstance(cfg, str) else None
    return str(label or name)
