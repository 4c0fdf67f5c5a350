"""A plotly figure of the views drawn as a Vega-Lite spec, for pages that show it in the app.

Streamlit's front end loads plotly.js (a 4.7 MB script) the first time a document shows a plotly
chart; Vega-Lite is a quarter of that. The figures stay plotly (the notebook and the HTML report
draw them as they are); :func:`vega_lite` reads the parts the app's line and bar figures use —
scatter traces (lines, markers, step lines, dashes), stacked bars, vertical lines, the y range and
the axis titles — so one figure function keeps saying what is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

import plotly.graph_objects as go

__all__ = ["vega_lite"]

#: plotly marker symbols in Vega-Lite's names (a star as an SVG path in a unit box).
_SHAPES = {"circle": "circle", "circle-open": "circle", "diamond": "diamond", "square": "square",
           "star": "M0,-1L0.24,-0.33L0.95,-0.31L0.38,0.12L0.59,0.81L0,0.4L-0.59,0.81L-0.38,0.12"
                   "L-0.95,-0.31L-0.24,-0.33Z"}
#: plotly dash names as Vega-Lite stroke dashes.
_DASHES = {"dash": [6, 4], "dot": [2, 3], "dashdot": [6, 3, 2, 3], "longdash": [10, 4]}
_SERIES = "series"


def _values(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The trace's points as rows (x, y, series and the hover detail); missing y values dropped."""
    ys = list(trace.get("y", ()))
    xs = list(trace.get("x", range(len(ys))))  # plotly draws the shorter of the two
    found = trace.get("customdata")
    found = trace.get("text") if found is None else found
    detail = [] if found is None or isinstance(found, str) else list(found)
    rows = []
    for k, (x, y) in enumerate(zip(xs, ys, strict=False)):
        if y is None or (isinstance(y, float) and math.isnan(y)):  # a gap, as plotly draws it
            continue
        row = {"x": _plain(x), "y": _plain(y), _SERIES: trace.get("name") or ""}
        if k < len(detail):
            row["detail"] = str(detail[k])
        rows.append(row)
    return rows


def _plain(value: Any) -> Any:
    """A JSON number or text (numpy scalars become Python ones)."""
    return value.item() if hasattr(value, "item") else value


def _tooltip(rows: Sequence[Mapping[str, Any]], x_title: str, y_title: str) -> list[dict[str, Any]]:
    tips = [{"field": _SERIES, "type": "nominal", "title": " "},
            {"field": "x", "type": "quantitative", "title": x_title},
            {"field": "y", "type": "quantitative", "title": y_title, "format": ","}]
    if any("detail" in r for r in rows):
        tips.append({"field": "detail", "type": "nominal", "title": "detail"})
    return tips


def _scatter_layers(trace: Mapping[str, Any], colour: Mapping[str, Any], tips: Any) -> list[dict]:
    """A line layer and/or a point layer for one scatter trace."""
    rows = _values(trace)
    if not rows:
        return []
    mode = trace.get("mode") or "lines+markers"
    line, marker = trace.get("line") or {}, trace.get("marker") or {}
    encoding = {"x": {"field": "x", "type": "quantitative"},
                "y": {"field": "y", "type": "quantitative"}, "color": colour,
                "tooltip": tips(rows)}
    layers = []
    if "lines" in mode:
        mark: dict[str, Any] = {"type": "line", "strokeWidth": line.get("width", 2)}
        if line.get("shape") == "hv":
            mark["interpolate"] = "step-after"
        if line.get("dash") in _DASHES:
            mark["strokeDash"] = _DASHES[line["dash"]]
        layers.append({"data": {"values": rows}, "mark": mark, "encoding": encoding})
    if "markers" in mode:
        symbol = str(marker.get("symbol", "circle"))
        size = float(marker.get("size", 6))
        layers.append({"data": {"values": rows}, "encoding": encoding, "mark": {
            "type": "point", "shape": _SHAPES.get(symbol, "circle"), "size": size * size * 2,
            "filled": not symbol.endswith("-open"), "opacity": 1}})
    return layers


def _bar_layer(traces: Sequence[Mapping[str, Any]], colour: Mapping[str, Any], tips: Any) -> dict:
    """Every bar trace in one stacked layer, in the figure's trace order (the first at the bottom)."""
    rows = []
    for order, trace in enumerate(traces):
        rows += [{**row, "order": order} for row in _values(trace)]
    return {"data": {"values": rows}, "mark": {"type": "bar"}, "encoding": {
        "x": {"field": "x", "type": "ordinal", "axis": {"labelOverlap": True}},
        "y": {"field": "y", "type": "quantitative", "stack": "zero"},
        "color": colour, "order": {"field": "order", "type": "quantitative"},
        "tooltip": tips(rows)}}


