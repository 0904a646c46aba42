"""Plotly JSON plumbing shared by the figure builders: figures built without plotly.py's
per-property validation (viz/plotly_private.py), subplot grids built once, and panels side by side.

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

from viz.fonts import TEXT_PX
from viz.plotly_private import layout_of, traces_of, unchecked_figure

PANEL_HEADING_PX = TEXT_PX + 2  # a panel's title in side_by_side (bold), as large as an axis title


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

    Validation is most of a figure's build time (the app's 64 × 64 head map: 10.7 ms validated,
    0.8 ms without, at load 20 on 2 cores; docs/PERFORMANCE.md, "Workarounds of library
    behaviour"), and it runs again on every rerun of a page. The builders that use this write
    plain plotly JSON from checked arrays and fixed names, and tests/viz check what they draw;
    later update_layout / add_shape calls on the figure skip validation too.
    """
    for part in [*data, *(v for k, v in layout.items() if k.startswith("coloraxis") and isinstance(v, dict))]:
        if isinstance(part.get("colorscale"), str):  # plotly.js knows only a few names: send the colours
            part["colorscale"] = colorscale_stops(part["colorscale"])
    return unchecked_figure({"data": data, "layout": layout})


def with_width(fig: go.Figure, width: int) -> go.Figure:
    """Returns a copy of `fig` `width` px wide (an export's size: a page's chart takes its column's
    width), built without validation; `fig` is left as it was."""
    spec = fig.to_dict()
    spec["layout"]["width"] = int(width)
    return unchecked_figure(spec)


AXIS_NAME = re.compile(r"[xy]axis\d*")
OWN_COLORBAR = {"heatmap", "contour", "histogram2d", "histogram2dcontour"}  # traces with a top-level colorbar


def axis_of(trace: dict, letter: str) -> str:
    """Returns the layout key of a trace's x or y axis: "x3" → "xaxis3", none → "xaxis"."""
    return (trace.get(f"{letter}axis") or letter).replace(letter, f"{letter}axis", 1)


@functools.lru_cache(maxsize=32)
def colorscale_stops(name: str) -> tuple[tuple[float, str], ...]:
    """Returns a named plotly colour scale as its stops: ((position 0–1, colour), …)."""
    return tuple((float(at), colour) for at, colour in plotly.colors.get_colorscale(name))


