"""Margins reserved, before plotly.js draws a figure, for what automargin would otherwise make room
for after a first draw: the outer axes' tick labels and titles, colour bars right of the plot, and
a legend over it. With margins too small, plotly.js draws the figure, measures, widens the margins
and draws it all again.

The estimates err wide (a few px of white); where one falls short, automargin still widens the
margin, at the cost of that second draw. No streamlit, no jax.
"""

from __future__ import annotations

import html
import math
import re
import unicodedata

import plotly.graph_objects as go

from viz.fonts import TEXT_PX
from viz.plotly_json import AXIS_NAME, NOT_LISTED, OWN_COLORBAR, axis_of, has_colorbar
from viz.plotly_private import layout_of, traces_of

# Room plotly.js's default template leaves around a tick label and an axis title (px, font 12 / 14).
AXIS_PAD = 8  # layout.margin.pad of every shown figure (viz/chart_style.py): axes sit this far off the plot
# automargin's pad (12), the axis's offset (AXIS_PAD), and 3 px to spare: a label measured 1 px wider
# than its estimate in Chromium (the HAN's "α_i" at 15 px text). Without AXIS_PAD, short labels ("α_i")
# overran their margin by a few px.
_TICK_PAD = 12 + AXIS_PAD + 3
TICK_LEN = 5  # plotly.js's default tick length, px
TITLE_ROOM = 50  # the title (font 14), the template's title standoff (15 px), padding
_DEFAULT_MARGIN = 80  # plotly.js's margin on every side when a layout leaves it unset
_TAG = re.compile(r"<[^>]*>")


def label_width(text: str, size: float = TEXT_PX) -> float:
    """Returns an upper estimate, in px, of a tick label's width in plotly.js's sans-serif font:
    HTML tags dropped, entities counted as one character, East Asian wide characters as two,
    invisible format characters as none."""
    plain = html.unescape(_TAG.sub("", str(text)))
    chars = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.category(ch) == "Cf" else 1
                for ch in plain)  # Cf: format characters, as the zero-width space that keeps repeated labels apart
    return chars * 7.5 * size / 12


def label_height(width: float, angle: float, font: float = TEXT_PX) -> float:
    """Returns the height, in px, that x tick labels up to `width` px wide take under the plot when
    turned by `angle` degrees, with the room plotly.js leaves around them (no axis title)."""
    turn = math.radians(angle)
    return abs(math.sin(turn)) * width + abs(math.cos(turn)) * font * 1.5 + _TICK_PAD


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


def _ends_right(axes: dict[str, dict], name: str) -> bool:
    # Whether the x axis `name` ends where the figure's x axes end: its last label meets the margin.
    ends = [a.get("domain", (0.0, 1.0))[1] for k, a in axes.items() if k.startswith("x")] or [1.0]
    return axes.get(name, {}).get("domain", (0.0, 1.0))[1] >= max(ends) - 1e-6


def _outer_colorbars(layout: dict, data) -> list[dict]:
    # The vertical colour bars a figure draws right of its plot area (plotly's default place, x 1.02).
    shown = {trace.get("coloraxis") for trace in data if trace.get("coloraxis")}
    bars = [axis.get("colorbar") or {} for key, axis in layout.items()
            if key in shown and isinstance(axis, dict) and axis.get("showscale", True) is not False]
    bars += [trace.get("colorbar") or {} for trace in data if has_colorbar(trace)]
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


# plotly.js spaces an axis's own numbers over 5 to 10 intervals of the axis (80 px each or more), at
# steps of 2, 5 or 10 times a power of ten: the rough step's mantissa rounded up to the next of
# those, strictly (plotly.js axes.prepTicks, autoTicks and Lib.roundUp).
_TICK_COUNTS = (5, 6, 7, 8, 9, 10)
_NARROWEST_AXIS = 200  # px: the shortest x axis whose end label these estimates keep inside the figure


def _auto_ticks(low: float, high: float) -> list[float]:
    # The steps plotly.js may pick for a linear axis over [low, high], whatever its drawn length.
    steps = set()
    for count in _TICK_COUNTS:
        rough = (high - low) / count
        base = 10 ** math.floor(math.log10(rough))
        steps.add(base * next(m for m in (2, 5, 10) if m > rough / base * (1 + 1e-9)))  # as Lib.roundUp: 2 → 5
    return sorted(steps)


def _tick_label(value: float, decimals: int) -> tuple[float, str]:
    # A tick's value and its label as plotly.js's default format writes it: thousands and up with an
    # SI suffix (10k, 2.5M), the rest with the step's decimals.
    for power, suffix in ((12, "T"), (9, "G"), (6, "M"), (3, "k")):
        if abs(value) >= 10 ** max(power, 4):
            return value, f"{value / 10 ** power:g}{suffix}"
    return value, f"{value:.{decimals}f}"


