"""The Playground's figure (stages_figure: score, normalise, sum, and the query–key plane) and the
plane itself: the query q and every key k_j as points, each key sized by its weight α_j, with its score
and α in its hover, so that one sees why a key scores high (for a dot product: a long key pointing the
query's way); query_key_record is the record the plane is drawn from. No streamlit, no jax."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.figures import attention_heatmap, bars_over_heatmap, vectors_2d, weight_bars
from viz.i18n_text import Gettext, untranslated
from viz.labels import safe_label
from viz.plotly_json import quick_figure, side_by_side

KEY_COLOR, QUERY_COLOR = "#1f77b4", "#d62728"


def query_key_plane(
    query: np.ndarray,
    keys: np.ndarray,
    labels: Sequence[object],
    scores: np.ndarray,
    weights: np.ndarray,
    *,
    title: str | None = None,
    height: int | None = None,
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns the query [2] and the keys [n, 2] as points, with a line from the origin to each (the
    dot product compares directions and lengths); a key's marker grows with its weight α [n], and
    its hover gives its score [n] and α."""
    _ = gettext
    query = np.asarray(query, np.float32).reshape(-1)
    keys = np.asarray(keys, np.float32)
    scores, weights = np.asarray(scores, np.float32).reshape(-1), np.asarray(weights, np.float32).reshape(-1)
    if query.shape != (2,) or keys.ndim != 2 or keys.shape[1] != 2:
        raise ValueError(f"query_key_plane needs a query [2] and keys [n, 2], got {query.shape} and {keys.shape}")
    if not len(labels) == len(scores) == len(weights) == len(keys):
        raise ValueError("one label, score and weight per key")
    names = [safe_label(x) for x in labels]
    key_name, query_name = _("keys k_j"), _("query q")
    score_word = html.escape(_("score"))
    lines_x, lines_y = [], []
    for x, y in keys:
        lines_x += [0.0, float(x), None]
        lines_y += [0.0, float(y), None]
    data = [
        {"type": "scatter", "x": lines_x, "y": lines_y, "mode": "lines", "hoverinfo": "skip", "showlegend": False,
         "line": {"color": "rgba(31,119,180,0.35)", "width": 1}},
        {"type": "scatter", "x": [0.0, float(query[0])], "y": [0.0, float(query[1])], "mode": "lines",
         "hoverinfo": "skip", "showlegend": False, "line": {"color": QUERY_COLOR, "width": 2, "dash": "dot"}},
        {"type": "scatter", "x": keys[:, 0], "y": keys[:, 1], "mode": "markers+text", "text": names,
         "textposition": "top center", "name": html.escape(key_name),
         "marker": {"size": 8 + 40 * np.clip(weights, 0, 1), "color": KEY_COLOR, "opacity": 0.8},
         "customdata": np.stack([scores, weights], axis=1),
         "hovertemplate": f"%{{text}}: k = (%{{x:.2f}}, %{{y:.2f}})<br>{score_word} = %{{customdata[0]:.3f}}"
                          "<br>α = %{customdata[1]:.3f}<extra></extra>"},
        {"type": "scatter", "x": [float(query[0])], "y": [float(query[1])], "mode": "markers+text", "text": ["q"],
         "textposition": "bottom center", "name": html.escape(query_name),
         "marker": {"size": 18, "symbol": "star", "color": QUERY_COLOR},
         "hovertemplate": f"{html.escape(query_name)} = (%{{x:.2f}}, %{{y:.2f}})<extra></extra>"},
    ]
    reach = float(max(np.abs(keys).max(initial=0.0), np.abs(query).max(initial=0.0), 1.0)) * 1.2
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "height": height or 420,
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        "xaxis": {"title": {"text": html.escape(_("dimension 1"))}, "range": [-reach, reach], "zeroline": True},
        "yaxis": {"title": {"text": html.escape(_("dimension 2"))}, "range": [-reach, reach], "zeroline": True,
                  "scaleanchor": "x"},  # the same scale on both axes: angles and lengths as they are
        "showlegend": False,
    }
    return quick_figure(data, layout)


def query_key_record(record: AttentionRecord) -> AttentionRecord:
    """Returns the ("key", "quantity") record the query–key plane draws, from a Playground record
    (models/playground/records.py): per key k_j its two coordinates, its score and its weight α_j
    [n, 4]; the query q in meta and extras (the plane's star)."""
    keys = np.asarray(record.extras["keys"], np.float32)[:, :2]
    query = np.asarray(record.extras["query"], np.float32).reshape(-1)[:2]
    scores = np.asarray(record.extras["scores"], np.float32).reshape(-1)
    table = np.column_stack([keys, scores, np.asarray(record.weights, np.float32).reshape(-1)])
    return AttentionRecord(
        mechanism=record.mechanism, weights=table, axes=("key", "quantity"), query_labels=record.key_labels,
        key_labels=("dim 1", "dim 2", "score", "α"),
        meta={**dict(record.meta), "shown": "the keys, each with its score and weight, and the query",
              "query": [float(x) for x in query]},
        extras={"query": query},
    )


def stages_figure(record, scores, points, query: np.ndarray, keys: np.ndarray, *, gettext: Gettext = untranslated
                  ) -> tuple[go.Figure, tuple[go.Figure, go.Figure, go.Figure, go.Figure]]:
    """Returns the Playground's figure and its four panels, each a figure of its own (what its Export
    menu exports): 1 the scores, 2 the weights α as bars over their one-row heatmap (α beside the
    sample frequencies when the record sampled), 3 the values sized by α and their sum c, and the
    query–key plane (query_key_record's); the figure holds the four side by side, so that a control
    redraws one figure. record: a Playground record (models/playground/records.py); scores and points:
    its score_record and context_record."""
    _ = gettext
    score_fig = weight_bars(scores.weights[0], scores.key_labels, title=_("1 · Scores: score(q, kⱼ)"),
                            value_name=_("score"), gettext=_)
    if record.meta.get("mode") == "sample":
        weight_fig = weight_bars(
            record.extras["soft_weights"], record.key_labels,
            title=_("2 · α vs. {samples} samples").format(samples=record.meta["samples"]),
            value_name=_("α (soft)"), compare=record.weights[0], compare_name=_("sample frequency"), gettext=_,
        )
        # Under the panels, where the sum's legend goes: above the bars it lay over the panels' titles.
        weight_fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": -0.3, "yanchor": "top"})
    else:
        weight_fig = weight_bars(record.weights[0], record.key_labels, title=_("2 · Weights α"), value_name="α",
                                 gettext=_)
    # The bars and, under them, the heatmap row every other page draws.
    weights_panel = bars_over_heatmap(weight_fig, attention_heatmap(record, title="", zmax=1.0, height=220, gettext=_))
    context_fig = vectors_2d(
        points.weights[:-1, :2], points.query_labels[:-1], weights=points.weights[:-1, 2], highlight=points.weights[-1, :2],
        highlight_name=_("weighted sum c"), title=_("3 · Sum: c = Σⱼ αⱼ vⱼ"),
        x_title=_("value dimension 1"), y_title=_("value dimension 2"), gettext=_,
    )
    # Why one key scores high: the query and the keys where they are.
    plane = query_key_plane(query, keys, record.key_labels, scores.weights[0], record.weights[0],
                            title=_("Why a key scores high"), gettext=_)
    panels = (score_fig, weights_panel, context_fig, plane)
    return side_by_side(list(panels), widths=[1.0, 1.0, 1.0, 1.1], gap=0.06, height=480), panels
