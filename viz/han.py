"""Figures and safe HTML for the hierarchical attention network (HAN).

Inputs are a HAN AttentionRecord (models.han.result_record): weights [S, W] word α per
sentence (zero-padded), extras "sentence_weights" [S] and "words" [S, W]. No streamlit,
no jax. Every user string is HTML-escaped before it reaches HTML or plotly.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.figures import COLORSCALE, safe_label, unique_labels
from viz.plotly_json import quick_figure, subplot_grid

SENTENCE_RGB = (255, 170, 40)  # amber: sentence α
WORD_RGB = (40, 110, 255)  # blue: word α
MAX_LABEL_CHARS = 22


def short_label(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """Returns text cut to `limit` characters with an ellipsis (not escaped)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sentence_labels(sentences: Sequence[str]) -> list[str]:
    """Returns "s1: The pasta was…" style labels (not escaped)."""
    return [f"s{i + 1}: {short_label(s)}" for i, s in enumerate(sentences)]


def highlighted_html(record: AttentionRecord) -> str:
    """Returns HTML of the document: each sentence shaded by its α (amber, scaled to the
    largest sentence α), each word highlighted by its α (blue, scaled to the largest word α
    in its sentence). Every word is HTML-escaped; hover titles give the numbers."""
    sentence_alpha = np.asarray(record.extras["sentence_weights"], np.float32)
    words = np.asarray(record.extras["words"])
    weights = np.asarray(record.weights, np.float32)
    s_max = max(float(sentence_alpha.max(initial=0.0)), 1e-9)
    parts = ['<div class="han-text" style="line-height:2.1;font-size:1.05rem">']
    for i, a_s in enumerate(sentence_alpha):
        row = [str(w) for w in words[i] if str(w)]
        w_max = max(float(weights[i, : len(row)].max(initial=0.0)), 1e-9)
        strength = float(a_s) / s_max
        parts.append(
            f'<span class="han-sentence" title="sentence {i + 1}: α = {float(a_s):.3f}" '
            f'style="background:rgba({SENTENCE_RGB[0]},{SENTENCE_RGB[1]},{SENTENCE_RGB[2]},{0.08 + 0.5 * strength:.3f});'
            f'border-radius:4px;padding:3px 2px;margin-right:4px">'
        )
        for j, word in enumerate(row):
            a_w = float(weights[i, j])
            parts.append(
                f'<span class="han-word" title="{html.escape(word, quote=True)}: α = {a_w:.3f}" '
                f'style="background:rgba({WORD_RGB[0]},{WORD_RGB[1]},{WORD_RGB[2]},{0.75 * a_w / w_max:.3f});'
                f'border-radius:3px;padding:1px 2px">{html.escape(word)}</span> '
            )
        parts.append("</span>")
    parts.append("</div>")
    return "".join(parts)


def han_heatmap(record: AttentionRecord, *, title: str | None = None) -> go.Figure:
    """Returns the sentences × word-slots heatmap: word α with each cell's word written in
    it, and beside it one column of sentence α. Rows are sentences (top to bottom)."""
    weights = np.asarray(record.weights, np.float32)
    words = np.asarray(record.extras["words"])
    sentence_alpha = np.asarray(record.extras["sentence_weights"], np.float32).reshape(-1, 1)
    ys = unique_labels(sentence_labels(record.query_labels))
    xs = [f"w{j + 1}" for j in range(weights.shape[1])]
    cell_text = [[safe_label(w) if str(w) else "" for w in row] for row in words]
    z = np.where(words == "", np.nan, weights)  # padding shows as blank, not as α = 0
    layout_json, axes = subplot_grid(1, 2, shared_yaxes=True, column_widths=(0.07, 0.93), horizontal_spacing=0.01,
                                     subplot_titles=("sentence α", "word α"))
    left, right = axes[0]
    data = [
        {"type": "heatmap", "z": sentence_alpha, "x": ["α_s"], "y": ys, "zmin": 0.0, "zmax": 1.0, "colorscale": "Oranges",
         "showscale": False, "text": [[f"{a:.2f}"] for a in sentence_alpha[:, 0]], "texttemplate": "%{text}",
         "textfont": {"size": 10}, "hovertemplate": "%{y}<br>sentence α = %{z:.4f}<extra></extra>", **left},
        {"type": "heatmap", "z": z, "x": xs, "y": ys,
         "zmin": 0.0, "zmax": max(float(np.nanmax(z)) if np.isfinite(z).any() else 1.0, 1e-9),
         "colorscale": COLORSCALE, "text": cell_text, "texttemplate": "%{text}", "textfont": {"size": 10},
         "colorbar": {"title": {"text": "word α"}},
         "hovertemplate": "%{y}<br>%{x}: %{text}<br>word α = %{z:.4f}<extra></extra>", **right},
    ]
    n_rows, n_cols = weights.shape
    layout = json.loads(layout_json)
    layout.update(
        title={"text": html.escape(title) if title else None},
        height=int(min(max(260, 56 * n_rows + 120), 1100)),
        margin={"l": 10, "r": 10, "t": 60 if title else 40, "b": 10},
    )
    layout["yaxis"].update(autorange="reversed", tickmode="array", tickvals=ys, ticktext=ys)
    layout["xaxis2"].update(side="bottom", tickangle=0 if n_cols <= 20 else -45)
    return quick_figure(data, layout)


def probability_bars(classes: Sequence[str], probabilities: np.ndarray, *, title: str | None = None) -> go.Figure:
    """Returns horizontal bars of class probabilities [C], the predicted class highlighted."""
    probabilities = np.asarray(probabilities, np.float32).reshape(-1)
    labels = unique_labels(classes)
    best = int(np.argmax(probabilities))
    bar = {"type": "bar", "x": probabilities, "y": labels, "orientation": "h",
           "marker": {"color": ["#d62728" if i == best else "#9ab" for i in range(len(labels))]},
           "text": [f"{p:.1%}" for p in probabilities], "textposition": "auto",
           "hovertemplate": "%{y}: %{x:.4f}<extra></extra>"}
    return quick_figure([bar], {
        "title": {"text": html.escape(title) if title else None},
        "height": int(80 + 34 * len(labels)), "margin": {"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        "xaxis": {"range": [0, 1], "title": {"text": "probability"}},
        "yaxis": {"autorange": "reversed"},
    })


def score_bars(labels: Sequence[str], scores: np.ndarray, *, title: str | None = None, value_name: str = "uᵀu_w") -> go.Figure:
    """Returns horizontal bars of context-vector scores [n] (highest at the top)."""
    scores = np.asarray(scores, np.float32).reshape(-1)
    ys = unique_labels(labels)
    bar = {"type": "bar", "x": scores, "y": ys, "orientation": "h",
           "marker": {"color": ["#1f77b4" if s >= 0 else "#ff7f0e" for s in scores]},
           "hovertemplate": f"%{{y}}<br>{html.escape(value_name)} = %{{x:.3f}}<extra></extra>"}
    return quick_figure([bar], {
        "title": {"text": html.escape(title) if title else None},
        "height": int(90 + 20 * len(ys)), "margin": {"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        "xaxis": {"title": {"text": html.escape(value_name)}}, "yaxis": {"autorange": "reversed"},
    })
