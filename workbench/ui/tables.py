"""Tables and figures drawn through Streamlit: the typed calls that draw them, tables with empty
cells shown as ``—`` and their columns named as a reader says them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, overload

import pandas as pd
import streamlit as st

from workbench.views.display import MISSING, dashed

if TYPE_CHECKING:
    # plotly ships no stubs: the checker reads its figure class from its source
    import plotly.graph_objects as go  # pyright: ignore[reportMissingTypeStubs]
    from pandas.io.formats.style import Styler
    from streamlit.delta_generator import DeltaGenerator
    from streamlit.elements.arrow import DataframeState
    from streamlit.elements.lib.column_types import ColumnConfig
    from streamlit.elements.plotly_chart import PlotlyState

__all__ = ["ColumnSetting", "Drawer", "dashed_table", "draw", "drawer", "grouped_numbers"]

#: One column's setting in ``st.dataframe``'s ``column_config``: a ``st.column_config`` column, a
#: label, or ``None`` (the column hidden).
ColumnSetting: TypeAlias = "ColumnConfig | str | None"


class Drawer(Protocol):
    """The calls of a Streamlit container (``st`` itself, an expander, a column) that draw a table
    or a figure, with the arguments the app gives them. Streamlit's own signatures accept any of
    its ``Data`` (pyarrow's ``Array`` among them, named without its type argument: pyarrow ships no
    types), which strict type checking reads as partly unknown. Only the types are narrowed: the
    checker holds ``st`` and every container handed to :func:`drawer` to Streamlit's signatures."""

    @overload
    def dataframe(self, data: pd.DataFrame | Styler, *, hide_index: bool | None = None,
                  key: str | None = None, column_config: Mapping[str, ColumnSetting] | None = None,
                  column_order: Iterable[str] | None = None, height: int | Literal["auto"] = "auto",
                  on_select: Literal["ignore"] = "ignore") -> DeltaGenerator: ...

    @overload
    def dataframe(self, data: pd.DataFrame | Styler, *, hide_index: bool | None = None,
                  key: str | None = None, column_config: Mapping[str, ColumnSetting] | None = None,
                  on_select: Literal["rerun"], selection_mode: Literal["single-row"]
                  ) -> DataframeState: ...

    def table(self, data: pd.DataFrame, *, hide_index: bool | None = None) -> DeltaGenerator: ...

    def vega_lite_chart(self, data: Mapping[str, Any], *, key: str,
                        width: Literal["stretch", "content"] | int | None = None) -> DeltaGenerator:
        """``data``: a whole Vega-Lite specification (Streamlit reads a mapping alone as one)."""
        ...

    @overload
    def plotly_chart(self, figure_or_data: go.Figure | Mapping[str, Any], *, key: str,
                     on_select: Literal["ignore"] = "ignore") -> DeltaGenerator: ...

    @overload
    def plotly_chart(self, figure_or_data: go.Figure | Mapping[str, Any], *, key: str,
                     on_select: Literal["rerun"], selection_mode: Literal["points"]) -> PlotlyState: ...


def drawer(container: Drawer) -> Drawer:
    """``container`` (``st``, an expander, a column…) as the :class:`Drawer` it is."""
    return container


#: The page's main area as a :class:`Drawer`.
draw = drawer(st)


def grouped_numbers(frame: pd.DataFrame, config: Mapping[str, ColumnSetting] | None = None
                    ) -> dict[str, ColumnSetting]:
    """``config`` plus a thousands-separated number format for every integer column it does not
    configure: ``st.dataframe`` draws integers bare (15189688) unless told."""
    columns = dict(config or {})
    for name in frame.columns:
        if name not in columns and pd.api.types.is_integer_dtype(frame[name]) \
                and not pd.api.types.is_bool_dtype(frame[name]):
            columns[str(name)] = st.column_config.NumberColumn(format="localized")
    return columns


def dashed_table(frame: pd.DataFrame, *, key: str, config: Mapping[str, ColumnSetting]) -> None:
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
    draw.dataframe(dashed(shown), hide_index=True, key=key, column_config=columns)


def _format(cfg: ColumnSetting) -> str | None:
    """A printf number format of a column configuration ("localized" is dashed's own form)."""
    if cfg is None or isinstance(cfg, str):
        return None
    settings: Mapping[str, object] = cfg.get("type_config") or {}
    fmt = settings.get("format")
    return fmt if isinstance(fmt, str) and fmt.startswith("%") else None


def _label(cfg: ColumnSetting, name: str) -> str:
    label = cfg if cfg is None or isinstance(cfg, str) else cfg.get("label")
    return str(label or name)
