"""Figures of "Inside a language model": one generation step's attention, the chosen tokens' probabilities,
and the neuron view (q, k, q ⊙ k, scores and softmax). No streamlit, no jax.

Records: models/lm/generate.py (lm-generate: weights [layer, head, T, T], extras chosen_prob, top_ids,
top_probs, top_tokens, meta n_prompt) and models/lm/neuron.py (lm-neuron: weights [T], extras q, k,
product, scores, visible); the MiniLM page hands neuron_view the same arrays.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from models.record import AttentionRecord
from viz.figures import COLORSCALE
from viz.i18n_text import Gettext, untranslated
from viz.labels import safe_label, unique_labels

PROMPT_COLOR = "#7f7f7f"
GENERATED_COLOR = "#1f77b4"
CHOSEN_COLOR = "#d62728"
SIGNED_SCALE = "RdBu"


def step_count(record: AttentionRecord) -> int:
    """Returns how many tokens an lm-generate record generated."""
    return int(record.meta["n_new"])


def generation_step(record: AttentionRecord, step: int, *, layers: Sequence[int] | None = None,
                    title: str | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the attention row of every head (rows "L0 H1", …) for one generation step: the query at token
    n_prompt − 1 + step, which wrote token n_prompt + step, over the keys before it.

    Prompt keys and generated keys are told apart by a shaded band over the generated ones and by the hover.
    layers: which layers' heads (default: all).
    """
    _ = gettext
    n_prompt, n_new = int(record.meta["n_prompt"]), step_count(record)
    if not 0 <= step < n_new:
        raise ValueError(f"step {step} is outside 0..{n_new - 1}")
    query = n_prompt - 1 + step
    chosen = list(range(record.weights.shape[0])) if layers is None else list(layers)
    rows = record.weights[chosen][:, :, query, : query + 1]  # [L', H, query + 1]
    heads = record.weights.shape[1]
    names = [_("L{layer} H{head}").format(layer=layer, head=head) for layer in chosen for head in range(heads)]
    z = rows.reshape(len(names), query + 1)
    keys = unique_labels(record.key_labels[: query + 1])
    kinds = [_("prompt token") if j < n_prompt else _("generated token") for j in range(query + 1)]
    written = safe_label(record.query_labels[query + 1])
    hover = _("{head}<br>key {key} (%{{customdata}})<br>weight %{{z:.3f}}").format(head="%{y}", key="%{x}")
    fig = go.Figure(go.Heatmap(
        z=z, x=keys, y=names, customdata=np.array([kinds] * len(names), dtype=object), zmin=0.0, zmax=1.0,
        colorscale=COLORSCALE, colorbar={"title": {"text": _("weight")}},
        hovertemplate=hover + "<extra></extra>",
    ))
    if query + 1 > n_prompt:
        fig.add_vrect(x0=n_prompt - 0.5, x1=query + 0.5, line_width=2, line_color=GENERATED_COLOR,
                      fillcolor="rgba(0,0,0,0)", annotation_text=_("generated"), annotation_position="top left")
    fig.update_yaxes(autorange="reversed", title_text=_("head"))
    fig.update_xaxes(title_text=_("key"), type="category", tickangle=-45)
    fig.update_layout(
        title={"text": title or _("Step {step}: which tokens each head read to write “{token}”").format(
            step=step + 1, token=written)},
        height=min(900, max(260, 18 * len(names) + 160)), margin={"l": 10, "r": 10, "t": 60, "b": 10},
    )
    return fig


def chosen_probabilities(record: AttentionRecord, *, step: int | None = None, title: str | None = None,
                         gettext: Gettext = untranslated) -> go.Figure:
    """Returns the probability of each generated token (bars) with its top alternatives (markers, hover
    names them); step (0-based) is outlined when given."""
    _ = gettext
    n_prompt = int(record.meta["n_prompt"])
    chosen = np.asarray(record.extras["chosen_prob"], np.float64)
    top_probs = np.asarray(record.extras["top_probs"], np.float64)
    top_tokens = np.asarray(record.extras["top_tokens"]).astype(str)
    n_new = len(chosen)
    written = unique_labels(record.query_labels[n_prompt: n_prompt + n_new])
    x = [_("{step}: {token}").format(step=i + 1, token=token) for i, token in enumerate(written)]
    fig = go.Figure(go.Bar(
        x=x, y=chosen, name=_("chosen token"),
        marker={"color": GENERATED_COLOR, "line": {"color": [CHOSEN_COLOR if i == step else GENERATED_COLOR
                                                            for i in range(n_new)], "width": 3}},
        hovertemplate=_("step %{x}<br>p = %{y:.3f}") + "<extra></extra>",
    ))
    for rank in range(top_probs.shape[1]):
        fig.add_trace(go.Scatter(
            x=x, y=top_probs[:, rank], mode="markers", name=_("top alternatives"),
            marker={"symbol": "line-ew-open", "size": 14, "color": PROMPT_COLOR},
            customdata=[safe_label(t) for t in top_tokens[:, rank]], showlegend=rank == 0,
            hovertemplate=_("alternative {rank}: %{{customdata}}<br>p = %{{y:.3f}}").format(rank=rank + 1)
            + "<extra></extra>",
        ))
    fig.update_yaxes(range=[0, 1], title_text=_("probability"))
    fig.update_xaxes(type="category", tickangle=-45)
    fig.update_layout(title={"text": title or _("Probability of each chosen token, and its top alternatives")},
                      height=380, margin={"l": 10, "r": 10, "t": 60, "b": 10}, bargap=0.3,
                      legend={"orientation": "h", "y": 1.08, "x": 0})
    return fig


