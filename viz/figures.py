"""Plotly figure builders. Each takes arrays or an AttentionRecord and returns a go.Figure.

No streamlit, no jax, no file writes. Every label that reaches plotly is HTML-escaped
(viz/labels.py), so a token such as ``<b>`` shows as text. Axes are categorical with labels
made unique by invisible suffixes, because plotly merges repeated categories into one column.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from PIL import Image

from models.record import AttentionRecord
from viz.i18n_text import N_, Gettext, untranslated
from viz.labels import safe_label, unique_labels
from viz.margins import TICK_LEN, TITLE_ROOM, label_height, label_width
from viz.plotly_json import quick_figure, subplot_grid, tick_stride

COLORSCALE = "Viridis"
MAX_TICKS = 64  # beyond this many labels an axis shows every k-th one; hover shows all
# The records' axis names (models/record.py), as titles and hover write them: translated there.
AXIS_NAMES = (N_("query"), N_("key"), N_("layer"), N_("head"), N_("word"), N_("row"), N_("col"), N_("sentence"))
def _tick_subset(categories: list[str]) -> dict:
    picked = categories[:: tick_stride(len(categories), MAX_TICKS)]
    return {"tickmode": "array", "tickvals": picked, "ticktext": picked}


def _axis_size(n: int) -> int:
    return int(min(max(260, 22 * n + 140), 900))


_FEWEST_PX = 80  # px: the least a heatmap's rows get together, so that one row and its colour bar stay readable


def heatmap_height(rows: int, key_text: Sequence[str], *, titled: bool) -> int:
    """Returns a heatmap's default height: 22 px a row, grown where its key labels, turned by 45°
    under the map (their width estimated from their text), would leave its rows fewer than 16 px
    each or 80 px in all. A map of one row under long labels (a document's sentences) was otherwise
    squeezed to a few px by automargin, its colour bar with it."""
    turned = label_height(max((label_width(t) for t in key_text), default=0.0), -45) + TITLE_ROOM + TICK_LEN
    return min(max(_axis_size(rows), math.ceil((50 if titled else 20) + turned + max(16 * rows, _FEWEST_PX))), 900)


def heatmap(
    weights: np.ndarray,
    query_labels: Sequence[object],
    key_labels: Sequence[object],
    *,
    title: str | None = None,
    zmax: float | None = None,
    colorscale: str | None = None,
    query_title: str | None = None,
    key_title: str | None = None,
    value_name: str | None = None,
    height: int | None = None,
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns a heatmap: queries on y (top to bottom), keys on x, a colorbar, hover to 4 dp.
    weights [Tq, Tk]; height in px (default: grows with the rows); default axis titles in gettext's language."""
    _ = gettext
    weights = np.asarray(weights, dtype=np.float32)
    if weights.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D array, got shape {weights.shape}")
    ys = unique_labels(query_labels)
    xs = unique_labels(key_labels)
    value_name = value_name or "α"
    query_title = _("query") if query_title is None else query_title
    key_title = key_title or _("key")
    trace = {
        "type": "heatmap", "z": weights, "x": xs, "y": ys, "zmin": 0.0,
        "zmax": float(zmax) if zmax is not None else max(float(np.max(weights, initial=0.0)), 1e-9),
        "colorscale": colorscale or COLORSCALE, "colorbar": {"title": {"text": value_name}},
        "hovertemplate": ((f"{query_title}: %{{y}}" if query_title else "%{y}") + f"<br>{key_title}: %{{x}}"
                          f"<br>{value_name} = %{{z:.4f}}<extra></extra>"),
        "xgap": 0, "ygap": 0,
    }
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "height": height or heatmap_height(len(ys), xs[:: tick_stride(len(xs), MAX_TICKS)], titled=bool(title)),
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        # Category axes: tokens are names, and "1 2 3 4 5 6 7 8 cat" would otherwise make plotly.js
        # read the labels as numbers and drop [CLS], cat and [SEP]. The first query on top as a fixed
        # range, not autorange "reversed": with that, the browser's second pass over a mounted chart
        # redrew it all again (bench/plotly_draw.py).
        "xaxis": {"title": {"text": key_title}, "side": "bottom", "tickangle": -45, "type": "category",
                  **_tick_subset(xs)},
        # query_title "": no title (plotly.js leaves room for an empty title's standoff too)
        "yaxis": {**({"title": {"text": query_title}} if query_title != "" else {}), "type": "category",
                  "range": [len(ys) - 0.5, -0.5],
                  **_tick_subset(ys)},
    }
    return quick_figure([trace], layout)


