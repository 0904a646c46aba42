"""Figures of the Transformer page: one head's map, the head grid, a decoding step, the rollout.

Built on viz/seq2seq.py's alignment_heatmap (numeric positions with the characters as ticks,
so repeated characters stay apart and spaces show as "␣") and viz/figures.py's heatmap_grid.
No streamlit, no jax.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.figures import heatmap_grid_parts
from viz.plotly_json import quick_figure
from viz.seq2seq import alignment_heatmap

# (x, y) axis titles of each kind of record (record.meta["attention"]).
AXIS_TITLES = {
    "encoder": ("key: input character", "query: input character"),
    "decoder": ("key: what the decoder read (<s>, then the output so far)", "query: output character being written"),
    "cross": ("key: input character", "query: output character being written"),
}
MASKED_COLOR = "#f0f0f0"


def attention_map(
    record: AttentionRecord, *, title: str | None = None, truth=None, height: int | None = None
) -> go.Figure:
    """Returns the heatmap of one ("query", "key") map of an encoder, decoder or cross record.

    Decoder maps draw the masked cells (key after the query) blank, not as weight 0: the model
    could not look there. truth: the true source span (start, end) of each output character
    (cross maps), drawn as outlined cells.
    """
    kind = record.meta.get("attention", "cross")
    x_title, y_title = AXIS_TITLES.get(kind, AXIS_TITLES["cross"])
    decoder = kind == "decoder"
    masked = np.triu(np.ones(record.matrix().shape, bool), k=1) if decoder else None
    return alignment_heatmap(record, truth=truth, title=title, height=height, x_title=x_title, y_title=y_title,
                             masked=masked, background=MASKED_COLOR if decoder else None)


def head_grid(record: AttentionRecord, *, title: str | None = None) -> go.Figure:
    """Returns every layer × head map of a ("layer", "head", "query", "key") record in one grid.

    It does not depend on which head is shown large above it: a figure whose spec is unchanged is
    not drawn again by the browser, so picking another layer or head redraws one figure, not two.
    """
    if record.leading_axes != ("layer", "head"):
        raise ValueError(f"head_grid needs layer and head axes, got {record.axes}")
    layers, heads = record.weights.shape[:2]
    cols = [f"head {j}" for j in range(heads)]
    rows = [f"layer {i}" for i in range(layers)]
    data, layout = heatmap_grid_parts(record.weights, rows, cols, query_labels=record.query_labels,
                                      key_labels=record.key_labels, title=title, cell_px=150, zmax=1.0)
    for annotation in layout.get("annotations", []):
        annotation["font"] = {**annotation.get("font", {}), "size": 11}
    # Characters such as "2" and "0" would make plotly guess numeric axes and merge the cells.
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            axis["type"] = "category"
    return quick_figure(data, layout)


def decoding_step_figure(record: AttentionRecord, *, title: str | None = None) -> go.Figure:
    """Returns every head's weights at one decoding step: rows = (layer, head), columns = keys.

    record: models.encdec.records.decoding_step_record (axes ("head", "key")).
    """
    key_title = ("what the decoder read so far (<s>, then the output)" if record.meta.get("attention") == "decoder"
                 else "input character")
    return alignment_heatmap(record, title=title, height=int(min(max(260, 30 * record.weights.shape[0] + 150), 520)),
                             x_title=key_title, y_title="layer · head")


def rollout_figure(record: AttentionRecord, *, title: str | None = None) -> go.Figure:
    """Returns the heatmap of an encoder rollout or flow record (row: a character after the last layer)."""
    return alignment_heatmap(record, title=title, zmax=None, x_title="input character (embedding)",
                             y_title="input character after the last encoder layer")
