"""Figures of a vision transformer's records (models/vit/records.py): one map painted over the photo the model
saw, every head of one layer side by side (DINO's picture), the high-norm "artifact" patches circled."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from models.record import AttentionRecord
from viz.figures import COLORSCALE
from viz.i18n_text import Gettext, untranslated
from viz.images import patch_attention_figure


def _grid_of(record: AttentionRecord, layer: int, head: int) -> np.ndarray:
    # [rows, cols] of a ("layer", "head", "query", "row", "col") or ("query", "row", "col") record
    return np.asarray(record.weights[layer, head, 0] if record.axes[0] == "layer" else record.weights[0])


def _artifact_markers(marked: np.ndarray, dy: float, dx: float, gettext: Gettext) -> go.Scatter:
    rows, cols = np.nonzero(marked)
    return go.Scatter(
        x=(cols + 0.5) * dx - 0.5, y=(rows + 0.5) * dy - 0.5, mode="markers", name="artifacts", showlegend=False,
        marker={"size": 18, "symbol": "circle-open", "color": "#ff00ff", "line": {"width": 3}},
        hovertemplate=gettext("high-norm patch (an artifact, Darcet et al. 2024)") + "<extra></extra>",
    )


def vit_map_figure(record: AttentionRecord, *, layer: int = 0, head: int = 0, title: str | None = None,
                   gettext: Gettext = untranslated) -> go.Figure:
    """Returns the photo the model saw with one map of a grid record painted over it: [CLS]'s or a patch's
    attention in one layer and head, or rollout; the query patch outlined, artifact patches circled, every patch
    clickable (its customdata: the patch index)."""
    photo = np.asarray(record.extras["photo"])
    weights = _grid_of(record, layer, head)
    query = record.query_labels[0]
    patch = query.startswith("r") and "c" in query
    row, col = (int(x) for x in query[1:].split("c")) if patch else (0, 0)
    fig = patch_attention_figure(photo, weights, (row, col), title=title, gettext=gettext)
    if not patch:
        fig.layout.shapes = ()  # [CLS] is no patch: nothing to outline
    marked = np.asarray(record.extras.get("artifacts", np.zeros_like(weights)))
    if marked.any():
        fig.add_trace(_artifact_markers(marked, photo.shape[0] / weights.shape[0], photo.shape[1] / weights.shape[1],
                                        gettext))
    return fig


def vit_heads_figure(record: AttentionRecord, *, layer: int, columns: int = 6, title: str | None = None,
                     gettext: Gettext = untranslated) -> go.Figure:
    """Returns one small heatmap per head of `layer` of a ("layer", "head", "query", "row", "col") record (DINO's
    picture of [CLS] attention), each on its own colour range."""
    heads = record.weights.shape[1]
    columns = min(columns, heads)
    rows = -(-heads // columns)
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[gettext("head {head}").format(head=h)
                                                                 for h in range(heads)],
                        horizontal_spacing=0.01, vertical_spacing=0.06)
    for h in range(heads):
        grid = _grid_of(record, layer, h)
        fig.add_trace(go.Heatmap(z=grid, colorscale=COLORSCALE, showscale=False, name=f"head {h}",
                                 hovertemplate="r%{y}c%{x}: %{z:.4f}<extra></extra>"),
                      row=h // columns + 1, col=h % columns + 1)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, autorange="reversed", scaleanchor="x")
    fig.update_layout(title={"text": html.escape(title) if title else None}, height=180 * rows + 60,
                      margin={"l": 10, "r": 10, "t": 60 if title else 30, "b": 10})
    return fig
