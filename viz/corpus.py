"""Figures of the corpus page: every head by two statistics (HeadVis), and a head's joint query–key plane.

numpy and plotly only: the page passes arrays from models/corpus (no jax, no streamlit here).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from viz.i18n_text import N_, Gettext, untranslated

LAYER_SCALE = "Viridis"
QUERY_SYMBOL, KEY_SYMBOL = "circle", "diamond-open"


def _layer_colours(layers: int) -> list[str]:
    return sample_colorscale(LAYER_SCALE, [i / max(layers - 1, 1) for i in range(layers)])


def head_scatter(mean: np.ndarray, std: np.ndarray, statistics: Sequence[str], labels: dict[str, str],
                 x: str, y: str, *, selected: tuple[int, int] | None = None, height: int = 480,
                 gettext: Gettext = untranslated) -> go.Figure:
    """Returns a scatter of every head: x and y are two statistics' means over the corpus, one trace
    (colour) per layer; hover gives layer, head, both means and spreads. mean, std [L, H, S].

    Each point's customdata is [layer, head] (the page reads a click from it).
    """
    _ = gettext
    sx, sy = statistics.index(x), statistics.index(y)
    layers, heads = mean.shape[:2]
    fig = go.Figure()
    for layer, colour in enumerate(_layer_colours(layers)):
        custom = np.stack([np.full(heads, layer), np.arange(heads), std[layer, :, sx], std[layer, :, sy]], axis=1)
        fig.add_trace(go.Scatter(
            x=mean[layer, :, sx].tolist(), y=mean[layer, :, sy].tolist(), mode="markers",
            name=_("layer {layer}").format(layer=layer),
            marker={"size": 10, "color": colour, "line": {"width": 1, "color": "white"}},
            customdata=custom.tolist(),
            hovertemplate=(_("layer {layer}, head {head}").format(layer="%{customdata[0]}", head="%{customdata[1]}")
                           + f"<br>{labels.get(x, x)}: %{{x:.3f}} "
                           f"± %{{customdata[2]:.3f}}<br>{labels.get(y, y)}: %{{y:.3f}} ± %{{customdata[3]:.3f}}"
                           "<extra></extra>"),
        ))
    if selected is not None:
        layer, head = selected
        fig.add_trace(go.Scatter(x=[float(mean[layer, head, sx])], y=[float(mean[layer, head, sy])], mode="markers",
                                 name=f"L{layer}H{head}", hoverinfo="skip",
                                 marker={"size": 18, "symbol": "circle-open", "color": "crimson", "line": {"width": 2}}))
    fig.update_layout(height=height, xaxis_title=labels.get(x, x), yaxis_title=labels.get(y, y),
                      legend_title_text=_("Layer"), margin={"t": 30})
    return fig


COLOUR_BY = (N_("position"), N_("norm"))


def query_key_plane(query_xy: np.ndarray, key_xy: np.ndarray, tokens: Sequence[str], contexts: Sequence[str],
                    positions: np.ndarray, query_norm: np.ndarray, key_norm: np.ndarray, *, colour_by: str = "position",
                    title: str | None = None, height: int = 520, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the joint query–key plot of one head: queries as filled circles, keys as open diamonds,
    both coloured by token position or by vector norm; hover gives kind, token, position and context.

    query_xy, key_xy [N, 2]; tokens, contexts [N]; positions int [N]; query_norm, key_norm [N].
    """
    _ = gettext
    if colour_by not in COLOUR_BY:
        raise ValueError(f"colour_by must be one of {', '.join(COLOUR_BY)}, got {colour_by!r}")
    positions = np.asarray(positions)
    fig = go.Figure()
    low, high = (0, int(positions.max()) if positions.size else 1) if colour_by == "position" else (
        float(min(query_norm.min(), key_norm.min())), float(max(query_norm.max(), key_norm.max())))
    for kind, name, xy, symbol, norm, show_scale in (
            (_("query"), _("queries"), query_xy, QUERY_SYMBOL, query_norm, True),
            (_("key"), _("keys"), key_xy, KEY_SYMBOL, key_norm, False)):
        colour = positions if colour_by == "position" else norm
        custom = [[kind, t, int(p), c, float(n)] for t, p, c, n in zip(tokens, positions, contexts, norm)]
        fig.add_trace(go.Scattergl(
            x=np.asarray(xy)[:, 0].tolist(), y=np.asarray(xy)[:, 1].tolist(), mode="markers", name=name,
            marker={"symbol": symbol, "size": 6, "color": np.asarray(colour, float).tolist(), "colorscale": "Plasma",
                    "cmin": low, "cmax": high, "showscale": show_scale,
                    "colorbar": {"title": {"text": _(colour_by)}} if show_scale else None,
                    "line": {"width": 1} if symbol == KEY_SYMBOL else None},
            customdata=custom,
            hovertemplate=_("{kind} “{token}” at {position}, norm {norm}").format(
                kind="%{customdata[0]}", token="%{customdata[1]}", position="%{customdata[2]}",
                norm="%{customdata[4]:.2f}") + "<br>%{customdata[3]}<extra></extra>",
        ))
    fig.update_layout(height=height, title=title, xaxis_title="PC 1", yaxis_title="PC 2",
                      yaxis={"scaleanchor": "x"}, legend={"orientation": "h", "y": -0.15}, margin={"t": 40})
    return fig
