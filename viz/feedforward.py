"""Figures for feed-forward attention: α over time with the marked steps highlighted.

Long sequences (up to 10,000 steps) are drawn as one WebGL line, never as thousands of bars.
"""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.i18n_text import Gettext, untranslated
from viz.plotly_json import quick_figure

WEBGL_ABOVE = 2_000  # steps; longer series use Scattergl
MARK_COLOR = "#d62728"
LINE_COLOR = "#1f77b4"


def log_ticks(values: np.ndarray) -> dict:
    """Returns a log axis's ticks at 1 and 3 × 10^k (10^k alone past three decades) over the positive values' range, written out
    (0.001, 3e-05): within one decade plotly.js labels 2…9 × 10^k in small digits that crowd each other."""
    positive = np.asarray(values, np.float64)
    positive = positive[positive > 0]
    if positive.size == 0:
        return {}
    low, high = math.floor(math.log10(positive.min())), math.ceil(math.log10(positive.max()))
    steps = (1, 3) if high - low <= 3 else (1,)  # over more than three decades, 3 × 10^k would crowd the axis
    ticks = [m * 10.0 ** k for k in range(low, high + 1) for m in steps]
    inside = [t for t in ticks if positive.min() / 3 <= t <= positive.max() * 3]
    return {"tickmode": "array", "tickvals": inside, "ticktext": [f"{t:.3g}" for t in inside]}


def alpha_over_time(
    record: AttentionRecord,
    *,
    title: str | None = None,
    row_titles: list[str] | None = None,
    log_y: bool | None = None,
    height: int | None = None,
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns a line of α_t over t, diamonds on the marked steps and the uniform level 1/T.

    record: weights [T] (axes ("time",)), or [R, T] (one row per model, axes (…, "time")): R rows
    of panels, one above the other, on one shared time axis, each titled by row_titles[r], and on one
    shared α scale: each row scaled to its own peak drew the paper form's peaks of 0.007 as tall as
    the unbounded score's 0.45, though the text calls them small bumps on a flat line.
    extras["marked"] (2,) optional, the same steps in every row.
    One figure for all rows: a control that changes every row redraws one figure, not R.
    gettext: translates the figure's own texts (legend, axis title, hover, the uniform line's label).
    """
    _ = gettext
    alphas = np.asarray(record.weights, np.float64)
    alphas = alphas.reshape(-1, alphas.shape[-1])
    rows, length = alphas.shape
    steps = np.arange(length)
    marked = np.asarray(record.extras.get("marked", ()), int).reshape(-1)
    uniform = 1.0 / length
    scale = np.append(alphas.reshape(-1), uniform)  # every row's values: one α range for all
    positive = scale[scale > 0]
    if log_y:
        low, high = float(positive.min()), float(positive.max())
        y_range = [math.log10(low / 1.5), math.log10(high * 1.5)]
    else:
        y_range = [0.0, float(scale.max()) * 1.1]
    gap = 0.12 if rows > 1 else 0.0
    band = (1.0 - gap * (rows - 1)) / rows
    data, shapes, annotations, layout = [], [], [], {}
    for r, alpha in enumerate(alphas):
        suffix = "" if r == 0 else str(r + 1)
        x, y = "x", f"y{suffix}"
        top = 1.0 - r * (band + gap)
        data.append({
            "type": "scattergl" if length > WEBGL_ABOVE else "scatter", "x": steps, "y": alpha, "xaxis": x, "yaxis": y,
            "mode": "lines+markers" if length <= 200 else "lines", "name": "α_t", "showlegend": r == 0,
            "legendgroup": "alpha", "line": {"color": LINE_COLOR, "width": 1}, "marker": {"size": 3},
            "hovertemplate": "t = %{x}<br>α = %{y:.3g}<extra></extra>",
        })
        if marked.size:
            data.append({
                "type": "scatter", "x": marked, "y": alpha[marked], "xaxis": x, "yaxis": y, "mode": "markers",
                "name": _("marked steps"), "showlegend": r == 0, "legendgroup": "marked",
                "marker": {"symbol": "diamond", "size": 11, "color": MARK_COLOR, "line": {"color": "white", "width": 1}},
                "hovertemplate": _("marked t = {step}").format(step="%{x}") + "<br>α = %{y:.3g}<extra></extra>",
            })
            shapes += [{"type": "line", "x0": int(step), "x1": int(step), "xref": x, "y0": 0, "y1": 1,
                        "yref": f"{y} domain", "line": {"color": MARK_COLOR, "width": 1, "dash": "dot"}, "opacity": 0.5}
                       for step in marked]
        shapes.append({"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": uniform, "y1": uniform, "yref": y,
                       "line": {"color": "#7f7f7f", "width": 1, "dash": "dash"}})
        # Just above its line, at the right end. On a log axis an annotation's y is the log of the value
        # (a shape's is the value itself): y = 1/T there put the label near α = 10^(1/T) ≈ 1, far above its line.
        annotations.append({"text": _("uniform 1/T"), "x": 1, "xref": "x domain", "xanchor": "right",
                            "y": math.log10(uniform) if log_y else uniform, "yref": y, "yanchor": "bottom",
                            "showarrow": False})
        if row_titles and r < len(row_titles):
            annotations.append({"text": f"<b>{html.escape(row_titles[r])}</b>", "x": 0, "xref": "paper", "xanchor": "left",
                                "y": top, "yref": "paper", "yanchor": "bottom", "showarrow": False})
        layout[f"yaxis{suffix}"] = {
            "title": {"text": "α_t"}, "type": "log" if log_y else "linear", "exponentformat": "power",
            "range": y_range, "domain": [max(top - band, 0.0), top], "anchor": x,
            **({"matches": "y"} if r else {}),  # a zoom of one row zooms the others: the scale stays one
            **(log_ticks(positive) if log_y else {}),
        }
    bottom = f"y{'' if rows == 1 else rows}"
    titled = bool(title) or bool(row_titles)
    layout.update({
        "height": height or (320 if rows == 1 else 170 + 210 * rows),
        "margin": {"l": 60, "r": 20, "t": (50 if title else 30) if titled else 20, "b": 45},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0 + (0.04 if title and rows > 1 else 0.0),
                   "xanchor": "right", "x": 1.0},
        "xaxis": {"title": {"text": _("time step t")}, "range": [-0.5, length - 0.5], "anchor": bottom},
        "shapes": shapes,
        "annotations": annotations,
    })
    if title:
        layout["title"] = {"text": title}
    return quick_figure(data, layout)
