"""Figures of a language model's inside: the logit lens, head knock-out and attention sinks.

Records from models/lm/lens.py (lm-logit-lens), models/lm/knockout.py (lm-knockout) and
models/lm/sinks.py; no streamlit, no jax. Every builder writes its own texts through `gettext`.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.figures import COLORSCALE
from viz.i18n_text import N_, Gettext, untranslated
from viz.labels import safe_label

# The paragraph the page shows beside the sink figures (translated where it is shown: _(SINK_TEXT)).
SINK_TEXT = N_(
    "An attention sink is a token that many heads attend to although it carries little meaning, most often "
    "the first token. Softmax makes one: every row of attention weights must sum to 1, so a head with nothing "
    "useful to read in a row still has to put its weight somewhere, and the first token, which every later "
    "token can see, becomes the place where it parks. A head counts as a sink here when its mean attention on "
    "the first token, over every query but the first, exceeds ε = 0.3 (Gu et al., \"When Attention Sink "
    "Emerges in Language Models\", ICLR 2025); the sink rate is the share of heads that do."
)
LENS_NOTE = N_("Each layer's residual stream goes through the model's final norm, then its unembedding; "
               "without the final norm the early layers would predict other tokens.")
MODE_NOTES = {"zero": N_("its output set to zero"), "first": N_("its attention put on the first token")}
MAX_CELL_TEXT = 48  # positions up to which the lens grid writes the top token in its cells
DIVERGING = "RdBu"
PROB_COLOR, LOSS_COLOR = "#1f77b4", "#d62728"


def row_names(record: AttentionRecord, gettext: Gettext = untranslated) -> list[str]:
    """Returns the lens's row names, "embedding", then "layer 0", …, in gettext's language."""
    _ = gettext
    return [_("embedding") if i == 0 else _("layer {layer}").format(layer=i - 1) for i in range(record.weights.shape[0])]


def _cell(token: str, width: int = 5) -> str:
    # A cell holds about five characters at 13 px; the hover has the whole token.
    token = str(token)
    return safe_label(token if len(token) <= width else token[: width - 1] + "…")


def lens_grid(record: AttentionRecord, *, title: str | None = None, height: int | None = None,
              gettext: Gettext = untranslated) -> go.Figure:
    """Returns the layer × position grid of the logit lens: colour the probability of the model's
    final answer at each position, text the layer's own top token, hover its top-k.

    record: lm-logit-lens (weights [layer, position]; extras top_tokens, top_probs [layer, position, k]).
    """
    _ = gettext
    weights = np.asarray(record.weights, np.float64)
    rows, positions = weights.shape
    names = row_names(record, gettext)
    tokens = [safe_label(t) for t in record.key_labels]
    top_tokens = np.asarray(record.extras["top_tokens"])
    top_probs = np.asarray(record.extras["top_probs"], np.float64)
    answers = [safe_label(t) for t in top_tokens[-1, :, 0]]
    hover = np.empty((rows, positions), dtype=object)
    for r in range(rows):
        for p in range(positions):
            lines = "<br>".join(f"{safe_label(t)}  {q:.3f}" for t, q in zip(top_tokens[r, p], top_probs[r, p]))
            hover[r, p] = _("{layer}, after “{token}” (position {position})").format(
                layer=names[r], token=tokens[p], position=p) + "<br>" + lines + "<br>" + _(
                "final answer “{answer}”: {prob}").format(answer=answers[p], prob=f"{weights[r, p]:.3f}")
    text = [[_cell(t) for t in row] for row in top_tokens[:, :, 0]] if positions <= MAX_CELL_TEXT else None
    fig = go.Figure(go.Heatmap(
        z=weights, x=list(range(positions)), y=list(range(rows)), zmin=0.0, zmax=1.0, colorscale=COLORSCALE,
        text=text, texttemplate="%{text}" if text else None, textfont={"size": 13},
        customdata=hover, hovertemplate="%{customdata}<extra></extra>",
        colorbar={"title": {"text": _("P(final answer)")}},
    ))
    chosen = record.meta.get("position")
    if chosen is not None:
        fig.add_vrect(x0=chosen - 0.5, x1=chosen + 0.5, line={"color": "#ff7f0e", "width": 2})
    fig.update_layout(
        title={"text": title if title is not None else _("Logit lens: each layer's top token")},
        height=height or int(min(max(40 * rows + 260, 360), 900)),  # room for the turned token labels below
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        xaxis={"title": {"text": _("position (the token read)")}, "tickmode": "array",
               "tickvals": list(range(positions))[:: max(1, positions // 48)],
               "ticktext": tokens[:: max(1, positions // 48)], "tickangle": -45},
        yaxis={"title": {"text": _("layer")}, "tickmode": "array", "tickvals": list(range(rows)), "ticktext": names,
               "autorange": "reversed"},
    )
    return fig


def lens_position_bars(record: AttentionRecord, *, title: str | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns, at the record's chosen position, each layer's probability of the final answer (bars)
    with the layer's top-k in the hover."""
    _ = gettext
    position = int(record.meta["position"])
    names = row_names(record, gettext)
    top_tokens, top_probs = record.meta["position_top_tokens"], record.meta["position_top_probs"]
    hover = ["<br>".join(f"{safe_label(t)}  {q:.3f}" for t, q in zip(ts, ps)) for ts, ps in zip(top_tokens, top_probs)]
    fig = go.Figure(go.Bar(x=names, y=np.asarray(record.weights[:, position], np.float64), marker_color=PROB_COLOR,
                           text=[safe_label(ts[0]) for ts in top_tokens], textposition="outside", customdata=hover,
                           hovertemplate="%{x}<br>%{customdata}<extra></extra>"))
    fig.update_layout(
        title={"text": title if title is not None else _("After “{token}”: the final answer “{answer}” layer by layer").format(
            token=safe_label(record.meta["position_token"]), answer=safe_label(record.meta["answer"]))},
        height=320, margin={"l": 10, "r": 10, "t": 50, "b": 10},
        yaxis={"title": {"text": _("P(final answer)")}, "range": [0, 1.1]}, xaxis={"title": {"text": _("layer")}},
    )
    return fig


