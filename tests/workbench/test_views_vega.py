"""The app's Vega-Lite form of a plotly figure (workbench.views.vega): the Usage chart (R-UI-5) and
the context breakdown (R-UI-2) show the same series, values, styles and y range as the figure the
notebook and the report draw with plotly."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from workbench.views.vega import vega_lite


def _rows(spec: dict, series: str, mark: str) -> list[tuple]:
    return [(r["x"], r["y"]) for layer in spec["layer"] if layer["mark"]["type"] == mark
            for r in layer["data"]["values"] if r.get("series") == series]


def test_r_ui_5_lines_markers_gaps_styles_rules_and_range():
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1, 2], y=[10.0, math.nan, 30.0], name="provider",
                             mode="lines+markers", customdata=["ready", "ready", "failed"],
                             line={"color": "#0D9488"}, marker={"color": "#0D9488"}))
    fig.add_trace(go.Scatter(x=[0, 1, 2], y=[5, 5, 7], name="pressure line", mode="lines",
                             line={"color": "#DC2626", "dash": "dash", "shape": "hv"}))
    fig.add_trace(go.Scatter(x=[1], y=[25], name="recorded", mode="markers",
                             marker={"symbol": "star", "size": 15, "color": "#F59E0B"}))
    fig.add_vline(x=1, line={"color": "#F59E0B", "dash": "dashdot"})
    fig.update_layout(xaxis_title="step", yaxis_title="tokens", yaxis={"range": [0, 40]})
    spec = vega_lite(fig)
    assert _rows(spec, "provider", "line") == [(0, 10.0), (2, 30.0)]  # the NaN is a gap
    assert _rows(spec, "provider", "point") == [(0, 10.0), (2, 30.0)]
    detail = [r["detail"] for layer in spec["layer"] for r in layer["data"]["values"]
              if r.get("series") == "provider"]
    assert detail[:2] == ["ready", "failed"]
    line = next(layer["mark"] for layer in spec["layer"]
                if layer["data"]["values"][0].get("series") == "pressure line")
    assert line["interpolate"] == "step-after" and line["strokeDash"] == [6, 4]
    star = next(layer["mark"] for layer in spec["layer"]
                if layer["data"]["values"][0].get("series") == "recorded")
    assert star["shape"].startswith("M") and star["filled"]
    rules = [layer for layer in spec["layer"] if layer["mark"]["type"] == "rule"]
    assert [r["data"]["values"][0]["x"] for r in rules] == [1]
    assert rules[0]["mark"]["strokeDash"] == [6, 3, 2, 3]
    colour = spec["layer"][0]["encoding"]["color"]["scale"]
    assert colour == {"domain": ["provider", "pressure line", "recorded"],
                      "range": ["#0D9488", "#DC2626", "#F59E0B"]}
    for layer in spec["layer"]:
        assert layer["encoding"]["x"]["title"] == "step"
        if "y" in layer["encoding"]:
            assert layer["encoding"]["y"]["scale"]["domain"] == [0, 40]
            assert layer["encoding"]["y"]["axis"]["title"] == "tokens"


def test_r_ui_2_bars_stack_in_trace_order_in_one_layer():
    fig = go.Figure()
    fig.add_bar(x=[0, 1], y=[3, 4], name="overhead", marker_color="#111111")
    fig.add_bar(x=[0, 1], y=[1, 2], name="user text", marker_color="#222222")
    fig.add_vline(x=1, line_dash="dot", line_color="#2563EB")
    fig.update_layout(barmode="stack", height=380, title="What each request is made of")
    spec = vega_lite(fig)
    bars = [layer for layer in spec["layer"] if layer["mark"]["type"] == "bar"]
    assert len(bars) == 1 and bars[0]["encoding"]["y"]["stack"] == "zero"
    rows = bars[0]["data"]["values"]
    assert [(r["series"], r["x"], r["y"], r["order"]) for r in rows] == [
        ("overhead", 0, 3, 0), ("overhead", 1, 4, 0), ("user text", 0, 1, 1), ("user text", 1, 2, 1)]
    rule = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rule")
    assert rule["encoding"]["x"]["type"] == "ordinal"  # on the bars' steps
    assert spec["height"] == 380 and spec["title"] == "What each request is made of"
