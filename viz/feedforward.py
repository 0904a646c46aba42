"""Figures for feed-forward attention: α over time with the marked steps highlighted.

Long sequences (up to 10,000 steps) are drawn as one WebGL line, never as thousands of bars.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.plotly_json import quick_figure

WEBGL_ABOVE = 2_000  # steps; longer series use Scattergl
MARK_COLOR = "#d62728"
LINE_COLOR = "#1f77b4"


def alpha_over_time(
    record: AttentionRecord,
    *,
    title: str | None = None,
    log_y: bool | None = None,
    height: int | None = None,
) -> go.Figure:
    """Returns a line of α_t over t, diamonds on the marked steps and the uniform level 1/T.

    record: weights [T] (axes ("time",)), extras["marked"] (2,) optional.
    """
    alpha = np.asarray(record.weights, np.float64).reshape(-1)
    length = alpha.size
    steps = np.arange(length)
    marked = np.asarray(record.extras.get("marked", ()), int).reshape(-1)
    data = [{
        "type": "scattergl" if length > WEBGL_ABOVE else "scatter", "x": steps, "y": alpha,
        "mode": "lines+markers" if length <= 200 else "lines", "name": "α_t",
        "line": {"color": LINE_COLOR, "width": 1}, "marker": {"size": 3},
        "hovertemplate": "t = %{x}<br>α = %{y:.3g}<extra></extra>",
    }]
    shapes = []
    if marked.size:
        data.append({
            "type": "scatter", "x": marked, "y": alpha[marked], "mode": "markers", "name": "marked steps",
            "marker": {"symbol": "diamond", "size": 11, "color": MARK_COLOR, "line": {"color": "white", "width": 1}},
            "hovertemplate": "marked t = %{x}<br>α = %{y:.3g}<extra></extra>",
        })
        shapes = [{"type": "line", "x0": int(step), "x1": int(step), "xref": "x", "y0": 0, "y1": 1, "yref": "y domain",
                   "line": {"color": MARK_COLOR, "width": 1, "dash": "dot"}, "opacity": 0.5} for step in marked]
    uniform = 1.0 / length
    shapes.append({"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": uniform, "y1": uniform, "yref": "y",
                   "line": {"color": "#7f7f7f", "width": 1, "dash": "dash"}})
    layout = {
        "title": {"text": title} if title else None,
        "height": height or 320,
        "margin": {"l": 60, "r": 20, "t": 50 if title else 20, "b": 45},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1.0},
        "xaxis": {"title": {"text": "time step t"}, "range": [-0.5, length - 0.5]},
        "yaxis": {"title": {"text": "α_t"}, "type": "log" if log_y else "linear", "exponentformat": "power",
                  "rangemode": "normal" if log_y else "tozero"},
        "shapes": shapes,
        "annotations": [{"text": "uniform 1/T", "x": 1, "xref": "x domain", "xanchor": "right", "y": uniform,
                         "yref": "y", "yanchor": "bottom", "showarrow": False}],
    }
    if layout["title"] is None:
        del layout["title"]
    return quick_figure(data, layout)