def knockout_grid(record: AttentionRecord, *, title: str | None = None, height: int | None = None,
                  gettext: Gettext = untranslated) -> go.Figure:
    """Returns the layer × head grid of a knock-out sweep: the change in the probability of the model's
    top-1 next token when that head alone is knocked out, diverging colours centred at 0; hover adds
    the change in the prompt's loss.  record: lm-knockout with axes ("layer", "head")."""
    _ = gettext
    weights = np.asarray(record.weights, np.float64)
    loss = np.asarray(record.extras["loss_change"], np.float64)
    layers, heads = weights.shape
    limit = max(float(np.abs(weights).max(initial=0.0)), 1e-6)
    hover = np.empty((layers, heads), dtype=object)
    for layer in range(layers):
        for head in range(heads):
            hover[layer, head] = _("layer {layer}, head {head}<br>Δ probability {prob}<br>Δ loss {loss} nats").format(
                layer=layer, head=head, prob=f"{weights[layer, head]:+.4f}", loss=f"{loss[layer, head]:+.4f}")
    fig = go.Figure(go.Heatmap(
        z=weights, x=list(range(heads)), y=list(range(layers)), zmin=-limit, zmax=limit, zmid=0.0,
        colorscale=DIVERGING, customdata=hover, hovertemplate="%{customdata}<extra></extra>",
        colorbar={"title": {"text": _("Δ probability")}}, xgap=1, ygap=1,
    ))
    mode = _(MODE_NOTES.get(record.meta.get("mode"), MODE_NOTES["zero"]))
    fig.update_layout(
        title={"text": title if title is not None else _("Each head knocked out alone, {mode}: P(“{answer}”) was {prob}").format(
            mode=mode, answer=safe_label(record.meta.get("answer", "")), prob=f"{record.meta.get('plain_prob', 0.0):.3f}")},
        height=height or int(min(max(26 * layers + 170, 260), 900)),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        xaxis={"title": {"text": _("head")}, "dtick": 1},
        yaxis={"title": {"text": _("layer")}, "dtick": 1, "autorange": "reversed"},
    )
    return fig


