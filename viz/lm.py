"""Figures of the language-model page: the training curves of the GPT trained here.

The attention maps themselves use viz.transformer's head_heatmap and model_view. No streamlit, no jax.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from models.record import AttentionRecord
from viz.i18n_text import N_, Gettext, untranslated
from viz.induction import add_score_heatmaps
from viz.labels import safe_label

LOSS_COLORS = {"loss": "#7f7f7f", "heldout_loss": "#d62728"}
LOSS_NAMES = {"loss": N_("training loss"), "heldout_loss": N_("held-out loss")}
BEST_COLOR = "#1f77b4"


def training_curves(record: AttentionRecord, *, height: int | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the losses over training and, under them on the same step axis, the best head's
    prefix-matching score against the goal, then one heatmap per score (heads × steps).

    record: weights [score, head, step] (models.lm.quality.training_record), query_labels the score
    titles (prefix-matching first); extras steps, loss, heldout_loss; meta heads (names "L0H1"),
    goal, baseline (a content-blind head's prefix-matching score), best_head (its index in heads).
    """
    _ = gettext
    steps = np.asarray(record.extras["steps"])
    heads = [safe_label(h) for h in record.meta["heads"]]
    scores = [safe_label(_(s)) for s in record.query_labels]  # names marked in viz/induction.py
    best = int(record.meta["best_head"])
    titles = [_("loss (nats per token)"), _("{score} score of {head}").format(score=scores[0], head=heads[best]),
              *(_("{score} score, every head").format(score=s) for s in scores)]
    rows = len(titles)
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.045, subplot_titles=titles,
                        row_heights=[0.26, 0.18] + [0.56 / len(scores)] * len(scores))
    for name, color in LOSS_COLORS.items():
        values = np.asarray(record.extras[name], np.float64)
        fig.add_trace(go.Scatter(x=steps, y=values, mode="lines+markers", name=_(LOSS_NAMES[name]),
                                 line={"color": color, "width": 2}, marker={"size": 4},
                                 hovertemplate=_("step %{x}<br>%{y:.3f} nats") + f"<extra>{_(LOSS_NAMES[name])}</extra>"),
                      row=1, col=1)
    goal, baseline = float(record.meta["goal"]), float(record.meta["baseline"])
    fig.add_trace(go.Scatter(x=steps, y=np.asarray(record.weights[0, best], np.float64), mode="lines+markers",
                             name=f"{heads[best]} {scores[0]}", line={"color": BEST_COLOR, "width": 2},
                             marker={"size": 4},
                             hovertemplate=_("{head} at step {step}<br>score {score}").format(
                                 head=heads[best], step="%{x}", score="%{y:.3f}") + "<extra></extra>"), row=2, col=1)
    fig.add_hline(y=goal, line={"color": "#2ca02c", "dash": "dash", "width": 1}, row=2, col=1,
                  annotation_text=_("induction head: {goal}").format(goal=f"{goal:g}"), annotation_position="top left", annotation_font_size=13)
    fig.add_hline(y=baseline, line={"color": "#7f7f7f", "dash": "dot", "width": 1}, row=2, col=1,
                  annotation_text=_("content-blind ≈ {baseline}").format(baseline=f"{baseline:.3f}"), annotation_position="bottom right",
                  annotation_font_size=13)
    add_score_heatmaps(fig, record.weights, steps, heads, titles[2:], first_row=3, colorbar=(0.5, 0.27), gettext=_)
    fig.update_yaxes(title_text=_("nats"), row=1, col=1)
    fig.update_yaxes(title_text=_("score"), range=[0, 1], row=2, col=1)
    fig.update_xaxes(title_text=_("training step"), row=rows, col=1)
    fig.update_layout(height=height or 860)
    return fig
