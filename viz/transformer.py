"""Figures for a transformer's self-attention: model view grid, per-head statistics, pair blocks.

Plotly only (no streamlit, no jax). Labels go through viz.figures' escaping.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from models.record import AttentionRecord
from models.transformer.stats import PAIR_BLOCKS, segment_masks
from viz.figures import COLORSCALE, heatmap, heatmap_grid, unique_labels


def model_view(view: AttentionRecord, *, title: str | None = None) -> go.Figure:
    """Returns every layer × head map of a ("layer", "head", "query", "key") record in one grid.

    view: models.transformer.stats.model_view_record (maps of long inputs arrive block-averaged,
    and the title says so).
    """
    if view.leading_axes != ("layer", "head"):
        raise ValueError(f"model_view needs layer and head axes, got {view.axes}")
    layers, heads = view.weights.shape[:2]
    tokens = int(view.meta.get("tokens", view.weights.shape[-1]))
    text = title or f"Model view: {layers} layers × {heads} heads, {tokens} tokens"
    if view.meta.get("block_averaged"):
        text += f" (each map block-averaged to {view.weights.shape[-2]}×{view.weights.shape[-1]})"
    fig = heatmap_grid(
        view.weights,
        [f"layer {i}" for i in range(layers)],
        [f"head {j}" for j in range(heads)],
        query_labels=view.query_labels,
        key_labels=view.key_labels,
        title=text,
        cell_px=105,
    )
    fig.update_annotations(font={"size": 11})
    fig.update_xaxes(showgrid=False, zeroline=False, ticks="")
    fig.update_yaxes(showgrid=False, zeroline=False, ticks="")
    return fig


def head_heatmap(matrix: np.ndarray, labels: Sequence[str], *, title: str) -> go.Figure:
    """Returns the heatmap of one self-attention map (or a combination of heads).  matrix [T, T]."""
    return heatmap(matrix, labels, labels, title=title, query_title="query token", key_title="key token")


def rollout_heatmap(matrix: np.ndarray, labels: Sequence[str], *, title: str) -> go.Figure:
    """Returns the heatmap of a rollout or flow map: row = a token after the last layer, column = an
    input token.  matrix [T, T]."""
    return heatmap(matrix, labels, labels, title=title, query_title="token after the last layer",
                   key_title="input token")


def _head_click_targets(values: np.ndarray, xs: list[str], ys: list[str], name: str) -> go.Scatter:
    # An invisible square marker per cell: heatmaps cannot be selected, markers can; customdata
    # holds (layer, head, value).
    layers, heads = values.shape
    grid_l, grid_h = np.meshgrid(np.arange(layers), np.arange(heads), indexing="ij")
    return go.Scatter(
        x=[xs[h] for h in grid_h.ravel()], y=[ys[layer] for layer in grid_l.ravel()], mode="markers",
        marker={"size": 28, "symbol": "square", "color": "rgba(0,0,0,0)"},
        customdata=np.stack([grid_l.ravel(), grid_h.ravel(), values.ravel()], axis=1),
        hovertemplate=("layer %{customdata[0]}, head %{customdata[1]}<br>"
                       f"{name} = %{{customdata[2]:.4f}}<br>click to open this head<extra></extra>"),
        showlegend=False, name="heads",
    )


def statistic_heatmap(
    values: np.ndarray,
    *,
    statistic: str,
    selected: tuple[int, int] | None = None,
    zmax: float | None = None,
) -> go.Figure:
    """Returns a layers × heads heatmap of one statistic, values written in the cells.

    values [L, H]. Trace 1 is an invisible marker per cell, so a click can select a head
    (plotly heatmaps cannot be selected); its customdata holds (layer, head).
    selected (layer, head) is outlined.
    """
    values = np.asarray(values, dtype=np.float32)
    layers, heads = values.shape
    ys = [f"layer {i}" for i in range(layers)]
    xs = [f"head {j}" for j in range(heads)]
    name = html.escape(statistic)
    top = float(zmax) if zmax is not None else max(float(values.max(initial=0.0)), 1e-9)
    fig = go.Figure(
        go.Heatmap(
            z=values,
            x=xs,
            y=ys,
            zmin=0.0,
            zmax=top,
            colorscale=COLORSCALE,
            colorbar={"title": {"text": name}},
            texttemplate="%{z:.2f}",
            textfont={"size": 10},
            hoverinfo="skip",
        )
    )
    fig.add_trace(_head_click_targets(values, xs, ys, name))
    if selected is not None:
        layer, head = selected
        fig.add_shape(
            type="rect", x0=head - 0.5, x1=head + 0.5, y0=layer - 0.5, y1=layer + 0.5,
            line={"color": "#d62728", "width": 3},
        )
    fig.update_layout(
        # The head labels sit on top: the title goes above them, in a taller top margin.
        title={"text": f"{name} per head", "y": 0.99, "yanchor": "top"},
        height=int(min(max(40 * layers + 170, 290), 730)),
        margin={"l": 10, "r": 10, "t": 90, "b": 10},
        # Fixed ranges: the click markers would otherwise pad the axes beyond the cells.
        xaxis={"side": "top", "tickangle": 0, "range": [-0.5, heads - 0.5], "showgrid": False},
        yaxis={"range": [layers - 0.5, -0.5], "showgrid": False},
        clickmode="event+select",
        dragmode=False,
    )
    return fig


def pair_blocks_figure(
    matrix: np.ndarray,
    labels: Sequence[str],
    segments: Sequence[int],
    *,
    shares: Mapping[str, float] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Returns the A→A, A→B, B→A and B→B blocks of one map as a 2 × 2 grid of heatmaps.

    matrix [T, T]; segments [T] (0 = sentence A, 1 = sentence B); shares: each block's mean
    row mass, written in its subplot title.
    """
    matrix = np.asarray(matrix, dtype=np.float32)
    a, b = segment_masks(segments)
    masks = {"A": a, "B": b}
    names = {name: unique_labels([x for x, m in zip(labels, masks[name]) if m]) for name in ("A", "B")}
    subtitles = []
    for block in PAIR_BLOCKS:
        share = f" (mean row mass {shares[block]:.2f})" if shares is not None else ""
        subtitles.append(f"{block}{share}")
    fig = make_subplots(rows=2, cols=2, subplot_titles=subtitles, horizontal_spacing=0.12, vertical_spacing=0.14)
    for index, block in enumerate(PAIR_BLOCKS):
        q, k = block[0], block[2]
        sub = matrix[masks[q]][:, masks[k]]
        fig.add_trace(
            go.Heatmap(
                z=sub,
                x=names[k],
                y=names[q],
                coloraxis="coloraxis",
                hovertemplate=f"{block}<br>query: %{{y}}<br>key: %{{x}}<br>α = %{{z:.4f}}<extra></extra>",
            ),
            row=index // 2 + 1,
            col=index % 2 + 1,
        )
    fig.update_yaxes(autorange="reversed", tickfont={"size": 10})
    fig.update_xaxes(tickangle=-45, tickfont={"size": 10})
    longest = max(len(names["A"]), len(names["B"]))
    fig.update_layout(
        title={"text": html.escape(title) if title else None},
        coloraxis={"colorscale": COLORSCALE, "cmin": 0.0, "cmax": max(float(matrix.max(initial=0.0)), 1e-9),
                   "colorbar": {"title": {"text": "α"}}},
        height=int(min(max(2 * (18 * longest + 120), 500), 1400)),
        margin={"l": 10, "r": 10, "t": 70 if title else 40, "b": 10},
    )
    return fig


