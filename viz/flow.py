"""The information-flow graph (models/flow/records.py): tokens across, the residual stream's states up, the route
traced back from one prediction drawn as edges whose width is their weight (Ferrando & Voita 2024; the LLM
Transparency Tool's picture). No streamlit, no jax; every text through `gettext`.

Rows, from the bottom: X0 (the embeddings), M0 (after block 0's attention), X1 (after its feed-forward network),
… X_L. An attention edge runs from a key token's X[l] to a query token's M[l]; the residual keeps a token in its
column; a feed-forward network's part is a square between M[l] and X[l + 1]. Hovering an edge lists the heads
that carry it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.i18n_text import Gettext, untranslated
from viz.labels import safe_label

ATTENTION_COLOR, RESIDUAL_COLOR, FFN_COLOR, NODE_COLOR = "#1f77b4", "#9e9e9e", "#ff7f0e", "#212121"
WIDTH_BINS = (0.1, 0.25, 0.5, 1.0)  # edges are drawn in a few widths: one trace per bin
MAX_HOVER_HEADS = 4


def _segments(kind_edges: Sequence[tuple[float, float, float, float, float]], color: str, name: str) -> list[go.Scatter]:
    """Returns one line trace per width bin of edges (x0, y0, x1, y1, weight)."""
    traces, low = [], 0.0
    for high in WIDTH_BINS:
        xs: list[float | None] = []
        ys: list[float | None] = []
        for x0, y0, x1, y1, weight in kind_edges:
            if low < weight <= high or (low == 0.0 and weight == 0.0):
                xs += [x0, x1, None]
                ys += [y0, y1, None]
        if xs:
            traces.append(go.Scatter(x=xs, y=ys, mode="lines", line={"color": color, "width": 1 + 8 * high},
                                     opacity=0.35 + 0.5 * high, hoverinfo="skip", name=name, showlegend=False))
        low = high
    return traces


def _head_text(parts: np.ndarray, gettext: Gettext) -> str:
    order = np.argsort(-parts)[:MAX_HOVER_HEADS]
    shown = [f"H{int(h)} {parts[h]:.3f}" for h in order if parts[h] > 0]
    return gettext("heads: {heads}").format(heads=", ".join(shown)) if shown else ""


def flow_figure(record: AttentionRecord, *, title: str | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the route of a flow record: nodes, attention, residual and feed-forward edges on the route."""
    _ = gettext
    edges, extras = np.asarray(record.weights), record.extras
    layers, tokens = edges.shape[0], edges.shape[1]
    route_edges = np.asarray(extras["route_edges"], bool)
    head_edges = np.asarray(extras["head_edges"])
    res_att, route_res_att = np.asarray(extras["residual_attention"]), np.asarray(extras["route_residual_attention"])
    has_ffn = "ffn" in extras
    attention, residual, ffn_nodes, hover = [], [], [], ([], [], [])
    for layer in range(layers):
        low, mid = 2 * layer, 2 * layer + 1
        for query, key in zip(*np.nonzero(route_edges[layer])):
            weight = float(edges[layer, query, key])
            attention.append((key, low, query, mid, weight))
            hover[0].append((key + query) / 2)
            hover[1].append(low + 0.5)
            hover[2].append(_("layer {layer}: {key} → {query}, weight {weight:.3f}").format(
                layer=layer, key=safe_label(record.key_labels[key]), query=safe_label(record.query_labels[query]),
                weight=weight) + "<br>" + _head_text(head_edges[layer, :, query, key], _))
        for token in np.nonzero(route_res_att[layer])[0]:
            residual.append((token, low, token, mid, float(res_att[layer, token])))
        if has_ffn:
            for token in np.nonzero(np.asarray(extras["route_residual_ffn"])[layer])[0]:
                residual.append((token, mid, token, mid + 1, float(extras["residual_ffn"][layer, token])))
            for token in np.nonzero(np.asarray(extras["route_ffn"])[layer])[0]:
                ffn_nodes.append((token, mid + 0.5, float(extras["ffn"][layer, token])))
        elif layer + 1 <= layers:  # no feed-forward network: M[l] is X[l + 1]
            for token in range(tokens):
                if extras["route_nodes"][layer + 1, token]:
                    residual.append((token, mid, token, mid + 1, 1.0))
    fig = go.Figure()
    for trace in _segments(residual, RESIDUAL_COLOR, _("residual")) + _segments(attention, ATTENTION_COLOR,
                                                                               _("attention")):
        fig.add_trace(trace)
    if ffn_nodes:
        fig.add_trace(go.Scatter(
            x=[t for t, _y, _w in ffn_nodes], y=[y for _t, y, _w in ffn_nodes], mode="markers", name=_("feed-forward"),
            marker={"symbol": "square", "color": FFN_COLOR, "size": [6 + 14 * w for _t, _y, w in ffn_nodes]},
            hovertext=[_("feed-forward network, weight {weight:.3f}").format(weight=w) for _t, _y, w in ffn_nodes],
            hoverinfo="text", showlegend=False))
    nodes = np.asarray(extras["route_nodes"], bool)
    mids = np.asarray(extras["route_mid"], bool)
    ys, xs = np.nonzero(nodes)
    my, mx = np.nonzero(mids)
    fig.add_trace(go.Scatter(
        x=np.concatenate([xs, mx]), y=np.concatenate([2 * ys, 2 * my + 1]), mode="markers", name=_("on the route"),
        marker={"color": NODE_COLOR, "size": 7}, hoverinfo="skip", showlegend=False))
    # One invisible marker per attention edge of the route, in [layer, query, key] order: its hover text, and
    # its weight as customdata (the record's extras["route_weights"]).
    fig.add_trace(go.Scatter(x=hover[0], y=hover[1], mode="markers", marker={"size": 10, "opacity": 0},
                             customdata=[w for *_, w in attention], hovertext=hover[2], hoverinfo="text",
                             showlegend=False, name="edge weights"))
    levels = [f"X{i // 2}" if i % 2 == 0 else f"M{i // 2}" for i in range(2 * layers + 1)]
    ticks = [safe_label(label) for label in record.key_labels]
    fig.update_layout(
        title=title, height=max(320, 60 * layers + 180), hovermode="closest", showlegend=False,
        xaxis={"tickmode": "array", "tickvals": list(range(tokens)), "ticktext": ticks, "tickangle": -60,
               "range": [-0.6, tokens - 0.4], "title": _("token")},
        yaxis={"tickmode": "array", "tickvals": list(range(len(levels))), "ticktext": levels,
               "range": [-0.5, len(levels) - 0.5], "title": _("residual stream (X: block input, M: after attention)")},
        margin={"l": 70, "r": 20, "t": 60 if title else 20, "b": 90},
    )
    return fig


def head_weights_figure(record: AttentionRecord, *, title: str | None = None,
                        gettext: Gettext = untranslated) -> go.Figure:
    """Returns the heads' total edge weight [layer, head], the heads on the route outlined."""
    _ = gettext
    totals = np.asarray(record.extras["head_totals"])
    on_route = np.asarray(record.extras["route_heads"], bool)
    layers, heads = totals.shape
    fig = go.Figure(go.Heatmap(
        z=totals, x=[f"H{h}" for h in range(heads)], y=[f"L{layer}" for layer in range(layers)],
        colorscale="Blues", colorbar={"title": _("weight")},
        hovertemplate=_("layer %{y}, head %{x}: total edge weight %{z:.3f}") + "<extra></extra>"))
    rows, cols = np.nonzero(on_route)
    fig.add_trace(go.Scatter(x=[f"H{h}" for h in cols], y=[f"L{layer}" for layer in rows], mode="markers",
                             marker={"symbol": "square-open", "size": 22, "color": "#d62728", "line": {"width": 3}},
                             hoverinfo="skip", showlegend=False, name=_("on the route")))
    fig.update_layout(title=title, height=max(220, 40 * layers + 120), margin={"t": 60 if title else 20})
    return fig
