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
from models.transformer.sentence_pairs import PAIR_BLOCKS, segment_masks
from viz.figures import COLORSCALE, heatmap
from viz.i18n_text import Gettext, untranslated
from viz.labels import unique_labels
from viz.plotly_json import quick_figure

GAP = 1  # empty rows and columns between the maps of the model view


def model_view_cell(shape: tuple[int, int], layer: int, head: int) -> tuple[slice, slice]:
    """Returns the (rows, columns) of the model view's one heatmap that hold map (layer, head), for
    maps of shape (queries, keys)."""
    q, k = shape
    top, left = layer * (q + GAP), head * (k + GAP)
    return slice(top, top + q), slice(left, left + k)


def _grid_labels(labels, positions: bool) -> list[str]:
    shown = unique_labels(["␣" if not str(label).strip() else label for label in labels])
    return [f"{label} ({i})" for i, label in enumerate(shown)] if positions else shown


def _gap(index: int) -> str:
    # The category of the empty line after band `index`: never shown (hoverongaps is off), no word in it,
    # and unlike any label, which starts with its band's name.
    return f"\u2003{index}"


def _between(start: int, size: int) -> float:
    # The middle of a band of `size` categories from `start`, moved half a row off any category.
    middle = start + (size - 1) / 2
    return middle + 0.5 if middle.is_integer() else middle


def model_view(view: AttentionRecord, *, title: str | None = None, height: int | None = None,
               gettext: Gettext = untranslated) -> go.Figure:
    """Returns every layer × head map of a ("layer", "head", "query", "key") record as one heatmap:
    layers are bands of rows, heads bands of columns, with an empty line between the maps
    (model_view_cell says where each map lies). Hover names the layer, the head and both tokens.

    One heatmap instead of a grid of 72 subplots: plotly.js drew a 6 × 12 grid of 64 × 64 maps in
    ~1,000 ms and the same cells as one heatmap in ~230 ms (docs/PERFORMANCE.md, "The 512-token
    views").

    view: models.heads.statistics.model_view_record (maps of long inputs arrive block-averaged,
    and the title says so).
    """
    if view.leading_axes != ("layer", "head"):
        raise ValueError(f"model_view needs layer and head axes, got {view.axes}")
    _ = gettext
    maps = np.asarray(view.weights, dtype=np.float32)
    layers, heads, q, k = maps.shape
    tokens = int(view.meta.get("tokens", maps.shape[-1]))
    text = title or _("Model view: {layers} layers × {heads} heads, {tokens} tokens").format(
        layers=layers, heads=heads, tokens=tokens)
    if view.meta.get("block_averaged"):
        text += " " + _("(each map block-averaged to {rows}×{columns})").format(rows=q, columns=k)
    z = np.full((layers * (q + GAP) - GAP, heads * (k + GAP) - GAP), np.nan, dtype=np.float32)
    for layer in range(layers):
        for head in range(heads):
            rows, cols = model_view_cell((q, k), layer, head)
            z[rows, cols] = maps[layer, head]
    # Each row and column names its token and, unless the maps were block-averaged (their labels
    # give the range), its position: repeated tokens (the characters of a date) and a space, shown
    # as ␣, are told apart in the hover.
    positions = not view.meta.get("block_averaged")
    queries, keys = (_grid_labels(labels, positions) for labels in (view.query_labels, view.key_labels))
    ys, xs = [], []
    layer_names = [_("layer {number}").format(number=layer) for layer in range(layers)]
    head_names = [_("head {number}").format(number=head) for head in range(heads)]
    for layer in range(layers):
        ys += [f"{layer_names[layer]} · {label}" for label in queries] + [_gap(layer)] * (GAP if layer < layers - 1 else 0)
    for head in range(heads):
        xs += [f"{head_names[head]} · {label}" for label in keys] + [_gap(head)] * (GAP if head < heads - 1 else 0)
    # Each band's tick between two rows (or columns), by position: a tick on a category would make
    # plotly.js's hover %{y} / %{x} show the tick text ("layer 0") for that row instead of its token.
    y_ticks = [_between(model_view_cell((q, k), layer, 0)[0].start, q) for layer in range(layers)]
    x_ticks = [_between(model_view_cell((q, k), 0, head)[1].start, k) for head in range(heads)]
    trace = {
        "type": "heatmap", "z": z, "x": xs, "y": ys, "zmin": 0.0, "zmax": max(float(np.nanmax(z, initial=0.0)), 1e-9),
        "colorscale": COLORSCALE, "colorbar": {"title": {"text": "α"}}, "hoverongaps": False,
        "hovertemplate": f"{_('query')}: %{{y}}<br>{_('key')}: %{{x}}<br>α = %{{z:.4f}}<extra></extra>",
    }
    axis = {"type": "category", "showgrid": False, "zeroline": False, "ticks": "", "tickmode": "array",
            "tickfont": {"size": 13}}
    layout = {
        "title": {"text": html.escape(text)},
        "height": height or int(min(max(105 * layers + 100, 240), 1400)),
        "margin": {"l": 10, "r": 10, "t": 90, "b": 10},
        "xaxis": {**axis, "side": "top", "tickvals": x_ticks, "ticktext": head_names},
        "yaxis": {**axis, "range": [len(ys) - 0.5, -0.5], "tickvals": y_ticks,  # top down (see viz.figures.heatmap)
                  "ticktext": layer_names},
        "plot_bgcolor": "white",
    }
    return quick_figure([trace], layout)


