"""Figures of the induction page: the training curves, one head's pattern, and the copy view.

Positions are numeric on both axes (tick text = the tokens), so repeated tokens stay apart.
No streamlit, no jax.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from models.heads.detectors import induction_pattern
from models.record import AttentionRecord
from viz.figures import COLORSCALE
from viz.i18n_text import N_, Gettext, untranslated
from viz.labels import safe_label
from viz.plotly_json import quick_figure, tick_stride

LOSS_COLORS = {"loss": "#7f7f7f", "first_half_loss": "#1f77b4", "repeated_loss": "#d62728"}
LOSS_NAMES = {"loss": N_("training loss (all positions)"), "first_half_loss": N_("loss on the first copy of r"),
              "repeated_loss": N_("loss on the repeated half")}
# The scores' names as the records give them (models/induction/quality.py, models/lm/quality.py), translated where shown.
SCORE_NAMES = (N_("previous-token"), N_("duplicate-token"), N_("induction"), N_("prefix-matching"),
               N_("first-token share"))
TARGET_COLOR = "#e31a1c"
COPY_COLOR = "#2ca02c"


def _ticks(labels: Sequence[object]) -> list[str]:
    return [safe_label(x) for x in labels]


def training_curves(record: AttentionRecord, *, height: int | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the loss curves over training and, under them on the same step axis, one heatmap per
    score (heads × steps): previous-token, duplicate-token and prefix-matching.

    record: weights [score, head, step] (models.induction.records.training_record), extras steps,
    loss, first_half_loss, repeated_loss, snapshot_steps; meta mixture_from (optional: the last step on
    the original task alone, drawn dashed). The snapshots are ticks on the repeated-half loss; the
    figure does not depend on the snapshot picked, so the page keeps it drawn when the snapshot moves.
    """
    _ = gettext
    steps = np.asarray(record.extras["steps"])
    heads = [safe_label(h) for h in record.meta["heads"]]
    titles = [_("loss (nats)"), *(_("{score} score").format(score=safe_label(_(s))) for s in record.query_labels)]
    fig = make_subplots(rows=1 + len(record.query_labels), cols=1, shared_xaxes=True, vertical_spacing=0.05,
                        row_heights=[0.34] + [0.66 / len(record.query_labels)] * len(record.query_labels),
                        subplot_titles=titles)
    for name, color in LOSS_COLORS.items():
        values = np.asarray(record.extras[name], np.float64)
        fig.add_trace(go.Scatter(x=steps, y=values, mode="lines", name=_(LOSS_NAMES[name]), line={"color": color, "width": 2},
                                 hovertemplate=_("step %{x}<br>%{y:.3f} nats") + f"<extra>{_(LOSS_NAMES[name])}</extra>"),
                      row=1, col=1)
    snaps = np.asarray(record.extras.get("snapshot_steps", ()), np.int64)
    if snaps.size:
        repeated = np.interp(snaps, steps, np.asarray(record.extras["repeated_loss"], np.float64))
        fig.add_trace(go.Scatter(x=snaps, y=repeated, mode="markers", name=_("snapshots (the slider's steps)"),
                                 marker={"symbol": "line-ns-open", "size": 10, "color": "#000000"},
                                 hovertemplate=_("snapshot at step %{x}") + "<extra></extra>"), row=1, col=1)
    add_score_heatmaps(fig, record.weights, steps, heads, titles[1:], first_row=2, colorbar=(0.62, 0.31), gettext=_)
    mixed_after = record.meta.get("mixture_from")
    if mixed_after is not None:  # where the short repeats joined the training data
        fig.add_vline(x=int(mixed_after), line={"color": "#555555", "width": 1, "dash": "dash"}, row=1, col=1,
                      annotation_text=_("short repeats mixed in"), annotation_position="top right",
                      annotation_font_size=13)
    fig.update_yaxes(title_text=_("nats"), rangemode="tozero", row=1, col=1)
    fig.update_xaxes(title_text=_("training step"), row=len(record.query_labels) + 1, col=1)
    fig.update_layout(height=height or 760)
    return fig