def attention_heatmap(
    record: AttentionRecord, *, title: str | None = None, zmax: float | None = None, height: int | None = None,
    gettext: Gettext = untranslated, **fixed: int,
) -> go.Figure:
    """Returns the heatmap of one [query, key] matrix of a record (leading axes fixed), in gettext's language."""
    _ = gettext
    names = dict(zip(record.leading_axes, (fixed.get(a, 0) for a in record.leading_axes)))
    auto_title = title
    if auto_title is None:
        where = ", ".join(_("{axis} {index}").format(axis=_(a), index=i) for a, i in names.items())
        auto_title = f"{record.mechanism}" + (f" — {where}" if where else "")
    q = record.query_axis
    query_title = _(record.axes[q] if q is not None else "query")
    key_title = _(record.axes[-1] if record.axes else "key")
    if q is not None and len(record.axes) - q > 2:
        key_title = " × ".join(_(a) for a in record.axes[q + 1 :])
    return heatmap(
        record.matrix(**fixed),
        record.query_labels,
        record.key_labels,
        title=auto_title,
        zmax=zmax,
        query_title=query_title,
        key_title=key_title,
        height=height,
        gettext=gettext,
    )


def heatmap_grid(maps: np.ndarray, row_titles: Sequence[str], col_titles: Sequence[str], **options: Any) -> go.Figure:
    """Returns a grid of small heatmaps sharing one colour axis.  maps [R, C, Tq, Tk]; options as
    heatmap_grid_parts (query_labels, key_labels, title, cell_px, zmax)."""
    return quick_figure(*heatmap_grid_parts(maps, row_titles, col_titles, **options))


def heatmap_grid_parts(
    maps: np.ndarray,
    row_titles: Sequence[str],
    col_titles: Sequence[str],
    *,
    query_labels: Sequence[object] | None = None,
    key_labels: Sequence[object] | None = None,
    title: str | None = None,
    cell_px: int = 110,
    zmax: float | None = None,
    gettext: Gettext = untranslated,
) -> tuple[list[dict], dict]:
    """Returns a grid of small heatmaps sharing one colour axis as plotly JSON (traces, layout),
    for a caller to adjust before quick_figure.  maps [R, C, Tq, Tk]; hover labels in gettext's language."""
    _ = gettext
    maps = np.asarray(maps, dtype=np.float32)
    if maps.ndim != 4:
        raise ValueError(f"heatmap_grid needs [rows, cols, Tq, Tk], got shape {maps.shape}")
    n_rows, n_cols, tq, tk = maps.shape
    ys = unique_labels(query_labels) if query_labels is not None else [str(i) for i in range(tq)]
    xs = unique_labels(key_labels) if key_labels is not None else [str(i) for i in range(tk)]
    layout_json, grid_axes = subplot_grid(
        n_rows, n_cols, row_titles=tuple(safe_label(t) for t in row_titles),
        column_titles=tuple(safe_label(t) for t in col_titles), horizontal_spacing=0.01, vertical_spacing=0.02,
    )
    data = []
    for r in range(n_rows):
        for c in range(n_cols):
            axes = grid_axes[r][c]
            data.append({
                "type": "heatmap", "z": maps[r, c], "x": xs, "y": ys, "coloraxis": "coloraxis",
                "hovertemplate": (f"{safe_label(row_titles[r])}, {safe_label(col_titles[c])}<br>"
                                  f"{_('query')}: %{{y}}<br>{_('key')}: %{{x}}<br>α = %{{z:.4f}}<extra></extra>"),
                **axes,
            })
    layout = json.loads(layout_json)
    for name in layout:
        if name.startswith("xaxis"):
            layout[name]["showticklabels"] = False
        elif name.startswith("yaxis"):
            layout[name].update(showticklabels=False, autorange="reversed")
    top = float(np.max(maps, initial=0.0)) if zmax is None else float(zmax)
    layout.update(
        title={"text": html.escape(title) if title else None},
        coloraxis={"colorscale": COLORSCALE, "cmin": 0.0, "cmax": max(top, 1e-9), "colorbar": {"title": {"text": "α"}}},
        height=int(min(max(cell_px * n_rows + 80, 240), 1400)),
        margin={"l": 10, "r": 10, "t": 60 if title else 40, "b": 10},
    )
    return data, layout