def tick_stride(count: int, most: int) -> int:
    """Returns k such that labelling every k-th of `count` positions shows at most `most` labels."""
    return 1 if count <= most else int(-(-count // most))


_REF_KEYS = ("anchor", "overlaying", "matches", "scaleanchor")
SCALED = ("heatmap", "contour", "histogram2d")  # traces that draw a colour bar unless told not to
NOT_LISTED = (*SCALED, "image")  # traces plotly lists in no legend unless told
COLORBAR_ROOM = 0.06  # of the figure's width, kept at the right of a panel for its colour bar


def _axis_id(layout_key: str) -> str:
    # "xaxis" -> "x", "yaxis3" -> "y3"
    return layout_key[0] + layout_key[5:]


def _layout_key(axis_id: str) -> str:
    return f"{axis_id[0]}axis{axis_id[1:]}"


def has_colorbar(trace: dict) -> bool:
    return ("colorbar" in trace or trace.get("type") in SCALED) and \
        trace.get("showscale", True) is not False and "coloraxis" not in trace


def _beside(colorbar: dict, right: float) -> dict:
    # A copy of a colour bar, placed just right of a panel whose plot area ends at `right`.
    return {**colorbar, "x": right + 0.008, "xanchor": "left", "thickness": 12}


def side_by_side(
    figures: list[go.Figure],
    *,
    widths: list[float] | None = None,
    gap: float = 0.05,
    share_y: bool = False,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """Returns one figure holding `figures` as panels from left to right, each drawn as it was
    (axes, colour bars, shapes, annotations and hover moved into its own slot; its title becomes
    the panel's heading). A control that changes several panels then redraws one figure: the
    browser draws a figure of two or three panels at about half the cost of as many figures.
    Not make_subplots: its grid cannot hold a panel of two rows beside panels of one without
    rebuilding every panel's axes, and with validated traces it built the Playground's three
    panels about 5 × slower (docs/PERFORMANCE.md, "Workarounds of library behaviour").

    widths: each panel's share of the width (default equal); gap: the space between panels;
    share_y: the panels have the same rows, so later panels match the first panel's y axis and
    hide its labels. Every part is plain JSON moved, not rebuilt: no validation.
    """
    if not figures:
        raise ValueError("side_by_side needs at least one figure")
    # The figures' own dicts (numpy arrays as they are; to_plotly_json would encode them): copied
    # where changed below, never changed in place.
    parts = [{"data": traces_of(fig), "layout": layout_of(fig)} for fig in figures]
    shares = list(widths) if widths is not None else [1.0] * len(parts)
    if len(shares) != len(parts) or min(shares) <= 0:
        raise ValueError("widths must give one positive share per figure")
    usable = 1.0 - gap * (len(parts) - 1)
    total = sum(shares)
    data: list[dict] = []
    layout: dict[str, Any] = {"shapes": [], "annotations": []}
    counters = {"x": 0, "y": 0, "coloraxis": 0}
    first_y: str | None = None
    left = 0.0
    top_margin = 40 if title else 20
    showlegend = False
    for index, (part, share) in enumerate(zip(parts, shares)):
        source = part.get("layout", {})
        traces = part.get("data", [])
        slot = (left, left + usable * share / total)
        left = slot[1] + gap
        room = COLORBAR_ROOM if any(has_colorbar(t) for t in traces) or any(
            k.startswith("coloraxis") for k in source) else 0.0
        plot = (slot[0], slot[1] - room)
        # New ids for every axis the panel uses (named in its layout or by a trace).
        used = {_axis_id(k) for k in source if AXIS_NAME.fullmatch(k)}
        used |= {t.get("xaxis", "x") for t in traces} | {t.get("yaxis", "y") for t in traces}
        renamed = {}
        for old in sorted(used):
            counters[old[0]] += 1
            renamed[old] = old[0] + ("" if counters[old[0]] == 1 else str(counters[old[0]]))
        colour_axes = {}
        for key in sorted(k for k in source if k.startswith("coloraxis")):
            counters["coloraxis"] += 1
            colour_axes[key] = "coloraxis" + ("" if counters["coloraxis"] == 1 else str(counters["coloraxis"]))

        def ref(value: Any, renamed=renamed) -> Any:
            # "x2", "x2 domain" -> the new id; "paper" and anything else stay.
            if not isinstance(value, str):
                return value
            head, _, tail = value.partition(" ")
            return renamed[head] + (f" {tail}" if tail else "") if head in renamed else value

        def across(x: float, plot=plot) -> float:
            return plot[0] + float(x) * (plot[1] - plot[0])

        for old, new in renamed.items():
            axis = dict(source.get(_layout_key(old), {}))
            for key in _REF_KEYS:
                if key in axis:
                    axis[key] = ref(axis[key])
            if old[0] == "x":
                lo, hi = axis.get("domain", (0.0, 1.0))
                axis["domain"] = [max(0.0, across(lo)), min(1.0, across(hi))]  # shares may sum to 1 + 1e-16
            elif share_y:
                if index == 0 and old == "y":
                    first_y = new
                elif first_y is not None:
                    axis.update(matches=first_y, showticklabels=False)
                    axis.pop("title", None)
            layout[_layout_key(new)] = axis
        for key, new in colour_axes.items():
            colour = dict(source[key])
            colour["colorbar"] = _beside(colour.get("colorbar", {}), plot[1])
            layout[new] = colour
        # The legend as the panel's own figure would show it: as set, else when 2+ traces would be listed.
        listed = [t for t in traces if t.get("showlegend", t.get("type") not in NOT_LISTED) is not False]
        legend = bool(source["showlegend"]) if "showlegend" in source else len(listed) > 1
        showlegend = showlegend or legend
        for trace in traces:
            trace = dict(trace)
            if not legend:
                trace["showlegend"] = False
            trace["xaxis"], trace["yaxis"] = renamed[trace.get("xaxis", "x")], renamed[trace.get("yaxis", "y")]
            # An axis without an anchor sits on the figure's first axis ("x" or "y"): here, on its own partner.
            layout[_layout_key(trace["xaxis"])].setdefault("anchor", trace["yaxis"])
            layout[_layout_key(trace["yaxis"])].setdefault("anchor", trace["xaxis"])
            if trace.get("coloraxis") in colour_axes:
                trace["coloraxis"] = colour_axes[trace["coloraxis"]]
            elif has_colorbar(trace):
                trace["colorbar"] = _beside(trace.get("colorbar", {}), plot[1])
            data.append(trace)
        for kind in ("shapes", "annotations"):
            for item in source.get(kind, ()):
                item = {**item, "xref": ref(item.get("xref", "paper" if kind == "annotations" else "x")),
                        "yref": ref(item.get("yref", "paper" if kind == "annotations" else "y"))}
                if item["xref"] == "paper":
                    for key in ("x", "x0", "x1"):
                        if key in item:
                            item[key] = across(item[key])
                layout[kind].append(item)
        heading = (source.get("title") or {}).get("text")
        if heading:
            layout["annotations"].append({
                "text": f"<b>{heading}</b>", "x": (plot[0] + plot[1]) / 2, "xref": "paper", "xanchor": "center",
                "y": 1.0, "yref": "paper", "yanchor": "bottom", "yshift": 8, "showarrow": False,
                "font": {"size": PANEL_HEADING_PX},
            })
        margin = source.get("margin", {})
        top_margin = max(top_margin, int(margin.get("t", 40)) + (20 if title and heading else 0))
        if "plot_bgcolor" in source and "plot_bgcolor" not in layout:
            layout["plot_bgcolor"] = source["plot_bgcolor"]
        if legend and "legend" not in layout:  # the first listed panel's legend, under or beside that panel
            placed = dict(source.get("legend", {}))
            vertical = placed.get("orientation", "v") == "v"
            placed["x"] = across(placed.get("x", 1.02 if vertical else 0.0))
            layout["legend"] = placed
    layout.update(
        height=height or max(int(p.get("layout", {}).get("height") or 450) for p in parts),
        margin={"l": 10, "r": 10, "t": top_margin, "b": 10}, showlegend=showlegend,
    )
    if title:
        layout["title"] = {"text": title}
    return unchecked_figure({"data": data, "layout": layout})
