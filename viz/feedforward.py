"""Figures for feed-forward attention: α over time with the marked steps highlighted.

Long sequences (up to 10,000 steps) are drawn as one WebGL line, never as thousands of bars.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord

WEBGL_ABOVE = 2_000  # steps; longer series use Scattergl
MARK_COLOR = "#d62728"
LINE_COLOR = "#1f77b4"


def alpha_over_time(
    record: AttentionRecord,
    *,
    title: str | None = None,
    log_y: bool | None = None,
    height: int | None = None,
) -> go.Figure:
    """Returns a line of α_t over t, diamonds on the marked steps and the uniform level 1/T.

    record: weights [T] (axes ("time",)), extras["marked"] (2,) optional.
    """
    alpha = np.asarray(record.weights, np.float64).reshape(-1)
    length = alpha.size
    steps = np.arange(length)
    marked = np.asarray(record.extras.get("marked", ()), int).reshape(-1)
    line = go.Scattergl if length > WEBGL_ABOVE else go.Scatter
    fig = go.Figure()
    fig.add_trace(
        line(
            x=steps,
            y=alpha,
            mode="lines+markers" if length <= 200 else "lines",
            name="α_t",
            line=dict(color=LINE_COLOR, width=1),
            marker=dict(size=3),
            hovertemplate="t = %{x}<br>α = %{y:.3g}<extra></extra>",
        )
    )
    if marked.size:
        fig.add_trace(
            go.Scatter(
                x=marked,
                y=alpha[marked],
                mode="markers",
                name="marked steps",
                marker=dict(symbol="diamond", size=11, color=MARK_COLOR, line=dict(color="white", width=1)),
                hovertemplate="marked t = %{x}<br>α = %{y:.3g}<extra></extra>",
            )
        )
        for step in marked:
            fig.add_vline(x=int(step), line=dict(color=MARK_COLOR, width=1, dash="dot"), opacity=0.5)
    fig.add_hline(
        y=1.0 / length,
        line=dict(color="#7f7f7f", width=1, dash="dash"),
        annotation_text="uniform 1/T",
        annotation_position="top right",
    )
    fig.update_layout(
        title=dict(text=title) if title else None,
        height=height or 320,
        margin=dict(l=60, r=20, t=50 if title else 20, b=45),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        xaxis=dict(title="time step t", range=[-0.5, length - 0.5]),
        yaxis=dict(title="α_t", type="log" if log_y else "linear", exponentformat="power",
                   rangemode="normal" if log_y else "tozero"),
    )
    return fig
