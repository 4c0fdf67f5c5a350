"""The traces of a plotly figure for tests to read.

plotly has no type information: the checker infers ``Figure.data`` as the figure itself (its
property setter returns it), so the traces are handed over here as the tuple they are at run time.
"""

from __future__ import annotations

from typing import Any, cast

import plotly.graph_objects as go


def figure_traces(fig: go.Figure) -> list[Any]:
    """The figure's traces in drawing order."""
    return list(cast("tuple[Any, ...]", fig.data))