def _end_label_room(axis: dict, font: float) -> float:
    # Margin (px) past the plot area's right end that the last tick label of an x axis on the
    # figure's right edge may take, before plotly.js's pad: half the label, less the gap between the
    # last tick and the end of the axis on the narrowest axis considered. Only for an upright axis
    # showing numbers over a range fixed in the layout: plotly.js's own ticks, or tickvals without
    # ticktext. An axis that ends just past a tick (the feed-forward page's time axis at T = 1,001)
    # otherwise had its right margin widened by automargin after the first draw, and was drawn twice.
    span = axis.get("range")
    if any(axis.get(k) is not None for k in ("ticktext", "tickformat", "dtick", "tick0", "nticks")) \
            or axis.get("tickmode") not in (None, "auto", "array") or axis.get("type") not in (None, "linear", "-") \
            or axis.get("tickangle") not in (None, 0) or not isinstance(span, (list, tuple)) or len(span) != 2 \
            or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in span) or not span[0] < span[1] \
            or not math.isfinite(span[1] - span[0]):
        return 0.0  # steps set by hand, a reversed axis (it ends on its smallest number): left to automargin
    low, high = float(span[0]), float(span[1])
    reach = high + (high - low) * 1e-4  # plotly.js also draws a tick this far past the range's end
    if axis.get("tickvals") is not None:
        shown = [float(v) for v in axis["tickvals"] if isinstance(v, (int, float)) and low <= v <= reach]
        ends = [(max(shown), f"{max(shown):g}")] if shown else []
    else:
        ends = []
        for step in _auto_ticks(low, high):
            decimals = max(0, -math.floor(math.log10(step) + 1e-9))
            ends.append(_tick_label(math.floor(reach / step + 1e-9) * step, decimals))
    affix = f"{axis.get('tickprefix') or ''}{axis.get('ticksuffix') or ''}"
    room = 0.0
    for value, end in ends:
        gap = (high - value) / (high - low) * _NARROWEST_AXIS
        room = max(room, label_width(end + affix, font) / 2 - gap)
    return room


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
    text), its colour bars, a one-row legend over the plot, and the last number of an x axis that ends
    at the figure's right edge; returns fig. A margin never shrinks, and automargin stays on as the net
    under the estimate.

    With margins too small for its labels (most builders set 10 px and leave the rest to
    automargin), plotly.js draws the figure, measures the labels, widens the margins and draws it
    all again: bench/plotly_draw.py drew the induction page's 63 × 63 head view in 37 ms with the
    margins reserved and 110 ms without, the feed-forward figure in 27 ms and 61 ms (docs/PERFORMANCE.md,
    "Workarounds of library behaviour"). A colour bar outside the plot area widens the right margin the
    same way. tests/e2e/test_chart_redraw_browser.py checks that plotly.js widens no margin.
    """
    layout, data = layout_of(fig), traces_of(fig)
    size = float((layout.get("font") or {}).get("size") or 12)  # plotly.js's default, for a figure without the look
    axes = {k: v for k, v in layout.items() if AXIS_NAME.fullmatch(k) and isinstance(v, dict)}
    for trace in data:
        for letter in "xy":
            axes.setdefault(axis_of(trace, letter), {})
    # Maps' axes have ticks (viz/chart_style.py gives them a tick colour): their labels sit a tick's
    # length further out. Without it, a map's upright x labels overran their margin by 4 px.
    ticked = {axis_of(trace, letter) for trace in data if trace.get("type") in (*OWN_COLORBAR, "image") for letter in "xy"}
    categories: dict[str, list[str]] = {}
    for trace in data:  # text coordinates make a category axis: its labels are the values
        for letter in "xy":
            values = trace.get(letter)
            if values is not None and len(values) and isinstance(next(iter(values)), str):
                categories.setdefault(axis_of(trace, letter), []).extend(values)
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
        room = (TITLE_ROOM if title_text else 0) + (TICK_LEN if name in ticked and axis.get("ticks") != "" else 0)
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
            # "auto": labels that do not fit turn, and automargin covers that
            needed[side] = max(needed.get(side, 0), label_height(widest, angle if isinstance(angle, (int, float)) else 0, font) + room)
            if _ends_right(axes, name):
                end_room = _end_label_room(axis, font)
                if end_room > 0:  # plotly.js's pad: 12 px, or the smallest margin if less
                    needed["r"] = max(needed.get("r", 0), end_room + min(12, *(margin.get(s, _DEFAULT_MARGIN) for s in "ltb")))
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


def height_for_rows(fig: go.Figure, rows: int, row_px: float) -> go.Figure:
    """Sets `fig`'s height so that its plot area holds `rows` rows of `row_px` px each under the
    margins the page will reserve (reserve_tick_margins, after the readying of
    viz.chart_style.for_the_page, which then changes nothing); returns fig.

    For a bar chart of a few categories: a height counted with the builder's 10 px margins left a
    HAN probability chart of two classes an 18 px plot once the x axis's numbers and title had their
    90 px, and plotly.js labelled every second bar only."""
    layout = layout_of(fig)
    if not (layout.get("font") or {}).get("size"):  # the page's look will draw its text at TEXT_PX
        fig.update_layout(font_size=TEXT_PX)
    reserve_tick_margins(fig)
    margin = layout_of(fig).get("margin") or {}
    fig.update_layout(height=math.ceil(margin.get("t", _DEFAULT_MARGIN) + margin.get("b", _DEFAULT_MARGIN) + rows * row_px))
    return fig