def head_heatmap(matrix: np.ndarray, labels: Sequence[str], *, title: str, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the heatmap of one self-attention map (or a combination of heads).  matrix [T, T]."""
    _ = gettext
    return heatmap(matrix, labels, labels, title=title, query_title=_("query token"), key_title=_("key token"),
                   gettext=gettext)


def rollout_heatmap(matrix: np.ndarray, labels: Sequence[str], *, title: str,
                    gettext: Gettext = untranslated) -> go.Figure:
    """Returns the heatmap of a rollout or flow map: row = a token after the last layer, column = an
    input token.  matrix [T, T]."""
    _ = gettext
    return heatmap(matrix, labels, labels, title=title, query_title=_("token after the last layer"),
                   key_title=_("input token"), gettext=gettext)


def _head_click_targets(values: np.ndarray, xs: list[str], ys: list[str], name: str, gettext: Gettext) -> go.Scatter:
    # An invisible square marker per cell: heatmaps cannot be selected, markers can; customdata
    # holds (layer, head, value).
    layers, heads = values.shape
    grid_l, grid_h = np.meshgrid(np.arange(layers), np.arange(heads), indexing="ij")
    return go.Scatter(
        x=[xs[h] for h in grid_h.ravel()], y=[ys[layer] for layer in grid_l.ravel()], mode="markers",
        marker={"size": 28, "symbol": "square", "color": "rgba(0,0,0,0)"},
        customdata=np.stack([grid_l.ravel(), grid_h.ravel(), values.ravel()], axis=1),
        hovertemplate=(gettext("layer %{customdata[0]}, head %{customdata[1]}") + "<br>"
                       f"{name} = %{{customdata[2]:.4f}}<br>" + gettext("click to open this head") + "<extra></extra>"),
        showlegend=False, name=gettext("heads"),
    )


def statistic_heatmap(
    values: np.ndarray,
    *,
    statistic: str,
    selected: tuple[int, int] | None = None,
    zmax: float | None = None,
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns a layers × heads heatmap of one statistic, values written in the cells.

    values [L, H]. Trace 1 is an invisible marker per cell, so a click can select a head
    (plotly heatmaps cannot be selected); its customdata holds (layer, head).
    selected (layer, head) is outlined.
    """
    values = np.asarray(values, dtype=np.float32)
    layers, heads = values.shape
    _ = gettext
    ys = [_("layer {number}").format(number=i) for i in range(layers)]
    xs = [_("head {number}").format(number=j) for j in range(heads)]
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
            textfont={"size": 13},
            hoverinfo="skip",
        )
    )
    fig.add_trace(_head_click_targets(values, xs, ys, name, gettext))
    if selected is not None:
        layer, head = selected
        fig.add_shape(
            type="rect", x0=head - 0.5, x1=head + 0.5, y0=layer - 0.5, y1=layer + 0.5,
            line={"color": "#d62728", "width": 3},
        )
    fig.update_layout(
        # The head labels sit on top: the title goes above them, in a taller top margin.
        title={"text": _("{statistic} per head").format(statistic=name), "y": 0.99, "yanchor": "top"},
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
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns the A→A, A→B, B→A and B→B blocks of one map as a 2 × 2 grid of heatmaps.

    matrix [T, T]; segments [T] (0 = sentence A, 1 = sentence B); shares: each block's mean
    row mass, written in its subplot title.
    """
    _ = gettext
    matrix = np.asarray(matrix, dtype=np.float32)
    a, b = segment_masks(segments)
    masks = {"A": a, "B": b}
    names = {name: unique_labels([x for x, m in zip(labels, masks[name]) if m]) for name in ("A", "B")}
    subtitles = []
    for block in PAIR_BLOCKS:
        subtitles.append(block if shares is None else _("{block} (mean row mass {share})").format(
            block=block, share=f"{shares[block]:.2f}"))
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
                hovertemplate=f"{block}<br>{_('query')}: %{{y}}<br>{_('key')}: %{{x}}<br>α = %{{z:.4f}}<extra></extra>",
            ),
            row=index // 2 + 1,
            col=index % 2 + 1,
        )
    # Category axes, so that tokens like "1" and "2" stay names (see viz.figures.heatmap).
    fig.update_yaxes(type="category", autorange="reversed", tickfont={"size": 13})
    fig.update_xaxes(type="category", tickangle=-45, tickfont={"size": 13})
    longest = max(len(names["A"]), len(names["B"]))
    fig.update_layout(
        title={"text": html.escape(title) if title else None},
        coloraxis={"colorscale": COLORSCALE, "cmin": 0.0, "cmax": max(float(matrix.max(initial=0.0)), 1e-9),
                   "colorbar": {"title": {"text": "α"}}},
        height=int(min(max(2 * (18 * longest + 120), 500), 1400)),
        margin={"l": 10, "r": 10, "t": 70 if title else 40, "b": 10},
    )
    return fig


def segment_title(segments: Sequence[int], gettext: Gettext = untranslated) -> str:
    """Returns "A: n tokens, B: m tokens" for a pair."""
    a, b = segment_masks(segments)
    return gettext("A: {a} tokens, B: {b} tokens").format(a=int(a.sum()), b=int(b.sum()))



def alignment_figure(record: AttentionRecord, *, title: str | None = None,
                     gettext: Gettext = untranslated) -> go.Figure:
    """Returns the sentence-alignment heatmap (sentence 1 on y, sentence 2 on x).

    For a local record (extras "window_center" [T], "window_half_width" D) each row's window
    [p_t − D, p_t + D] is outlined and p_t marked with a dot.
    """
    fig = heatmap(
        record.weights, record.query_labels, record.key_labels, title=title,
        query_title=gettext("sentence 1"), key_title=gettext("sentence 2"), gettext=gettext,
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
