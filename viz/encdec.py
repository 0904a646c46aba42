"""Figures of the Transformer page: one head's map, the head grid, a decoding step, the rollout.

Built on viz/seq2seq.py's alignment_heatmap (numeric positions with the characters as ticks,
so repeated characters stay apart and spaces show as "␣") and viz/transformer.py's model_view.
No streamlit, no jax.
"""

from __future__ import annotations

import dataclasses
import html
import re

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.i18n_text import N_, Gettext, untranslated
from viz.seq2seq import alignment_heatmap
from viz.transformer import model_view

# (x, y) axis titles of each kind of record (record.meta["attention"]).
AXIS_TITLES = {
    "encoder": (N_("key: input character"), N_("query: input character")),
    "decoder": (N_("key: what the decoder read (<s>, then the output so far)"),
                N_("query: output character being written")),
    "cross": (N_("key: input character"), N_("query: output character being written")),
}
# (query, key) names the hover gives a cell's row and column, by kind of record: what the axis
# titles above say, short. (viz.seq2seq.alignment_heatmap's own defaults, "output" and "input",
# would call the encoder's rows outputs and the decoder's keys inputs.)
HOVER_NAMES = {
    "encoder": (N_("query: input"), N_("key: input")),
    "decoder": (N_("query: output"), N_("key: read so far")),
    "cross": (N_("query: output"), N_("key: input")),
}
MASKED_COLOR = "#f0f0f0"
HEAD_ROW = re.compile(r"layer (\d+) · head (\d+)")  # a decoding-step record's row label (models/encdec/records.py)


def attention_map(
    record: AttentionRecord, *, title: str | None = None, truth=None, height: int | None = None,
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns the heatmap of one ("query", "key") map of an encoder, decoder or cross record.

    Decoder maps draw the masked cells (key after the query) blank, not as weight 0: the model
    could not look there. truth: the true source span (start, end) of each output character
    (cross maps), drawn as outlined cells.
    """
    _ = gettext
    kind = record.meta.get("attention", "cross")
    x_title, y_title = (_(t) for t in AXIS_TITLES.get(kind, AXIS_TITLES["cross"]))
    query_name, key_name = (_(n) for n in HOVER_NAMES.get(kind, HOVER_NAMES["cross"]))
    decoder = kind == "decoder"
    masked = np.triu(np.ones(record.matrix().shape, bool), k=1) if decoder else None
    return alignment_heatmap(record, truth=truth, title=title, height=height, x_title=x_title, y_title=y_title,
                             masked=masked, background=MASKED_COLOR if decoder else None,
                             query_name=query_name, key_name=key_name, gettext=gettext)


def head_grid(record: AttentionRecord, *, title: str | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns every layer × head map of a ("layer", "head", "query", "key") record in one grid:
    one heatmap, layers as bands of rows and heads as bands of columns (viz.transformer.model_view),
    which the browser draws several times faster than a grid of subplots.

    It does not depend on which head is shown large above it: a figure whose spec is unchanged is
    not drawn again by the browser, so picking another layer or head redraws one figure, not two.
    """
    if record.leading_axes != ("layer", "head"):
        raise ValueError(f"head_grid needs layer and head axes, got {record.axes}")
    layers = record.weights.shape[0]
    return model_view(record, title=title or gettext("Every layer and head"), height=int(min(max(150 * layers + 110, 260), 1400)),
                      gettext=gettext)


def decoding_step_figure(record: AttentionRecord, *, title: str | None = None,
                         gettext: Gettext = untranslated) -> go.Figure:
    """Returns every head's weights at one decoding step: rows = (layer, head), columns = keys.

    record: models.encdec.records.decoding_step_record (axes ("head", "key")). Hover names a
    row by its own label ("layer 0 · head 3": the row is a head, not a query) and a column as a
    key of the record's kind. At the decoder's step 0 (one key, <s>) a note under the map says why
    every weight is 1.
    """
    _ = gettext
    decoder = record.meta.get("attention") == "decoder"
    key_title = _("what the decoder read so far (<s>, then the output)") if decoder else _("input character")
    key_name = _(HOVER_NAMES["decoder" if decoder else "cross"][1])
    # The rows' labels, which models/encdec/records.py writes in English for the exports, in gettext's language.
    rows = [_("layer {layer} · head {head}").format(layer=m[1], head=m[2]) if (m := HEAD_ROW.fullmatch(str(label)))
            else label for label in record.query_labels]
    record = dataclasses.replace(record, query_labels=tuple(rows))
    fig = alignment_heatmap(record, title=title, height=int(min(max(260, 30 * record.weights.shape[0] + 150), 520)),
                            x_title=key_title, y_title=_("layer · head"), query_name="", key_name=key_name,
                            gettext=gettext)
    if decoder and record.weights.shape[-1] == 1:
        fig.add_annotation(
            text=html.escape(_("Step 0: the decoder has read only the start token <s>, so every head puts all its "
                               "weight, 1, on it. Later steps have more to choose from.")),
            xref="paper", yref="paper", x=0.0, y=1.0, xanchor="left", yanchor="bottom", showarrow=False,
            align="left", font={"size": 13})
        fig.update_layout(margin={"t": (50 if title else 20) + 28})  # the note's line, under the title
    return fig


def rollout_figure(record: AttentionRecord, *, title: str | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the heatmap of an encoder rollout or flow record (row: a character after the last layer)."""
    _ = gettext
    return alignment_heatmap(record, title=title, zmax=None, x_title=_("input character (embedding)"),
                             y_title=_("input character after the last encoder layer"),
                             query_name=_("after the last layer: input"), key_name=_("embedding: input"),
                             gettext=gettext)