def segment_title(segments: Sequence[int]) -> str:
    """Returns "A: n tokens, B: m tokens" for a pair."""
    a, b = segment_masks(segments)
    return f"A: {int(a.sum())} tokens, B: {int(b.sum())} tokens"



def alignment_figure(record: AttentionRecord, *, title: str | None = None) -> go.Figure:
    """Returns the sentence-alignment heatmap (sentence 1 on y, sentence 2 on x).

    For a local record (extras "window_center" [T], "window_half_width" D) each row's window
    [p_t − D, p_t + D] is outlined and p_t marked with a dot.
    """
    fig = heatmap(
        record.weights, record.query_labels, record.key_labels, title=title,
        query_title="sentence 1", key_title="sentence 2",
    )
    fig.update_layout(height=int(min(max(46 * len(record.query_labels) + 170, 380), 900)))
    if "window_center" in record.extras:
        centers = np.asarray(record.extras["window_center"], dtype=np.float32)
        half = float(record.extras["window_half_width"])
        last = len(record.key_labels) - 0.5
        for t, center in enumerate(centers):
            fig.add_shape(
                type="rect", x0=max(center - half - 0.5, -0.5), x1=min(center + half + 0.5, last),
                y0=t - 0.5, y1=t + 0.5, line={"color": "white", "width": 1, "dash": "dot"},
            )
            fig.add_shape(
                type="circle", x0=center - 0.12, x1=center + 0.12, y0=t - 0.12, y1=t + 0.12,
                fillcolor="#d62728", line={"width": 0},
            )
    return fig
