"""Figures of the page "Is attention an explanation?": maps side by side over the same input (α beside each
attribution method, or α beside the α̃ of a 2019 test), each row drawn as its share of the row's |mass| so that
signed attributions and probabilities share one colour scale; the truth, where a model knows it, outlined.
No streamlit, no jax; every text through `gettext`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from models.explain.measures import shares
from viz.figures import COLORSCALE
from viz.i18n_text import Gettext, untranslated
from viz.labels import safe_label, unique_labels

TRUTH_COLOR = "#d62728"
MAX_COLUMNS = 3  # panels per row on a desk; a phone stacks the figure's rows


def panels_figure(maps: Sequence[np.ndarray], titles: Sequence[str], query_labels: Sequence[object],
                  key_labels: Sequence[object], *, truth: np.ndarray | None = None, title: str | None = None,
                  gettext: Gettext = untranslated) -> go.Figure:
    """Returns one heatmap per map [Tq, Tk] (same labels), colour = the entry's share of its row's |mass|, hover =
    the raw value; truth bool [Tq, Tk] outlined in every panel."""
    _ = gettext
    count = len(maps)
    columns = min(MAX_COLUMNS, count)
    rows = -(-count // columns)
    ys, xs = unique_labels(query_labels), unique_labels(key_labels)
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[safe_label(t) for t in titles],
                        horizontal_spacing=0.04, vertical_spacing=min(0.2, 0.3 / max(rows, 1)))
    marks = None if truth is None else np.nonzero(np.asarray(truth, bool))
    for index, raw in enumerate(maps):
        raw = np.asarray(raw, np.float32)
        row, col = divmod(index, columns)
        fig.add_trace(go.Heatmap(
            z=shares(raw).astype(np.float32), x=xs, y=ys, customdata=raw, coloraxis="coloraxis",
            hovertemplate=(f"{safe_label(titles[index])}<br>{_('output')}: %{{y}}<br>{_('input')}: %{{x}}<br>"
                           + _("value {value}, share of the row {share}").format(value="%{customdata:.4f}",
                                                                                 share="%{z:.3f}")
                           + "<extra></extra>")), row=row + 1, col=col + 1)
        if marks is not None and len(marks[0]):
            fig.add_trace(go.Scatter(
                x=[xs[j] for j in marks[1]], y=[ys[i] for i in marks[0]], mode="markers", showlegend=False,
                marker={"symbol": "square-open", "size": 11, "color": TRUTH_COLOR, "line": {"width": 2}},
                hoverinfo="skip", name=_("truth")), row=row + 1, col=col + 1)
    for axis in fig.layout:
        if axis.startswith("yaxis"):
            fig.layout[axis].update(type="category", autorange="reversed")
        elif axis.startswith("xaxis"):
            fig.layout[axis].update(type="category", tickangle=-60)
    height = int(min(1400, rows * (22 * len(ys) + 150) + 60))
    fig.update_layout(
        title={"text": title}, height=max(height, 300), showlegend=False,
        coloraxis={"colorscale": COLORSCALE, "cmin": 0.0, "cmax": 1.0,
                   "colorbar": {"title": {"text": _("share")}}},
        margin={"l": 10, "r": 10, "t": 70 if title else 40, "b": 10},
    )
    return fig


def outputs_bars(values: Sequence[float], labels: Sequence[object], names: Sequence[str], series: Sequence[str], *,
                 title: str | None = None, value_name: str = "p", gettext: Gettext = untranslated) -> go.Figure:
    """Returns grouped bars: for each series (e.g. "under α", "under α̃"), one bar per label. values [S, N]."""
    values = np.asarray(values, np.float32)
    xs = unique_labels(labels)
    fig = go.Figure([go.Bar(x=xs, y=values[i], name=safe_label(series[i]),
                            hovertemplate=f"%{{x}}: {value_name} = %{{y:.4f}}<extra>{safe_label(series[i])}</extra>")
                     for i in range(len(series))])
    fig.update_layout(title={"text": title}, barmode="group", height=300,
                      yaxis={"title": {"text": value_name}}, xaxis={"type": "category",
                                                                   "title": {"text": gettext(names[0]) if names else ""}},
                      margin={"l": 10, "r": 10, "t": 60 if title else 30, "b": 10},
                      legend={"orientation": "h", "y": -0.3})
    return fig
