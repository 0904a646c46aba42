"""Figures of the seq2seq page: the α heatmap with the local window and the true alignment, the
context vector c of the models without attention, and the bottleneck curve (exact match against
input length).

Positions are numeric on both axes (tick text = the characters), so the window centre p_t —
a real number — can be drawn between characters. No streamlit, no jax.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.figures import COLORSCALE
from viz.i18n_text import Gettext, untranslated
from viz.labels import safe_label
from viz.plotly_json import quick_figure

WINDOW_COLOR = "#ff7f0e"
TRUTH_COLOR = "#e31a1c"


def _tick_text(labels: Sequence[object]) -> list[str]:
    # Spaces would be invisible ticks: show them as "␣".
    return [safe_label("␣" if str(x) == " " else x) for x in labels]


def _hover_name(name: str) -> str:
    # A name written into a hovertemplate: HTML-escaped like a title, "%" written as an entity so
    # that a name can never open a %{…} field; "" for none, else the name and a space.
    return html.escape(name).replace("%", "&#37;") + " " if name else ""


def _truth_trace(truth: Sequence[tuple[int, int]], query_ticks: Sequence[str], key_ticks: Sequence[str],
                 query_name: str, key_name: str, gettext: Gettext) -> dict:
    # The true source span of each output character, as outlined cells. Hover reads the cell as
    # the heatmap's does, from customdata (row label, column label, row, column): %{x} and %{y}
    # would show the axes' tick text, i.e. the characters, not the positions.
    _ = gettext
    num_queries, num_keys = len(query_ticks), len(key_ticks)
    row, pos = html.escape(_("row")), html.escape(_("pos"))
    cells = [(j, i) for i, (start, end) in enumerate(truth[:num_queries]) for j in range(start, end)
             if start >= 0 and j < num_keys]
    return {
        "type": "scatter", "x": [c[0] for c in cells], "y": [c[1] for c in cells], "mode": "markers",
        "marker": {"symbol": "square-open", "size": 16, "color": TRUTH_COLOR, "line": {"width": 2}},
        "name": html.escape(_("true alignment")), "customdata": [[query_ticks[i], key_ticks[j], i, j] for j, i in cells],
        "hovertemplate": f"{_hover_name(query_name)}%{{customdata[0]}} ({row} %{{customdata[2]}})<br>"
        f"{_hover_name(key_name)}%{{customdata[1]}} ({pos} %{{customdata[3]}})<br>"
        f"{html.escape(_('in the true span'))}<extra></extra>",
    }


def _windows(centers: np.ndarray, half_width: float, gettext: Gettext) -> tuple[list[dict], dict]:
    # Each row's window [p_t − D, p_t + D] as a dotted band (shapes), and p_t as a diamond (a trace).
    shapes = [{"type": "rect", "x0": float(p - half_width - 0.5), "x1": float(p + half_width + 0.5),
               "y0": i - 0.5, "y1": i + 0.5, "line": {"color": WINDOW_COLOR, "width": 1.5, "dash": "dot"},
               "fillcolor": "rgba(0,0,0,0)"} for i, p in enumerate(centers)]
    marker = {
        "type": "scatter", "x": centers, "y": np.arange(len(centers)), "mode": "markers",
        "name": html.escape(gettext("p_t (window ±{half_width})").format(half_width=f"{half_width:g}")),
        "marker": {"symbol": "diamond", "size": 9, "color": WINDOW_COLOR, "line": {"color": "white", "width": 1}},
        "hovertemplate": "p_t = %{x:.2f}<extra></extra>",
    }
    return shapes, marker


def alignment_heatmap(
    record: AttentionRecord,
    *,
    truth: Sequence[tuple[int, int]] | None = None,
    title: str | None = None,
    zmax: float | None = 1.0,
    height: int | None = None,
    x_title: str | None = None,
    y_title: str | None = None,
    masked: np.ndarray | None = None,
    background: str | None = None,
    query_name: str | None = None,
    key_name: str | None = None,
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns α (output characters × input characters) as a heatmap.

    Local records (extras window_center [10], window_half_width) also get a p_t marker per
    row and the band [p_t − D, p_t + D]. truth: the true source span (start, end) of each
    output character, (-1, -1) for none, drawn as outlined cells. masked: bool [Tq, Tk], cells
    drawn blank (not as 0) over `background`. Axis titles are plain text (escaped here).

    Hover names a cell "{query_name} <row label> (row i)", "{key_name} <column label> (pos j)":
    the names say what the rows and columns are (plain text, escaped here; "" shows the label
    alone), and i, j are the true indices, read from customdata as the labels are (%{y} and %{x}
    would show the axes' tick text, i.e. the labels again). Titles and names left None are the
    defaults, "input character", "output character", "output" and "input", in gettext's language.
    """
    _ = gettext
    x_title = _("input character") if x_title is None else x_title
    y_title = _("output character") if y_title is None else y_title
    query_name = _("output") if query_name is None else query_name
    key_name = _("input") if key_name is None else key_name
    row, pos = html.escape(_("row")), html.escape(_("pos"))
    weights = record.matrix()  # [Tq, Tk]
    tq, tk = weights.shape
    xs, ys = np.arange(tk), np.arange(tq)
    xt, yt = _tick_text(record.key_labels), _tick_text(record.query_labels)
    z = weights if masked is None else np.where(masked, np.nan, weights.astype(np.float64))
    data = [{
        "type": "heatmap", "z": z, "x": xs, "y": ys, "zmin": 0.0,
        "zmax": float(zmax) if zmax is not None else max(float(weights.max(initial=0.0)), 1e-9),
        "colorscale": COLORSCALE, "colorbar": {"title": {"text": "α"}}, "name": "α",
        # [Tq, Tk, 4]: (row label, column label, row index, column index) of each cell.
        "customdata": np.array([[[yt[i], xt[j], i, j] for j in range(tk)] for i in range(tq)], dtype=object),
        "hovertemplate": f"{_hover_name(query_name)}%{{customdata[0]}} ({row} %{{customdata[2]}})<br>"
        f"{_hover_name(key_name)}%{{customdata[1]}} ({pos} %{{customdata[3]}})<br>α = %{{z:.4f}}<extra></extra>",
    }]
    if truth is not None:
        data.append(_truth_trace(truth, yt, xt, query_name, key_name, gettext))
    shapes = []
    centers = record.extras.get("window_center")
    if centers is not None:
        shapes, marker = _windows(np.asarray(centers, np.float32), float(record.extras.get("window_half_width", 0)),
                                  gettext)
        data.append(marker)
    # plotly.js centres the title in the top margin, and the legend fills the margin's last 29 px:
    # 34 px more keep them apart.
    legend = truth is not None or centers is not None
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "height": height or int(min(max(300, 26 * tq + 170), 700)),
        "margin": {"l": 10, "r": 10, "t": (50 if title else 20) + (34 if title and legend else 0), "b": 10},
        "xaxis": {"title": {"text": html.escape(x_title)}, "tickmode": "array", "tickvals": xs.tolist(), "ticktext": xt,
                  "range": [-0.5, tk - 0.5], "tickangle": 0},
        "yaxis": {"title": {"text": html.escape(y_title)}, "tickmode": "array", "tickvals": ys.tolist(), "ticktext": yt,
                  "range": [tq - 0.5, -0.5]},
        # Over the plot, under the title (viz.margins reserves its room): under the plot at y = -0.18
        # it lay across the x axis's title.
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
        "showlegend": legend,
        "shapes": shapes,
    }
    if background:
        layout["plot_bgcolor"] = background
    return quick_figure(data, layout)