def weight_bars(
    values: np.ndarray,
    labels: Sequence[object],
    *,
    title: str | None = None,
    value_name: str = "α",
    compare: np.ndarray | None = None,
    compare_name: str | None = None,
    highlight: Sequence[int] | None = None,
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns a bar chart of one weight vector [n], optionally beside a second one [n]."""
    _ = gettext
    values = np.asarray(values, dtype=np.float32).reshape(-1)
    xs = unique_labels(labels)
    if len(xs) != len(values):
        raise ValueError(f"{len(xs)} labels for {len(values)} values")
    colors = None
    if highlight is not None:
        marked = set(int(i) for i in highlight)
        colors = ["#d62728" if i in marked else "#1f77b4" for i in range(len(values))]
    bars = [{"type": "bar", "x": xs, "y": values, "name": value_name, "marker": {"color": colors} if colors else {},
             "hovertemplate": f"%{{x}}<br>{html.escape(value_name)} = %{{y:.4f}}<extra></extra>"}]
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "height": 320,
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        "yaxis": {"title": {"text": html.escape(value_name)}},
        "xaxis": {"tickangle": -45, **_tick_subset(xs)},
    }
    if compare is not None:
        name = compare_name or _("compare")
        bars.append({"type": "bar", "x": xs, "y": np.asarray(compare, dtype=np.float32).reshape(-1), "name": name,
                     "hovertemplate": f"%{{x}}<br>{html.escape(name)} = %{{y:.4f}}<extra></extra>"})
        layout.update(barmode="group", legend={"orientation": "h", "y": 1.12})
    return quick_figure(bars, layout)


def bars_over_heatmap(bars: go.Figure, heat: go.Figure) -> go.Figure:
    """Returns one figure with `bars` (a weight_bars chart, its title on top) above `heat` (a
    one-row heatmap of the same keys), the two sharing the key axis; the bottom one keeps its
    tick labels.

    One figure instead of two because a browser redraws each figure a control changes at about a
    third of Streamlit's whole round trip, and a second subplot costs far less.
    """
    top_low, gap = 0.38, 0.06  # the bars take the top 62 % of the height, the heatmap row the rest
    data = [{**trace.to_plotly_json(), "xaxis": "x", "yaxis": "y"} for trace in bars.data]
    for trace in heat.data:
        part = {**trace.to_plotly_json(), "xaxis": "x2", "yaxis": "y2"}
        part["colorbar"] = {**part.get("colorbar", {}), "len": top_low - gap, "y": 0.0, "yanchor": "bottom"}
        data.append(part)
    top, bottom = bars.layout.to_plotly_json(), heat.layout.to_plotly_json()
    title = (top.get("title") or {}).get("text")  # already escaped by weight_bars
    layout = {
        "title": {"text": title},
        "height": int(top.get("height", 320)) + int(bottom.get("height", 220)) - 100,
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        "xaxis": {**top.get("xaxis", {}), "domain": [0.0, 1.0], "anchor": "y", "matches": "x2", "showticklabels": False},
        "yaxis": {**top.get("yaxis", {}), "domain": [top_low, 1.0], "anchor": "x"},
        "xaxis2": {**bottom.get("xaxis", {}), "domain": [0.0, 1.0], "anchor": "y2"},
        # The row's one tick label ("query") names it; its axis title would only repeat it.
        "yaxis2": {**{k: v for k, v in bottom.get("yaxis", {}).items() if k != "title"}, "domain": [0.0, top_low - gap],
                   "anchor": "x2"},
    }
    for name in ("barmode", "legend"):
        if name in top:
            layout[name] = top[name]
    return quick_figure(data, layout)


def png_data_uri(image: np.ndarray, *, compress_level: int = 6) -> str:
    """Returns uint8 [H, W, 3] or [H, W, 4] as a PNG data URI (an image trace's `source`: a few KB
    where `z` would send every pixel as a JSON number)."""
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image, dtype=np.uint8)).save(buffer, format="PNG", compress_level=compress_level)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def image_overlay(
    image: np.ndarray,
    attention_map: np.ndarray,
    *,
    opacity: float = 0.5,
    title: str | None = None,
    smooth: bool = True,
    zmax: float | None = None,
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns the image with an attention map stretched over it.

    image [H, W, 3] uint8; attention_map [h, w] (any grid; each cell covers H/h × W/w pixels).
    """
    image = np.asarray(image)
    amap = np.asarray(attention_map, dtype=np.float32)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be [H, W, 3], got {image.shape}")
    if amap.ndim != 2:
        raise ValueError(f"attention_map must be 2-D, got {amap.shape}")
    height, width = image.shape[:2]
    gh, gw = amap.shape
    dy, dx = height / gh, width / gw
    # The photo as a PNG (`source`), not `z`: a 256 × 256 photo's pixels as JSON numbers would be 1.5 MB
    # of every patch-view message, parsed and drawn by the browser (docs/PERFORMANCE.md, "Figures").
    fig = go.Figure(go.Image(source=png_data_uri(image, compress_level=1), hoverinfo="skip"))
    fig.add_trace(
        go.Heatmap(
            z=amap,
            x0=dx / 2 - 0.5,
            dx=dx,
            y0=dy / 2 - 0.5,
            dy=dy,
            zmin=0.0,
            zmax=float(zmax) if zmax is not None else max(float(amap.max(initial=0.0)), 1e-9),
            opacity=float(np.clip(opacity, 0.0, 1.0)),
            colorscale=COLORSCALE,
            zsmooth="best" if smooth else False,
            colorbar={"title": {"text": "α"}},
            hovertemplate=gettext("row %{y:.0f}, col %{x:.0f}") + "<br>α = %{z:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": html.escape(title) if title else None},
        height=360,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        xaxis={"visible": False},
        yaxis={"visible": False, "scaleanchor": "x"},
    )
    return fig


def vectors_2d(
    points: np.ndarray,
    labels: Sequence[object],
    *,
    weights: np.ndarray | None = None,
    highlight: np.ndarray | None = None,
    highlight_name: str | None = None,
    title: str | None = None,
    x_title: str | None = None,
    y_title: str | None = None,
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns a scatter of 2-D points [n, 2] (marker size ~ weight) plus one highlighted point (default names
    in gettext's language)."""
    _ = gettext
    highlight_name = highlight_name or _("weighted sum")
    x_title, y_title = x_title or _("dim 1"), y_title or _("dim 2")
    points = np.asarray(points, dtype=np.float32)
    if points.ndim != 2 or points.shape[1] < 2:
        raise ValueError(f"vectors_2d needs [n, >=2] points, got {points.shape}")
    names = [safe_label(x) for x in labels]
    sizes = 10 + 40 * np.asarray(weights, np.float32) if weights is not None else 14
    data = [{
        "type": "scatter", "x": points[:, 0], "y": points[:, 1], "mode": "markers+text", "text": names,
        "textposition": "top center", "marker": {"size": sizes, "color": "#1f77b4", "opacity": 0.8}, "name": _("values"),
        "customdata": np.asarray(weights if weights is not None else np.zeros(len(points)), np.float32),
        "hovertemplate": "%{text}<br>(%{x:.3f}, %{y:.3f})<br>α = %{customdata:.4f}<extra></extra>",
    }]
    if highlight is not None:
        point = np.asarray(highlight, np.float32).reshape(-1)
        data.append({
            "type": "scatter", "x": [float(point[0])], "y": [float(point[1])], "mode": "markers",
            "marker": {"size": 18, "symbol": "star", "color": "#d62728"}, "name": highlight_name,
            "hovertemplate": f"{html.escape(highlight_name)}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
        })
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "height": 360,
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        "xaxis": {"title": {"text": x_title}, "zeroline": True},
        "yaxis": {"title": {"text": y_title}, "zeroline": True},
        "legend": {"orientation": "h", "y": -0.2},
    }
    return quick_figure(data, layout)


def record_figure(record: AttentionRecord, *, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the default figure of a record (the CLI's image and HTML exports), in gettext's language.
    ("layer", "head", "query", "key") -> a layer × head grid; ("word", "row", "col") -> one
    map per word; ("query", "key") -> a heatmap; one-dimensional weights -> a bar chart.
    """
    _ = gettext
    w = record.weights
    if w.ndim == 1:  # a model without attention (seq2seq no-attention) records its context vector c, not α
        value_name = "α" if record.meta.get("attention", True) else "c"
        return weight_bars(w, record.key_labels, title=record.mechanism, value_name=value_name, gettext=gettext)
    if len(record.leading_axes) == 2:
        a, b = record.leading_axes
        return heatmap_grid(
            w,
            [_("{axis} {index}").format(axis=_(a), index=i) for i in range(w.shape[0])],
            [_("{axis} {index}").format(axis=_(b), index=j) for j in range(w.shape[1])],
            query_labels=record.query_labels,
            key_labels=record.key_labels,
            title=record.mechanism,
            gettext=gettext,
        )
    if w.ndim == 3 and record.query_axis == 0:
        maps = w[None]  # [1, words, rows, cols]
        return heatmap_grid(
            maps,
            [""],
            list(record.query_labels),
            title=record.mechanism,
            cell_px=200,
            gettext=gettext,
        )
    return attention_heatmap(record, gettext=gettext)