def knockout_bars(record: AttentionRecord, *, title: str | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the chosen knock-outs' change in the top-1 probability and in the loss, side by side
    (meta knockouts, prob_change, loss_change of an lm-knockout record)."""
    _ = gettext
    names = [_("all chosen") if n == "all chosen" else n for n in record.meta.get("knockouts", [])]
    prob = np.asarray(record.meta.get("prob_change", []), np.float64)
    loss = np.asarray(record.meta.get("loss_change", []), np.float64)
    fig = go.Figure([
        go.Bar(x=names, y=prob, name=_("Δ probability"), marker_color=PROB_COLOR, offsetgroup="prob",
               hovertemplate="%{x}<br>" + _("Δ probability") + " %{y:+.4f}<extra></extra>"),
        go.Bar(x=names, y=loss, name=_("Δ loss (nats)"), marker_color=LOSS_COLOR, yaxis="y2", offsetgroup="loss",
               hovertemplate="%{x}<br>" + _("Δ loss") + " %{y:+.4f}<extra></extra>"),
    ])
    mode = _(MODE_NOTES.get(record.meta.get("mode"), MODE_NOTES["zero"]))
    fig.update_layout(
        title={"text": title if title is not None else _("Chosen heads knocked out, {mode}").format(mode=mode)},
        # The top margin holds the title and, under it, the legend (one row over the plot).
        height=360, margin={"l": 10, "r": 10, "t": 96, "b": 10}, barmode="group",
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
    )
    prob_range, loss_range = zero_aligned_ranges(prob, loss)
    fig.update_layout(
        yaxis={"title": {"text": _("Δ probability")}, "zeroline": True, "range": prob_range},
        yaxis2={"title": {"text": _("Δ loss (nats)")}, "overlaying": "y", "side": "right", "zeroline": True,
                "range": loss_range, "showgrid": False, "tickmode": "auto"},
    )
    return fig


def zero_aligned_ranges(*values: np.ndarray, headroom: float = 0.12) -> list[list[float]]:
    """Returns one [low, high] axis range per array of values, with 0 at the same height on every axis and
    `headroom` (a fraction of the largest bar) left above and below the bars.

    Two axes over one plot (the knock-out's Δ probability and Δ loss): each axis with its own autorange put
    its zero line at its own height, so a bar of one and a bar of the other did not start from the same line.
    """
    extents = []
    for array in values:
        array = np.asarray(array, np.float64)
        finite = array[np.isfinite(array)]
        top = max(float(finite.max()), 0.0) if finite.size else 0.0
        bottom = max(-float(finite.min()), 0.0) if finite.size else 0.0
        extents.append((bottom * (1 + headroom), top * (1 + headroom)))

    def spans(below: float) -> list[float]:
        return [max(b / below if below > 0 else (np.inf if b > 0 else 0.0), t / (1 - below)) or 1.0
                for b, t in extents]

    # The share of the plot below zero, the same on every axis: of the shares each axis would pick alone
    # and a grid between, the one whose worst-used axis uses the most of its height.
    candidates = {round(b / (b + t), 6) for b, t in extents if b + t > 0} | set(np.linspace(0.05, 0.95, 19))
    candidates |= {0.0}

    def worst_use(below: float) -> float:
        return min(((b + t) / span if b + t > 0 else 1.0) for (b, t), span in zip(extents, spans(below)))

    below = max(sorted(c for c in candidates if c < 1), key=worst_use)
    return [[float(-below * span), float((1 - below) * span)] for span in spans(below)]


def sink_grid(record: AttentionRecord, *, title: str | None = None, height: int | None = None,
              gettext: Gettext = untranslated) -> go.Figure:
    """Returns the layer × head grid of first-token shares (0..1), heads above ε marked "sink".
    record: models/lm/sinks.py sink_record (weights [layer, head]; meta epsilon, sink_rate)."""
    _ = gettext
    weights = np.asarray(record.weights, np.float64)
    epsilon = float(record.meta.get("epsilon", 0.3))
    text = [[_("sink") if w > epsilon else "" for w in row] for row in weights]
    fig = go.Figure(go.Heatmap(
        z=weights, x=list(range(weights.shape[1])), y=list(range(weights.shape[0])), zmin=0.0, zmax=1.0,
        colorscale=COLORSCALE, text=text, texttemplate="%{text}",
        hovertemplate=_("layer %{y}, head %{x}<br>attention on the first token %{z:.3f}") + "<extra></extra>",
        colorbar={"title": {"text": _("share")}}, xgap=1, ygap=1,
    ))
    rate = float(record.meta.get("sink_rate", np.mean(weights > epsilon)))
    fig.update_layout(
        title={"text": title if title is not None else _("Attention on the first token: sink rate {rate} (ε = {epsilon})").format(
            rate=f"{rate:.0%}", epsilon=f"{epsilon:g}")},
        height=height or int(min(max(26 * weights.shape[0] + 170, 260), 900)),
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        xaxis={"title": {"text": _("head")}, "dtick": 1},
        yaxis={"title": {"text": _("layer")}, "dtick": 1, "autorange": "reversed"},
    )
    return fig


def sink_rate_curve(steps: np.ndarray, shares: np.ndarray, *, epsilon: float = 0.3, title: str | None = None,
                    gettext: Gettext = untranslated) -> go.Figure:
    """Returns the sink rate over training (share of heads above ε) and the largest head's first-token
    share, with ε dashed.  steps [S]; shares [S, L, H] (models/lm/sinks.py training_sinks)."""
    _ = gettext
    steps = np.asarray(steps)
    flat = np.asarray(shares, np.float64).reshape(len(steps), -1)
    rates, largest = (flat > epsilon).mean(1), flat.max(1)
    fig = go.Figure([
        go.Scatter(x=steps, y=rates, mode="lines+markers", name=_("sink rate"), line={"color": LOSS_COLOR, "width": 2},
                   hovertemplate=_("step %{x}<br>sink rate %{y:.0%}") + "<extra></extra>"),
        go.Scatter(x=steps, y=largest, mode="lines+markers", name=_("largest first-token share"),
                   line={"color": PROB_COLOR, "width": 2},
                   hovertemplate=_("step %{x}<br>largest share %{y:.3f}") + "<extra></extra>"),
    ])
    fig.add_hline(y=epsilon, line={"color": "#7f7f7f", "dash": "dash", "width": 1},
                  annotation_text=_("ε = {epsilon}").format(epsilon=f"{epsilon:g}"), annotation_position="top left")
    fig.update_layout(
        title={"text": title if title is not None else _("Attention sinks during training")},
        height=320, margin={"l": 10, "r": 10, "t": 50, "b": 10},
        xaxis={"title": {"text": _("training step")}}, yaxis={"title": {"text": _("share")}, "range": [0, 1.05]},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
    )
    return fig