CONTEXT_POSITIVE, CONTEXT_NEGATIVE = "#1f77b4", "#d62728"
MODEL_COLORS = {"no-attention": "#d62728", "no-attention-mean": "#ff9896", "bahdanau": "#1f77b4",
                "luong-general": "#2ca02c"}


def context_bars(context: np.ndarray, labels: Sequence[object], *, title: str | None = None,
                 height: int | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the context vector c [n] of a model without attention as bars, one per unit (blue
    positive, red negative): the one vector its decoder reads at every output step."""
    _ = gettext
    values = np.asarray(context, np.float32).reshape(-1)
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} values")
    xs = np.arange(len(values))
    ticks = _tick_text(labels)
    stride = max(1, len(values) // 16)
    data = [{
        "type": "bar", "x": xs, "y": values, "name": "c",
        "marker": {"color": [CONTEXT_POSITIVE if v >= 0 else CONTEXT_NEGATIVE for v in values]},
        "customdata": ticks, "hovertemplate": f"{html.escape(_('unit'))} %{{customdata}}<br>c = %{{y:.4f}}<extra></extra>",
    }]
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "height": height or 320,
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        "xaxis": {"title": {"text": html.escape(_("unit of c (forward GRU, then backward)"))}, "tickmode": "array",
                  "tickvals": xs[::stride].tolist(), "ticktext": ticks[::stride], "range": [-0.5, len(values) - 0.5]},
        "yaxis": {"title": {"text": "c"}, "range": [-1.05, 1.05]},
        "showlegend": False,
    }
    return quick_figure(data, layout)


def bottleneck_curve(buckets: Sequence[str], exact_match: dict[str, Sequence[float]], *,
                     names: dict[str, str] | None = None, title: str | None = None,
                     first_past_training: int | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns exact match (0–1, drawn in %) against input length, one line per model.

    buckets: the length buckets' names (x axis); exact_match: model id -> one value per bucket;
    names: model id -> legend name (default: the id); first_past_training: the index of the first
    bucket longer than any training input, from which on the plot is shaded and labelled so."""
    _ = gettext
    characters, exact = html.escape(_("characters")), html.escape(_("exact match"))
    data = []
    # Each later line is drawn narrower than the one before, dotted, with an open marker of another shape,
    # so that lines on the same values (two attention models at 100 %) both stay visible: a wide solid line
    # with filled circles, and over it a dotted line of open diamonds.
    symbols = ("circle", "square", "diamond-open", "triangle-up-open")
    for rank, (model, values) in enumerate(exact_match.items()):
        values = np.asarray(values, np.float64)
        if len(values) != len(buckets):
            raise ValueError(f"{model}: {len(values)} values for {len(buckets)} buckets")
        name = (names or {}).get(model, model)
        data.append({
            "type": "scatter", "mode": "lines+markers", "x": list(buckets), "y": 100 * values, "name": html.escape(name),
            "line": {"color": MODEL_COLORS.get(model), "width": max(2, 6 - 2 * rank),
                     "dash": "dash" if "no-attention" in model else "solid" if rank < 2 else "dot"},
            "marker": {"size": max(8, 12 - 2 * rank), "symbol": symbols[rank % len(symbols)],
                       "line": {"width": 2, "color": MODEL_COLORS.get(model)}},
            "hovertemplate": f"{_hover_name(name)}<br>%{{x}} {characters}<br>{exact} %{{y:.1f}}%<extra></extra>",
        })
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "height": 380,
        "margin": {"l": 10, "r": 10, "t": (50 if title else 20) + 34, "b": 10},
        "xaxis": {"title": {"text": html.escape(_("input length (characters)"))}, "type": "category"},
        "yaxis": {"title": {"text": html.escape(_("exact match (%)"))}, "range": [0, 103]},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
        "showlegend": True,
    }
    if first_past_training is not None and 0 <= first_past_training < len(buckets):
        # On a category axis bucket i sits at x = i: the shade starts half-way to the bucket before.
        layout["shapes"] = [{"type": "rect", "xref": "x", "yref": "paper", "x0": first_past_training - 0.5,
                             "x1": len(buckets) - 0.5, "y0": 0, "y1": 1, "fillcolor": "rgba(85,88,103,0.08)",
                             "line": {"width": 0}, "layer": "below"}]
        layout["annotations"] = [{"xref": "x", "yref": "paper", "x": first_past_training - 0.45, "y": 0.02,
                                  "xanchor": "left", "yanchor": "bottom", "showarrow": False,
                                  "text": html.escape(_("longer than any training input"))}]
    return quick_figure(data, layout)