def add_score_heatmaps(fig: go.Figure, scores: np.ndarray, steps: np.ndarray, heads: Sequence[str],
                       names: Sequence[str], *, first_row: int, colorbar: tuple[float, float],
                       gettext: Gettext = untranslated) -> None:
    """Adds one heatmap per score (heads × steps) to the rows of `fig` from `first_row` down, on one colour
    axis from 0 to 1 whose bar has (length, y) `colorbar`, and the training figures' margins and legend.

    scores: [score, head, step]; names: one trace name per score.
    """
    _ = gettext
    for row, (values, name) in enumerate(zip(scores, names), start=first_row):  # values [head, step]
        fig.add_trace(go.Heatmap(
            z=values, x=steps, y=list(range(len(heads))), coloraxis="coloraxis", name=name,
            customdata=np.array([[h] * len(steps) for h in heads], dtype=object),
            hovertemplate=_("%{customdata} at step %{x}<br>score %{z:.3f}") + "<extra></extra>",
        ), row=row, col=1)
        fig.update_yaxes(tickmode="array", tickvals=list(range(len(heads))), ticktext=heads, autorange="reversed",
                         row=row, col=1)
    length, y = colorbar
    fig.update_layout(
        margin={"l": 10, "r": 10, "t": 40, "b": 10}, legend={"orientation": "h", "yanchor": "bottom", "y": 1.03, "x": 0},
        coloraxis={"colorscale": COLORSCALE, "cmin": 0.0, "cmax": 1.0,
                   "colorbar": {"title": {"text": _("score")}, "len": length, "y": y}})


def snapshot_note(record: AttentionRecord, step: int, drop: tuple[int, int] | None,
                  gettext: Gettext = untranslated) -> str:
    """Returns where a snapshot lies in training, in words: before, during or after the phase change
    (`drop`: the steepest fall of the repeated-half loss, first and last step), with that loss there.

    record: the training record (training_curves' input).
    """
    _ = gettext
    steps = np.asarray(record.extras["steps"])
    loss = float(np.interp(step, steps, np.asarray(record.extras["repeated_loss"], np.float64)))
    span = {"first": f"{drop[0]:,}", "last": f"{drop[1]:,}"} if drop is not None else {}
    if drop is None:
        where = _("no phase change in the log")
    elif step < drop[0]:
        where = _("before the phase change (steps {first}–{last})").format(**span)
    elif step <= drop[1]:
        where = _("during the phase change (steps {first}–{last})").format(**span)
    else:
        where = _("after the phase change (steps {first}–{last})").format(**span)
    mixed_after = record.meta.get("mixture_from")
    if mixed_after is not None and step > mixed_after:
        where = _("{where}, with short repeats in the training data").format(where=where)
    return _("Step {step}: {where}; loss on the repeated half {loss} nats.").format(
        step=f"{step:,}", where=where, loss=f"{loss:.2f}")


# The head view's axes label at most this many positions each (every k-th beyond it; hover names
# every cell's tokens). A browser redraws each tick label on every rerun, and the cost grows faster
# than their number: on a 64 × 64 heatmap 64 labels a side added ~730 ms to a round trip, 32 a side
# ~240 ms (measured in Chromium against a one-heatmap Streamlit app).
PATTERN_TICKS = 32


def _token_pairs(rows: Sequence[str], cols: Sequence[str]) -> np.ndarray:
    """Returns customdata [T_rows, T_cols, 2]: each cell's (row token, column token).

    A text array, filled by broadcasting: on a 64 × 64 map a Python loop over the cells took ~4 ms
    a rerun, and an object array's deep copy in plotly's to_dict another ~1 ms."""
    rows, cols = np.asarray(rows, dtype=str), np.asarray(cols, dtype=str)
    pairs = np.empty((len(rows), len(cols), 2), dtype=np.result_type(rows, cols))
    pairs[..., 0] = rows[:, None]
    pairs[..., 1] = cols[None, :]
    return pairs


