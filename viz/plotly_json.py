"""Plotly JSON plumbing shared by the figure builders: figures built without plotly.py's
per-property validation, subplot grids built once, and the axis setting every shown figure gets.

No streamlit, no jax. viz/figures.py and the family modules build their figures with these.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import plotly.colors
import plotly.graph_objects as go
from plotly.subplots import make_subplots


@functools.lru_cache(maxsize=64)
def subplot_grid(rows: int, cols: int, **options: Any) -> tuple[str, tuple[tuple[dict[str, str], ...], ...]]:
    """Returns make_subplots(rows, cols, **options)'s layout as JSON and each cell's axes
    ({"xaxis": "x3", "yaxis": "y3"}, [row][col], 0-based). make_subplots validates every property
    it sets (~0.1 s for a grid of panels); a page redraws the same grid on every rerun, so each grid
    is built once. Options must be hashable (tuples for titles)."""
    fig = make_subplots(rows=rows, cols=cols, **{k: list(v) if isinstance(v, tuple) else v for k, v in options.items()})
    # make_subplots numbers a plain grid's axes row by row: x, x2, x3, … (and y, y2, …).
    names = [["" if r * cols + c == 0 else str(r * cols + c + 1) for c in range(cols)] for r in range(rows)]
    axes = tuple(tuple({"xaxis": f"x{n}", "yaxis": f"y{n}"} for n in row) for row in names)
    return json.dumps(fig.layout.to_plotly_json()), axes


def quick_figure(data: list[dict], layout: dict) -> go.Figure:
    """Returns go.Figure(data, layout) built without plotly's per-property validation.

    Validation is most of a figure's build time (a 64 × 64 heatmap: ~15 ms of ~17 on this
    machine), and it runs again on every rerun of a page. The builders that use this write
    plain plotly JSON from checked arrays and fixed names, and tests/viz check what they draw;
    later update_layout / add_shape calls on the figure skip validation too.
    """
    for part in [*data, *(v for k, v in layout.items() if k.startswith("coloraxis") and isinstance(v, dict))]:
        if isinstance(part.get("colorscale"), str):  # plotly.js knows only a few names: send the colours
            part["colorscale"] = _colorscale(part["colorscale"])
    return go.Figure({"data": data, "layout": layout}, _validate=False)


_AXIS_NAME = re.compile(r"[xy]axis\d*")


def allow_tick_overflow(fig: go.Figure) -> go.Figure:
    """Sets ticklabeloverflow = "allow" on every x and y axis of `fig` that leaves it unset; returns fig.

    plotly.js's default ("hide past div") measures every tick label against the figure's box on
    every redraw. With 64 labels a side that tripled a 64 × 64 heatmap's round trip in Chromium
    (1,115 → 504 ms with "allow", floor 355 ms: bench/figure_cost.py --ticks, docs/PERFORMANCE.md). The labels
    stay where they were: automargin already keeps them inside the figure.
    """
    names = {"xaxis", "yaxis", *(k for k in fig.layout.to_plotly_json() if _AXIS_NAME.fullmatch(k))}
    for name in sorted(names):
        axis = fig.layout[name]
        if axis.ticklabeloverflow is None:
            axis.ticklabeloverflow = "allow"
    return fig


@functools.lru_cache(maxsize=32)
def _colorscale(name: str) -> tuple[tuple[float, str], ...]:
    return tuple((float(at), colour) for at, colour in plotly.colors.get_colorscale(name))


def tick_stride(count: int, most: int) -> int:
    """Returns k such that labelling every k-th of `count` positions shows at most `most` labels."""
    return 1 if count <= most else int(-(-count // most))
