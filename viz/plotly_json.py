"""Plotly JSON plumbing shared by the figure builders: figures built without plotly.py's
per-property validation, subplot grids built once, and the axis setting every shown figure gets.

No streamlit, no jax. viz/figures.py and the family modules build their figures with these.
"""

from __future__ import annotations

import functools
import html
import json
import math
import re
import unicodedata
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
            part["colorscale"] = colorscale_stops(part["colorscale"])
    return go.Figure({"data": data, "layout": layout}, _validate=False)


_AXIS_NAME = re.compile(r"[xy]axis\d*")
_OWN_COLORBAR = {"heatmap", "contour", "histogram2d", "histogram2dcontour"}  # traces with a top-level colorbar


def allow_tick_overflow(fig: go.Figure) -> go.Figure:
    """Sets ticklabeloverflow = "allow" on every x and y axis and colour bar of `fig` that leaves it unset.

    plotly.js's default ("hide past div") measures every tick label against the figure's box on
    every redraw. With 64 labels a side that tripled a 64 × 64 heatmap's round trip in Chromium
    (1,115 → 504 ms with "allow", floor 355 ms: bench/figure_cost.py --ticks, docs/PERFORMANCE.md). Labels stay
    where they were: automargin keeps them inside the figure, as the right margin does a colour bar's
    (a bar's few labels: 1–2 ms of a newPlot in bench/plotly_draw.py, docs/PERFORMANCE.md). Returns fig."""
    layout = fig._layout  # plotly's own dict, read without building an object per axis
    names = {"xaxis", "yaxis", *(k for k in layout if _AXIS_NAME.fullmatch(k))}
    unset = [name for name in sorted(names) if (layout.get(name) or {}).get("ticklabeloverflow") is None]
    for name in unset:
        fig.layout[name].ticklabeloverflow = "allow"
    for name in sorted(k for k in layout if k.startswith("coloraxis")):
        if isinstance(layout[name], dict) and (layout[name].get("colorbar") or {}).get("ticklabeloverflow") is None:
            fig.layout[name].colorbar.ticklabeloverflow = "allow"
    for trace, raw in zip(fig.data, fig._data):  # a trace's own bar (none on a shared colour axis)
        if raw.get("type") in _OWN_COLORBAR and "coloraxis" not in raw and raw.get("showscale") is not False:
            if (raw.get("colorbar") or {}).get("ticklabeloverflow") is None:
                trace.colorbar.ticklabeloverflow = "allow"
    return fig


def upright_numeric_ticks(fig: go.Figure) -> go.Figure:
    """Sets tickangle = 0 on every x axis that shows plotly.js's own numbers, where the layout leaves
    tickangle unset; returns fig. An axis with text categories, ticktext, or a date or category type
    keeps "auto".

    With "auto", plotly.js measures every x tick label on every redraw, to see whether the labels
    overlap and must turn: a forced layout each, in a page as large as Streamlit's. Its own numbers
    are spaced for their width and stay upright anyway. The feed-forward page's time axis relabels
    with every change of T. In paired runs of bench/ui_latency.py, the T slider went from 1.45 to
    1.11 × its floor with every x axis upright, and from 1.33 to 1.26 × with this function
    (docs/PERFORMANCE.md).
    """
    layout = fig._layout
    numeric: dict[str, bool] = {}
    for trace in fig._data:
        name = _axis_of(trace, "x")
        numeric[name] = numeric.get(name, True) and _plots_numbers(trace.get("x"))
    for name, is_number in sorted(numeric.items()):
        axis = layout.get(name) or {}
        if not is_number or axis.get("tickangle") is not None or axis.get("ticktext") is not None \
                or axis.get("type") in ("category", "multicategory", "date"):
            continue
        fig.layout[name].tickangle = 0
    return fig


def _axis_of(trace: dict, letter: str) -> str:
    """Returns the layout key of a trace's x or y axis: "x3" → "xaxis3", none → "xaxis"."""
    return (trace.get(f"{letter}axis") or letter).replace(letter, f"{letter}axis", 1)


def _plots_numbers(values: Any) -> bool:
    """Whether a trace's x values are numbers to plotly.js: none (the indices), a list or tuple
    without text, or a numeric array. Text makes a category axis; anything else counts as not."""
    if values is None:
        return True
    if isinstance(values, (list, tuple)):
        return not any(isinstance(v, str) for v in values)
    return getattr(getattr(values, "dtype", None), "kind", "") in ("i", "u", "f")


# Room plotly.js's default template leaves around a tick label and an axis title (px, font 12 / 14).
_TICK_PAD = 14  # 12, and 2 px to spare: a label measured 1 px wider than its estimate in Chromium
_TITLE_ROOM = 50  # the title (font 14), the template's title standoff (15 px), padding
_DEFAULT_MARGIN = 80  # plotly.js's margin on every side when a layout leaves it unset
_TAG = re.compile(r"<[^>]*>")


