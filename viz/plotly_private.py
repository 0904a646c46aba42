"""Every private name of plotly.py that viz/ relies on, in one place.

plotly.py validates each property it is given and wraps every dict of a figure in an object. The
figure builders skip both where it costs a user time on every rerun: a 64 × 64 heatmap's figure
built with validation took about 15 ms of 17, and make_subplots plus validated traces made the
Playground's three panels about 5 × slower to build than moving their JSON (docs/PERFORMANCE.md,
"Workarounds of library behaviour"). What that takes of plotly.py:

- `go.Figure(spec, _validate=False)`: a figure from plain JSON, without validation;
- `fig._data` and `fig._layout`: the plain dicts the figure's objects read from and write to.

Pinned by requirements.txt (plotly==7.1.0); tests/viz/test_plotly_private.py fails when an upgrade
changes any of these. No streamlit, no jax.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go


def unchecked_figure(spec: dict[str, Any]) -> go.Figure:
    """Returns go.Figure(spec) built without plotly.py's per-property validation (spec's dicts are
    taken as they are: later changes to them show in the figure)."""
    return go.Figure(spec, _validate=False)


def layout_of(fig: go.Figure) -> dict[str, Any]:
    """Returns the plain dict behind fig.layout: read and written without building an object per key.
    A value written here shows in fig.layout and in the figure's JSON."""
    return fig._layout


def traces_of(fig: go.Figure) -> list[dict[str, Any]]:
    """Returns the plain dicts behind fig.data, one per trace, in order (written as layout_of)."""
    return fig._data