def _rules(shapes: Sequence[Mapping[str, Any]], ordinal: bool) -> list[dict]:
    """The figure's vertical lines (``add_vline``: x0 == x1 spanning the plot) as rule layers."""
    layers = []
    for shape in shapes:
        if shape.get("type") != "line" or shape.get("x0") != shape.get("x1") or \
                shape.get("yref") not in ("paper", "y domain"):
            continue
        line = shape.get("line") or {}
        mark: dict[str, Any] = {"type": "rule", "color": line.get("color", "#888888"),
                                "strokeWidth": line.get("width", 1.5)}
        if line.get("dash") in _DASHES:
            mark["strokeDash"] = _DASHES[line["dash"]]
        layers.append({"data": {"values": [{"x": _plain(shape["x0"])}]}, "mark": mark,
                       "encoding": {"x": {"field": "x", "type": "ordinal" if ordinal else "quantitative"}}})
    return layers


def _title(axis: Mapping[str, Any], default: str) -> str:
    return str(axis.get("title") or default)


def _style(part: Any, names: Sequence[str]) -> dict[str, Any]:
    return {n: v for n in names if (v := getattr(part, n, None)) is not None}


def _plain_json(fig: go.Figure) -> dict[str, Any]:
    """The parts of ``fig`` read here, as plain lists (``to_plotly_json`` packs arrays as base64)."""
    data = []
    for t in cast("Sequence[Any]", fig.data):  # plotly's stubs type the tuple loosely
        data.append({"type": t.type, "name": t.name, "mode": getattr(t, "mode", None),
                     "x": t.x, "y": t.y, "customdata": t.customdata,
                     "text": getattr(t, "text", None),
                     "line": _style(getattr(t, "line", None), ("color", "dash", "shape", "width")),
                     "marker": _style(t.marker, ("color", "symbol", "size"))})
    layout = fig.layout
    shapes = [{"type": s.type, "x0": s.x0, "x1": s.x1, "yref": s.yref,
               "line": _style(s.line, ("color", "dash", "width"))} for s in layout.shapes]
    return {"data": [{k: v for k, v in t.items() if v is not None} for t in data], "layout": {
        "shapes": shapes, "height": layout.height, "title": layout.title.text,
        "xaxis": {"title": layout.xaxis.title.text},
        "yaxis": {"title": layout.yaxis.title.text, "range": layout.yaxis.range}}}


def vega_lite(fig: go.Figure, *, height: int | None = None) -> dict[str, Any]:
    """``fig`` (scatter and bar traces, vertical lines) as a layered Vega-Lite spec: the same
    series names, values, colours, dashes and y range; the legend at the bottom."""
    spec = _plain_json(fig)
    layout = spec["layout"]
    traces = [t for t in spec["data"] if t.get("type") in ("scatter", "bar")]
    x_title = _title(layout.get("xaxis", {}), "x")
    y_title = _title(layout.get("yaxis", {}), "y")
    names = list(dict.fromkeys(t.get("name") or "" for t in traces))
    colours = {}
    for t in traces:
        marker, line = t.get("marker") or {}, t.get("line") or {}
        found = marker.get("color") if isinstance(marker.get("color"), str) else line.get("color")
        colours.setdefault(t.get("name") or "", found or "#64748B")
    colour = {"field": _SERIES, "type": "nominal", "title": None,
              "scale": {"domain": names, "range": [colours[n] for n in names]},
              "legend": {"orient": "bottom", "columns": 3, "labelLimit": 360}}

    def tips(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return _tooltip(rows, x_title, y_title)

    bars = [t for t in traces if t.get("type") == "bar"]
    layers = [_bar_layer(bars, colour, tips)] if bars else []
    for trace in traces:
        if trace.get("type") == "scatter":
            layers += _scatter_layers(trace, colour, tips)
    layers += _rules(layout.get("shapes", ()), ordinal=bool(bars))
    y_axis: dict[str, Any] = {"title": y_title, "format": ",.0f"}
    y_scale = {"domain": list(layout["yaxis"]["range"])} if layout.get("yaxis", {}).get("range") else {}
    for layer in layers:
        encoding = layer["encoding"]
        encoding["x"]["title"] = x_title
        if encoding["x"]["type"] == "quantitative":  # steps: whole numbers
            encoding["x"]["axis"] = {"format": "d", "tickMinStep": 1}
        if "y" in encoding:
            encoding["y"].update({"axis": y_axis, **({"scale": y_scale} if y_scale else {})})
    out: dict[str, Any] = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json",
                           "layer": layers}
    if layout.get("title"):
        out["title"] = str(layout["title"])
    if height or layout.get("height"):
        out["height"] = height or layout["height"]
    return out
