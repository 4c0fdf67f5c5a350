"""Tables with empty cells shown as ``—`` and their columns named as a reader says them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from workbench.views.display import dashed

__all__ = ["dashed_table"]


def dashed_table(frame: pd.DataFrame, *, key: str, config: Mapping[str, Any]) -> None:
    """``frame`` in ``st.dataframe`` with :func:`~workbench.views.display.dashed` empty cells.

    A number column's own format would draw "None" over the Styler's ``—``, so a column with an
    empty cell keeps only its label (the Styler writes its numbers with thousands separators)."""
    holes = {c for c in frame.columns if bool(frame[c].isna().any())}
    columns = {name: (st.column_config.Column(_label(cfg, name)) if name in holes else cfg)
               for name, cfg in config.items()}
    st.dataframe(dashed(frame), hide_index=True, key=key, column_config=columns)


def _label(cfg: Any, name: str) -> str:
    label = cfg.get("label") if isinstance(cfg, Mapping) else cfg if isinstance(cfg, str) else None
    return str(label or name)