def _pattern_heatmap(weights: np.ndarray, labels: Sequence[str], y_text: Sequence[str], title: str | None,
                     height: int | None, *, max_ticks: int | None = None,
                     markers: Sequence[dict] = (), gettext: Gettext = untranslated) -> go.Figure:
    # One head's [T, T] map on numeric axes; hover names both tokens; markers: scatter traces drawn
    # over it. max_ticks: label every k-th position only, so that at most that many labels show on
    # each axis. Built as plain plotly JSON (viz.plotly_json.quick_figure): a slider step rebuilds it.
    _ = gettext
    t = weights.shape[0]
    ticks = _ticks(labels)
    shown = list(range(0, t, 1 if max_ticks is None else tick_stride(t, max_ticks)))
    heatmap = {
        "type": "heatmap", "z": weights, "x": np.arange(t), "y": np.arange(t), "zmin": 0.0, "zmax": 1.0,
        "colorscale": COLORSCALE, "name": "α", "colorbar": {"title": {"text": "α"}},
        "customdata": _token_pairs(ticks, ticks),
        "hovertemplate": _("query %{y}: %{customdata[0]}<br>key %{x}: %{customdata[1]}") + "<br>α = %{z:.4f}<extra></extra>",
    }
    layout = {
        **({"title": {"text": html.escape(title)}} if title else {}),
        "height": height or int(min(max(360, 13 * t + 200), 900)),
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        "xaxis": {"title": {"text": _("key (attended token)")}, "tickmode": "array", "tickvals": shown,
                  "ticktext": [ticks[i] for i in shown], "range": [-0.5, t - 0.5], "tickangle": -90},
        "yaxis": {"title": {"text": _("query (current token)")}, "tickmode": "array", "tickvals": shown,
                  "ticktext": [y_text[i] for i in shown], "range": [t - 0.5, -0.5]},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
    }
    return quick_figure([heatmap, *markers], layout)


def head_pattern(record: AttentionRecord, layer: int, head: int, *, title: str | None = None,
                 show_targets: bool = True, height: int | None = None, gettext: Gettext = untranslated) -> go.Figure:
    """Returns one head's attention over a sequence as a heatmap (queries down, keys across).

    record: weights [layer, head, T, T] with extras tokens [T]. show_targets: outline the cells an
    induction head attends to (the token right after an earlier copy of the query's token). Each
    axis labels at most PATTERN_TICKS positions (the generated sequence's pattern is the point;
    hover names every cell's tokens); the copy view of a typed sequence labels every row.
    """
    weights = record.matrix(layer=layer, head=head)
    markers = []
    if show_targets:
        rows, cols = np.nonzero(induction_pattern(np.asarray(record.extras["tokens"])))
        markers.append({
            "type": "scatter", "x": cols, "y": rows, "mode": "markers",
            "name": gettext("token after an earlier copy (induction target)"),
            "marker": {"symbol": "square-open", "size": 7, "color": TARGET_COLOR, "line": {"width": 1}},
            "hovertemplate": gettext("induction target: query %{y} → key %{x}") + "<extra></extra>",
        })
    return _pattern_heatmap(weights, record.key_labels, _ticks(record.query_labels), title, height,
                            max_ticks=PATTERN_TICKS, markers=markers, gettext=gettext)


def copy_view(record: AttentionRecord, *, title: str | None = None, height: int | None = None,
              gettext: Gettext = untranslated) -> go.Figure:
    """Returns the induction head's attention over a sequence with the model's prediction in every
    row label ("token → predicted next") and a marker on the key each row reads most: green where
    that key follows an earlier copy of the row's token and holds the prediction (the head copied
    it), grey elsewhere.

    record: weights [layer, head, T, T], meta predictions, copies_from, copied, induction_head.
    """
    layer, head = record.meta["induction_head"]
    weights = record.matrix(layer=layer, head=head)
    predictions = record.meta["predictions"]
    rows = [f"{safe_label(tok)} → {safe_label(pred)}" for tok, pred in zip(record.query_labels, predictions)]
    reads = np.asarray(record.meta["copies_from"], np.int64)
    copied = np.asarray(record.meta["copied"], bool)
    positions = np.arange(len(reads))
    _ = gettext
    kinds = ((copied, _("copies: reads the token after an earlier copy and predicts it"), COPY_COLOR, "circle"),
             (~copied, _("reads most, no copy"), "#bbbbbb", "x"))
    markers = [{
        "type": "scatter", "x": reads[mask], "y": positions[mask], "mode": "markers", "name": name,
        "marker": {"symbol": symbol, "size": 9, "color": color, "line": {"color": "white", "width": 1}},
        "hovertemplate": _("query %{y} reads key %{x} most") + "<extra></extra>",
    } for mask, name, color, symbol in kinds]
    return _pattern_heatmap(weights, record.key_labels, rows, title, height, markers=markers, gettext=gettext)
