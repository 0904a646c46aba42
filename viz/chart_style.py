"""The app's chart look, written into each figure's own layout, and a data revision.

Why not a template: st.plotly_chart's default theme puts Streamlit's look into `layout.template`,
and its browser component passes every new figure through that theme twice (JSON out and back
in). Plotly.react then meets a template object it has not seen, and new data arrays, and draws
the whole figure a second time: in bench/plotly_draw.py's mount table that second draw cost
62–190 ms a chart with a template and 8–29 ms with the look in the layout (docs/PERFORMANCE.md,
"Workarounds of library behaviour").

So the app shows its figures with `theme=None`, without a template, with the same look written
into the layout here, and with `layout.datarevision` set from the data: Plotly.react then knows
that nothing it was given is new and skips the redraw.

One more thing defeated that: plotly.py sends a numpy vector as a base64 typed array, which
plotly.js decodes into a new Float32Array on every pass, and its diff (which tests
`Array.isArray`) takes any typed array for a changed value, so the Playground's three panels were
drawn twice. So vectors go as plain JSON lists (`plain_vectors`); a 2-D `z` is decoded into an
Array of rows, which the diff passes. tests/e2e/test_chart_redraw_browser.py checks both.

Exports get the same look (viz/export.py), so a PNG is drawn as the page shows it.

The values are Streamlit's light chart theme (the app pins `base = "light"`), with darker and larger
text for reading on a projector (TEXT, TEXT_PX), as the browser
component of the Streamlit version in requirements.txt writes them into a figure's template; no
Python API gives them (its Python template holds placeholder colours), so tests/viz/test_chart_style.py
pins that version. No streamlit import here: viz never imports streamlit.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.fonts import FONT_FAMILY, TEXT_PX  # Streamlit's Source Sans first, then a CJK font for Chinese text
from viz.margins import AXIS_PAD, reserve_tick_margins
from viz.plotly_json import AXIS_NAME, OWN_COLORBAR, axis_of, quick_figure
from viz.plotly_private import layout_of, traces_of

# Text of axes, ticks and legends: Streamlit's gray-80, darker than its chart theme's #808495 (3.7:1
# on white), so that every figure text has contrast ≥ 4.5:1 (WCAG AA) on a projector
# (tests/viz/test_readability.py).
TEXT = "#555867"
HEADING = "#2F2D2B"
GRID = "#e6eaf1"
BACKGROUND = "#FFFFFF"
# Streamlit's categorical colours (colorway) and sequential scale, for traces that set none.
COLORWAY = ("#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a", "#6d3fc0", "#d5dae5")
SEQUENTIAL = ("#e4f5ff", "#c7ebff", "#a6dcff", "#83c9ff", "#60b4ff", "#3d9df3", "#1c83e1", "#0068c9", "#0054a3", "#004280")

# Titles a step above the text they name, for reading on a projector: axis and colour-bar titles at
# TEXT_PX + 2 (viz/margins.py reserves a colour bar's title at that size), a figure's title at TEXT_PX + 5.
AXIS_TITLE_PX = TEXT_PX + 2
TITLE_PX = TEXT_PX + 5
_AXIS_TITLE = {"font": {"color": TEXT, "size": AXIS_TITLE_PX}}
# No tickcolor: in a layout (unlike a template) a tick colour turns the ticks on, so it goes only
# on the axes of maps, which have ticks anyway.
_AXIS = {"zerolinecolor": GRID, "gridcolor": GRID, "tickfont": {"color": TEXT, "size": TEXT_PX}, "automargin": True}
LAYOUT: dict[str, Any] = {
    "font": {"color": TEXT, "family": FONT_FAMILY, "size": TEXT_PX, "weight": 400},
    "title": {"font": {"family": FONT_FAMILY, "size": TITLE_PX, "color": HEADING, "weight": 700},
              "pad": {"l": 4}, "xanchor": "left", "x": 0},
    "legend": {"title": {"font": {"size": TEXT_PX, "color": TEXT}, "side": "top"}, "valign": "top",
               "bordercolor": "transparent", "borderwidth": 0, "font": {"size": TEXT_PX, "color": "#262730"}},
    "paper_bgcolor": BACKGROUND,
    "plot_bgcolor": BACKGROUND,
    "margin": {"pad": AXIS_PAD, "r": 0, "l": 0},
    "hoverlabel": {"bgcolor": BACKGROUND, "bordercolor": "#DCD8D4",
                   "font": {"color": TEXT, "family": FONT_FAMILY, "size": TEXT_PX}},
    "colorway": list(COLORWAY),
}
X_AXIS = {**_AXIS, "showgrid": False, "zeroline": False, "title": {**_AXIS_TITLE, "standoff": 20}}
Y_AXIS = {**_AXIS, "ticklabelposition": "outside", "title": {**_AXIS_TITLE, "standoff": 24}}
COLOR_AXIS = {"colorscale": [[i / (len(SEQUENTIAL) - 1), c] for i, c in enumerate(SEQUENTIAL)],
              "colorbar": {"thickness": 16, "xpad": 24, "ticklabelposition": "outside", "outlinecolor": "transparent",
                           "outlinewidth": 8, "len": 0.75, "y": 0.5745,
                           "title": {"font": {"color": TEXT, "size": AXIS_TITLE_PX}},
                           "tickfont": {"color": TEXT, "size": TEXT_PX}}}
# Traces whose category axis plotly.js draws without grid lines. A grid or zero-line colour written
# into the layout (unlike one in a template) would turn them on.
_ORIENTED = {"bar", "box", "violin", "funnel"}


def for_the_page(fig: go.Figure) -> go.Figure:
    """Readies a figure to be shown (changed in place; returns it): the house look and data revision,
    then margins reserved for labels, colour bars and legends (viz/margins.py). Drawn once on mount, and not again by Streamlit's second pass.

    The look comes before the margins, whose room for a colour bar depends on the bar's thickness and
    padding, which the look sets: the other way round, a first call reserved 14 px too little for
    such a bar, and a second call on the same figure widened it (the page sent a figure kept in a
    shared cache one way to its first viewer and another way to everyone after). One call is final:
    a second changes nothing."""
    return reserve_tick_margins(house_style(fig))


def house_style(fig: go.Figure) -> go.Figure:
    """Writes the app's look into `fig`'s own layout (where the figure sets nothing itself), drops
    its template, and sets layout.datarevision from its data; returns fig, changed in place.

    Written straight into plotly.py's property dicts: validating the same values through
    update_layout took ~27 ms a figure, this takes well under 1 ms. Running it twice changes nothing.
    """
    styled_spec({"data": traces_of(fig), "layout": layout_of(fig)})
    return fig


def styled_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """house_style for a figure as a plain dict ({"data": [...], "layout": {...}}); returns it,
    changed in place."""
    layout, data = spec.setdefault("layout", {}), spec.get("data") or []
    layout.pop("template", None)
    for trace in data:
        if trace.get("type") in _ORIENTED:  # their category axis draws no grid and no zero line
            _under(_axis_dict(layout, trace, "y" if trace.get("orientation") == "h" else "x"),
                   {"showgrid": False, "zeroline": False})
        if trace.get("type") in OWN_COLORBAR or trace.get("type") == "image":  # their axes have ticks
            for along in "xy":
                axis = _axis_dict(layout, trace, along)
                # but not an axis without labels (a panel beside another on a shared axis): its tick
                # marks alone were drawn over the panel on its left.
                _under(axis, {"tickcolor": GRID} if axis.get("showticklabels") is not False else {"ticks": ""})
    _titled(layout)
    _under(layout, LAYOUT)
    for key in [k for k in layout if AXIS_NAME.fullmatch(k)] + ["xaxis", "yaxis"]:
        if isinstance(layout.setdefault(key, {}), dict):
            _titled(layout[key])
            _under(layout[key], X_AXIS if key[0] == "x" else Y_AXIS)
    for key in [k for k in layout if k.startswith("coloraxis")]:
        if isinstance(layout[key], dict):
            _under(layout[key], COLOR_AXIS)
    for trace in data:
        if trace.get("type", "scatter") == "scatter":  # no outline round bubbles (plotly.js draws one)
            _under(trace.setdefault("marker", {}), {"line": {"width": 0}})
        if trace.get("type") in OWN_COLORBAR and trace.get("colorscale") is None and "coloraxis" not in trace:
            trace["colorscale"] = copy.deepcopy(COLOR_AXIS["colorscale"])
        plain_vectors(trace)
    layout["datarevision"] = data_revision(data)
    return spec


# Longest vector sent as a JSON list. plotly.py writes ~1.3 µs a float as a list, against ~0.1 µs as
# base64: two 10,000-step curves took 29 ms to send instead of 3. The server is shared by everyone
# using the app and the browser is not, so longer vectors keep base64 and their second draw.
MAX_PLAIN = 5_000
SIGNIFICANT = 7  # float32 holds ~7.2 significant decimal digits; shorter numbers, nothing lost on screen


def plain_vectors(container: dict[str, Any]) -> None:
    """Replaces, in place and at any depth, every numeric 1-D numpy array of `container` (a trace)
    of at most MAX_PLAIN values with a list: floats rounded to SIGNIFICANT digits, NaN and ±inf
    as None (plotly.js's gap, what the encoder would write for them)."""
    for key, value in container.items():
        if isinstance(value, dict):
            plain_vectors(value)
        elif isinstance(value, np.ndarray) and value.ndim == 1 and value.size <= MAX_PLAIN and value.dtype.kind in "fiub":
            container[key] = _rounded(value) if value.dtype.kind == "f" else value.tolist()


def _rounded(values: np.ndarray) -> list[float | None]:
    # x → round(x · 10^k) / 10^k with k = SIGNIFICANT − 1 − ⌊log10 |x|⌋: an integer over an exact power
    # of ten, which IEEE division rounds to the double nearest that decimal, so Python writes it short.
    x = values.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = (SIGNIFICANT - 1) - np.floor(np.log10(np.abs(x)))
        exact = np.isfinite(k) & (np.abs(k) <= 22)  # 10^k is exact up to 10^22; others stay as they are
        scale = 10.0 ** np.where(exact, np.abs(k), 0.0)
        rounded = np.where(k >= 0, np.round(x * scale) / scale, np.round(x / scale) * scale)
    out = np.where(exact, rounded, x).tolist()
    if not np.isfinite(x).all():
        out = [v if v == v and abs(v) != float("inf") else None for v in out]
    return out


def data_revision(data: list[dict[str, Any]]) -> str:
    """A digest of the traces: it changes whenever any value a trace holds changes."""
    digest = hashlib.blake2b(digest_size=12)
    for trace in data:
        _feed(digest, {k: v for k, v in trace.items() if k != "uid"})
    return digest.hexdigest()


_NUMBER = (float, int, type(None))  # what a vector sent as a list holds (None: a gap); not bool


def _feed(digest: Any, value: Any) -> None:
    if isinstance(value, np.ndarray):
        digest.update(f"a{value.dtype.str}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes() if value.dtype != object else repr(value.tolist()).encode())
    elif isinstance(value, dict):
        digest.update(b"{")
        for key in sorted(value):
            digest.update(f"{key}:".encode())
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, list) and value and all(type(item) in _NUMBER for item in value):  # a plain vector
        digest.update(b"n")
        digest.update(np.array([np.nan if item is None else item for item in value], np.float64).tobytes())
    elif isinstance(value, (list, tuple)):
        digest.update(b"[")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    else:
        digest.update(f"{type(value).__name__}{value!r},".encode())


def _axis_dict(layout: dict[str, Any], trace: dict[str, Any], along: str) -> dict[str, Any]:
    # The layout's dict of the trace's x or y axis ("x3" → layout["xaxis3"]), made if missing.
    axis = layout.setdefault(axis_of(trace, along), {})
    return axis if isinstance(axis, dict) else {}


def _titled(container: dict[str, Any]) -> None:
    # A title given as plain text (builders that skip plotly.py's validation keep it so) is the
    # same as {"text": ...}; as a dict it can take the house font.
    if isinstance(container.get("title"), str):
        container["title"] = {"text": container["title"]}


def _under(own: dict[str, Any], house: dict[str, Any]) -> None:
    """Copies into `own` every value of `house` that `own` does not set, at any depth."""
    for key, value in house.items():
        if key not in own or own[key] is None:
            own[key] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(own[key], dict):
            _under(own[key], value)


# Every key of a plotly figure that holds a font ({"size": …}): the layout's, titles', ticks', legends',
# colour bars', annotations' and hover labels' (all named "font" or "tickfont"), and the traces' own texts.
_FONT_KEYS = frozenset({"font", "tickfont", "textfont", "insidetextfont", "outsidetextfont"})


def _scale_font_sizes(node: Any, factor: float) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _FONT_KEYS and isinstance(value, dict) and isinstance(value.get("size"), (int, float)):
                value["size"] = round(value["size"] * factor, 1)
            _scale_font_sizes(value, factor)
    elif isinstance(node, list):
        for item in node:
            _scale_font_sizes(item, factor)


def with_text_scaled(fig: go.Figure, factor: float) -> go.Figure:
    """Returns a copy of `fig` (readied by for_the_page) with every text `factor` times its size, for a
    projector: the top margin (which holds the title) and the height grow with it, and the margins for
    the larger labels are reserved again. `fig` is left as it is: a page may share it between sessions.

    A fullscreen chart grows its plot and not its text (plotly.js sizes text in px), and at 15 px a tick
    label is small from the back of a room: this is the sidebar's "Large text" (ui.widgets.show_panels)."""
    if factor == 1:
        return fig
    data, layout = copy.deepcopy(traces_of(fig)), copy.deepcopy(layout_of(fig))
    layout.setdefault("font", {}).setdefault("size", TEXT_PX)
    _scale_font_sizes({"layout": layout, "data": data}, factor)
    margin = layout.setdefault("margin", {})
    if isinstance(margin.get("t"), (int, float)):
        margin["t"] = round(margin["t"] * factor)
    if isinstance(layout.get("height"), (int, float)):
        layout["height"] = round(layout["height"] * (1 + (factor - 1) / 2))
    return reserve_tick_margins(quick_figure(data, layout))