def neuron_view(q: np.ndarray, k: np.ndarray, product: np.ndarray, scores: np.ndarray, weights: np.ndarray,
                tokens: Sequence[str], query: int, *, visible: np.ndarray | None = None, key: int | None = None,
                scale: float | None = None, title: str | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the neuron view of one head: q [d] above k [T, d], then q ⊙ k [T, d] (heatmaps), the scores
    Σ q ⊙ k · scale [T] and the softmax [T] (bars), keys as rows; `key` (a row) is outlined when given.

    visible bool [T]: keys the query may see (a causal model: j <= query); hidden keys' scores are greyed.
    """
    _ = gettext
    t, d = k.shape
    names = unique_labels(tokens)
    visible = np.ones(t, bool) if visible is None else np.asarray(visible, bool)
    dims = [str(i) for i in range(d)]
    fig = make_subplots(
        rows=2, cols=4, row_heights=[0.06, 0.94], column_widths=[0.3, 0.3, 0.2, 0.2], shared_yaxes=False,
        horizontal_spacing=0.05, vertical_spacing=min(0.12, 60 / max(320, 20 * t + 180)),
        specs=[[{}, {}, None, None], [{}, {}, {}, {}]],
        subplot_titles=[_("q (query {token})").format(token=safe_label(tokens[query])), "q",
                        "k", "q ⊙ k", _("scores Σ q ⊙ k · {scale}").format(
                            scale="1/√d" if scale is None else f"{scale:.3g}"), "softmax"],
    )
    bound = float(max(np.abs(q).max(), np.abs(k).max(), 1e-9))
    q_hover = _("q[%{x}] = %{z:.3f}") + "<extra></extra>"
    for col in (1, 2):
        fig.add_trace(go.Heatmap(z=q[None], x=dims, y=["q"], zmin=-bound, zmax=bound, colorscale=SIGNED_SCALE,
                                 showscale=False, hovertemplate=q_hover), row=1, col=col)
    fig.add_trace(go.Heatmap(z=k, x=dims, y=names, zmin=-bound, zmax=bound, colorscale=SIGNED_SCALE, showscale=False,
                             hovertemplate=_("key %{y}<br>k[%{x}] = %{z:.3f}") + "<extra></extra>"), row=2, col=1)
    pbound = float(max(np.abs(product).max(), 1e-9))
    fig.add_trace(go.Heatmap(z=product, x=dims, y=names, zmin=-pbound, zmax=pbound, colorscale=SIGNED_SCALE,
                             colorbar={"title": {"text": "q ⊙ k"}, "len": 0.8, "y": 0.45},
                             hovertemplate=_("key %{y}<br>q[%{x}] · k[%{x}] = %{z:.4f}") + "<extra></extra>"),
                  row=2, col=2)
    colors = [GENERATED_COLOR if v else "#d0d0d0" for v in visible]
    fig.add_trace(go.Bar(x=np.where(visible, scores, 0.0), y=names, orientation="h", marker={"color": colors},
                         customdata=scores, showlegend=False,
                         hovertemplate=_("key %{y}<br>score %{customdata:.4f}") + "<extra></extra>"), row=2, col=3)
    fig.add_trace(go.Bar(x=weights, y=names, orientation="h", marker={"color": CHOSEN_COLOR}, showlegend=False,
                         hovertemplate=_("key %{y}<br>weight %{x:.4f}") + "<extra></extra>"), row=2, col=4)
    for col in range(1, 5):
        fig.update_yaxes(autorange="reversed", type="category", showticklabels=col == 1, row=2, col=col)
        if col > 1:
            fig.update_yaxes(matches="y3", row=2, col=col)
    fig.update_xaxes(matches="x3", row=1, col=1)  # q's dimensions over k's, q's again over q ⊙ k's
    fig.update_xaxes(matches="x4", row=1, col=2)
    fig.update_xaxes(showticklabels=False, row=1)
    fig.update_xaxes(range=[0, 1], row=2, col=4)
    if key is not None:
        for col in range(1, 5):
            fig.add_hline(y=names[key], line={"color": CHOSEN_COLOR, "width": 1, "dash": "dot"}, row=2, col=col)
    fig.update_layout(title={"text": title or _("Neuron view: query {token}").format(token=safe_label(tokens[query]))},
                      height=min(1000, max(320, 20 * t + 180)), margin={"l": 10, "r": 10, "t": 80, "b": 10})
    return fig


def neuron_figure(record: AttentionRecord, *, key: int | None = None, title: str | None = None,
                  gettext: Gettext = untranslated) -> go.Figure:
    """Returns neuron_view of an lm-neuron record (weights [T], extras q, k, product, scores, visible)."""
    e = record.extras
    return neuron_view(np.asarray(e["q"]), np.asarray(e["k"]), np.asarray(e["product"]), np.asarray(e["scores"]),
                       record.weights, record.key_labels, int(record.meta["query"]), visible=np.asarray(e["visible"]),
                       key=key, scale=record.meta.get("scale"), title=title, gettext=gettext)