def label_width(text: str, size: float = 12) -> float:
    """Returns an upper estimate, in px, of a tick label's width in plotly.js's sans-serif font:
    HTML tags dropped, entities counted as one character, East Asian wide characters as two."""
    plain = html.unescape(_TAG.sub("", str(text)))
    chars = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in plain)
    return chars * 7.5 * size / 12


def _edge(axes: dict[str, dict], name: str, partner: str, side: str) -> bool:
    # Whether the axis `name` sits on the figure's edge on `side` (its anchor axis's domain starts
    # or ends where the others do), so that its labels need margin rather than space between panels.
    anchor = axes.get(name, {}).get("anchor") or partner
    key = anchor.replace("x", "xaxis", 1) if anchor.startswith("x") else anchor.replace("y", "yaxis", 1)
    if anchor == "free" or key not in axes and key not in ("xaxis", "yaxis"):
        return False
    domain = axes.get(key, {}).get("domain", (0.0, 1.0))
    others = [a.get("domain", (0.0, 1.0)) for k, a in axes.items() if k[0] == key[0]] or [(0.0, 1.0)]
    if side in ("l", "b"):
        return domain[0] <= min(d[0] for d in others) + 1e-6
    return domain[1] >= max(d[1] for d in others) - 1e-6


def _outer_colorbars(layout: dict, data) -> list[dict]:
    # The vertical colour bars a figure draws right of its plot area (plotly's default place, x 1.02).
    shown = {trace.get("coloraxis") for trace in data if trace.get("coloraxis")}
    bars = [axis.get("colorbar") or {} for key, axis in layout.items()
            if key in shown and isinstance(axis, dict) and axis.get("showscale", True) is not False]
    bars += [trace.get("colorbar") or {} for trace in data if _has_colorbar(trace)]
    return [bar for bar in bars if bar.get("orientation", "v") == "v" and bar.get("xanchor", "left") == "left"]


def _colorbar_room(bar: dict, size: float) -> float:
    # Right margin (px) a colour bar needs: padding on both sides, the bar and its tick labels (up to
    # "0.000"), or its title over it if that is wider, less the room it has inside the plot area. x is
    # a paper fraction (plotly's default 1.02 puts the bar outside); the width it is taken of is the
    # widest a chart gets for a bar outside (1,400 px) and a narrow one (600 px) for a bar inside, so
    # the estimate errs on the wide side. Measured in Chromium, plotly.js widened a 10 px margin to
    # 91–94 px for the app's bars at x = 1.02, and to 110 px on the images page's wide column.
    x = bar.get("x") if bar.get("x") is not None else 1.02
    pad = float(bar.get("xpad", 10))
    title = bar.get("title")
    title_text = title.get("text") if isinstance(title, dict) else title
    body = max(float(bar.get("thickness", 30)) + 4 + label_width("0.000", size),
               label_width(title_text, size + 2) if title_text else 0.0)
    return max(0.0, (x - 1) * (1400 if x > 1 else 600) + pad + body + pad)


_LEGEND_ROW = 29  # px: the height plotly.js gave a one-row legend at font 12 in Chromium


def _legend_room(layout: dict, data, size: float, *, bottom: float, pad: float) -> float:
    # Top margin (px) a one-row horizontal legend set above the plot (y >= 1, yanchor "bottom")
    # needs, 0 for any other legend. plotly.js pushes the top margin by the legend's height plus
    # `pad` (12 px, or the smallest margin if less) at paper height y: the plot area of height
    # H = height - top - bottom ends under it, so top >= height - bottom - (height - bottom - room) / y.
    legend = layout.get("legend") or {}
    y = legend.get("y")
    if layout.get("showlegend") is False or legend.get("orientation") != "h" or legend.get("yanchor") != "bottom" \
            or not isinstance(y, (int, float)) or y < 1:
        return 0.0
    names = [t.get("name") or "" for t in data if t.get("showlegend", t.get("type") not in NOT_LISTED) is not False]
    font = float((legend.get("font") or {}).get("size") or size)
    if (layout.get("showlegend") is None and len(names) < 2) or sum(40 + label_width(n, font) for n in names) > 500:
        return 0.0  # no legend, or one that may wrap to more rows: left to automargin
    height = float(layout.get("height") or 450)
    room = _LEGEND_ROW * font / 12 + pad
    return height - bottom - (height - bottom - room) / y


def reserve_tick_margins(fig: go.Figure) -> go.Figure:
    """Widens `fig`'s margins to hold its outer axes' tick labels and titles (estimated from their
    text), and its colour bars; returns fig. A margin never shrinks, and automargin stays on as the
    net under the estimate.

    With margins too small for its labels (most builders set 10 px and leave the rest to
    automargin), plotly.js draws the figure, measures the labels, widens the margins and draws it
    all again: a 63 × 63 head view with 32 labels a side took 34 ms to draw in Chromium, 17 ms with
    the margins reserved (bench/plotly_draw.py; docs/PERFORMANCE.md, "Labels, tiles and one snapshot
    per section"). A colour bar outside the plot area widens the right margin the same way: the
    images page's caption figure, with two bars, drew in 45 ms with a 10 px right margin and in
    37 ms with room reserved.
    """
    layout, data = fig._layout, fig._data
    size = float((layout.get("font") or {}).get("size") or 12)
    axes = {k: v for k, v in layout.items() if _AXIS_NAME.fullmatch(k) and isinstance(v, dict)}
    for trace in data:
        for letter in "xy":
            axes.setdefault(_axis_of(trace, letter), {})
    categories: dict[str, list[str]] = {}
    for trace in data:  # text coordinates make a category axis: its labels are the values
        for letter in "xy":
            values = trace.get(letter)
            if values is not None and len(values) and isinstance(next(iter(values)), str):
                categories.setdefault(_axis_of(trace, letter), []).extend(values)
    margin = dict(layout.get("margin") or {})
    needed: dict[str, float] = {}
    for name, axis in axes.items():
        if axis.get("visible") is False or axis.get("showticklabels") is False:
            continue
        font = float((axis.get("tickfont") or {}).get("size") or size)
        labels = axis.get("ticktext") if axis.get("ticktext") is not None else categories.get(name)
        widest = max((label_width(t, font) for t in labels), default=0.0) if labels is not None else label_width("0.000", font)
        title = axis.get("title")
        title_text = title.get("text") if isinstance(title, dict) else title
        room = _TITLE_ROOM if title_text else 0
        if name.startswith("y"):
            side = "r" if axis.get("side") == "right" else "l"
            if not _edge(axes, name, "x", side):
                continue
            needed[side] = max(needed.get(side, 0), widest + _TICK_PAD + room)
        else:
            side = "t" if axis.get("side") == "top" else "b"
            if not _edge(axes, name, "y", side):
                continue
            angle = axis.get("tickangle")
            if isinstance(angle, (int, float)):
                tall = abs(math.sin(math.radians(angle))) * widest + abs(math.cos(math.radians(angle))) * font * 1.5
            else:  # "auto": labels that do not fit turn, and automargin covers that
                tall = font * 1.5
            needed[side] = max(needed.get(side, 0), tall + _TICK_PAD + room)
    bars = [room for room in (_colorbar_room(bar, size) for bar in _outer_colorbars(layout, data)) if room > 0]
    if bars:
        needed["r"] = max(needed.get("r", 0), *bars)
    wider = {side: math.ceil(px) for side, px in needed.items()
             if math.ceil(px) > margin.get(side, _DEFAULT_MARGIN)}
    final = {side: wider.get(side, margin.get(side, _DEFAULT_MARGIN)) for side in "lrtb"}
    # plotly.js pads a push by 12 px or the smallest margin; a widened top margin is not the smallest
    top = _legend_room(layout, data, size, bottom=final["b"], pad=min(12, final["l"], final["r"], final["b"]))
    if math.ceil(top) > final["t"]:
        wider["t"] = math.ceil(top)
    if wider:
        fig.update_layout(margin={**margin, **wider})
    return fig


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


def _has_colorbar(trace: dict) -> bool:
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
    browser draws a figure of two or three panels at about half the cost of as many figures
    (bench/figure_cost.py, docs/PERFORMANCE.md).

    widths: each panel's share of the width (default equal); gap: the space between panels;
    share_y: the panels have the same rows, so later panels match the first panel's y axis and
    hide its labels. Every part is plain JSON moved, not rebuilt: no validation.
    """
    if not figures:
        raise ValueError("side_by_side needs at least one figure")
    # The figures' own dicts (numpy arrays as they are; to_plotly_json would encode them): copied
    # where changed below, never changed in place.
    parts = [{"data": fig._data, "layout": fig._layout} for fig in figures]
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
        room = COLORBAR_ROOM if any(_has_colorbar(t) for t in traces) or any(
            k.startswith("coloraxis") for k in source) else 0.0
        plot = (slot[0], slot[1] - room)
        # New ids for every axis the panel uses (named in its layout or by a trace).
        used = {_axis_id(k) for k in source if _AXIS_NAME.fullmatch(k)}
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
                axis["domain"] = [across(lo), across(hi)]
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
            elif _has_colorbar(trace):
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
                "y": 1.0, "yref": "paper", "yanchor": "bottom", "yshift": 8, "showarrow": False, "font": {"size": 13},
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
    return go.Figure({"data": data, "layout": layout}, _validate=False)
