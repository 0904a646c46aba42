"""Every text a plotly figure draws, with the size and colour it is drawn in, for the readability
checks (issue: figures a class can read on a projector or a phone).

A figure's text inherits layout.font where it sets no font of its own, and plotly.js's own defaults
(12 px, #444, white paper) where the layout sets none. `texts(spec)` resolves that inheritance;
`problems(spec)` lists each text below MIN_PX or under MIN_CONTRAST against the paper.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

MIN_PX = 13
MIN_CONTRAST = 4.5  # WCAG 2.1 AA for normal text
PLOTLY_SIZE, PLOTLY_COLOR, PLOTLY_PAPER = 12, "#444", "#fff"
_NAMED = {"white": "#ffffff", "black": "#000000", "transparent": None}
_AXIS = re.compile(r"^[xy]axis\d*$")


def rgb(colour: Any) -> tuple[float, float, float] | None:
    """Returns (r, g, b) in 0..1 for #rgb, #rrggbb, rgb() and rgba() (alpha over white) and a few names;
    None for what it cannot read."""
    if not isinstance(colour, str):
        return None
    c = _NAMED.get(colour.strip().lower(), colour.strip().lower())
    if c is None:
        return None
    if re.fullmatch(r"#[0-9a-f]{3}", c):
        c = "#" + "".join(ch * 2 for ch in c[1:])
    if re.fullmatch(r"#[0-9a-f]{6}", c):
        return tuple(int(c[i:i + 2], 16) / 255 for i in (1, 3, 5))
    m = re.fullmatch(r"rgba?\(([^)]*)\)", c)
    if m:
        parts = [float(p) for p in m.group(1).split(",")]
        alpha = parts[3] if len(parts) > 3 else 1.0
        return tuple((alpha * v / 255 + (1 - alpha)) for v in parts[:3])
    return None


def contrast(a: Any, b: Any) -> float | None:
    """WCAG contrast ratio of two colours (1..21), None if either cannot be read."""
    ca, cb = rgb(a), rgb(b)
    if ca is None or cb is None:
        return None

    def lum(c):
        lin = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(ca), lum(cb)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _title_text(title: Any) -> str | None:
    if isinstance(title, str):
        return title or None
    return (title or {}).get("text") or None if isinstance(title, dict) else None


def texts(spec: dict) -> Iterator[tuple[str, float, Any]]:
    """Yields (where, size in px, colour) for every text the figure draws."""
    layout, data = spec.get("layout") or {}, spec.get("data") or []
    base = layout.get("font") or {}
    size0, colour0 = base.get("size") or PLOTLY_SIZE, base.get("color") or PLOTLY_COLOR

    def resolved(where, font, size=None, colour=None):
        font = font or {}
        return where, float(font.get("size") or size or size0), font.get("color") or colour or colour0

    title = layout.get("title")
    if _title_text(title):
        yield resolved("title", title.get("font") if isinstance(title, dict) else None)
    for name, axis in layout.items():
        if not (_AXIS.match(name) and isinstance(axis, dict)) or axis.get("visible") is False:
            continue
        if axis.get("showticklabels") is not False:
            yield resolved(f"{name}.tickfont", axis.get("tickfont"))
        if _title_text(axis.get("title")):
            yield resolved(f"{name}.title", (axis.get("title") or {}).get("font") if isinstance(axis.get("title"), dict) else None)
    if layout.get("showlegend") is not False and any(t.get("showlegend") is not False and t.get("name") for t in data):
        yield resolved("legend", (layout.get("legend") or {}).get("font"))
    for i, note in enumerate(layout.get("annotations") or []):
        if note.get("text") and note.get("visible") is not False:
            yield resolved(f"annotations[{i}]", note.get("font"))
    bars = [(k, v.get("colorbar")) for k, v in layout.items() if k.startswith("coloraxis") and isinstance(v, dict)
            and v.get("showscale") is not False]
    bars += [(f"data[{i}]", t.get("colorbar")) for i, t in enumerate(data)
             if t.get("type") in ("heatmap", "contour", "histogram2d") and "coloraxis" not in t and t.get("showscale") is not False]
    for where, bar in bars:
        bar = bar or {}
        yield resolved(f"{where}.colorbar.tickfont", bar.get("tickfont"))
        if _title_text(bar.get("title")):
            yield resolved(f"{where}.colorbar.title", (bar.get("title") or {}).get("font") if isinstance(bar.get("title"), dict) else None)
    for i, t in enumerate(data):
        shows_text = t.get("texttemplate") or (t.get("text") is not None and "text" in str(t.get("mode", "text")))
        if shows_text and t.get("type") not in ("heatmap",):  # a heatmap's cell text contrasts with its cell
            yield resolved(f"data[{i}].textfont", t.get("textfont"))
        elif shows_text:
            font = t.get("textfont") or {}
            yield f"data[{i}].textfont", float(font.get("size") or size0), None  # size only
    hover = (layout.get("hoverlabel") or {}).get("font")
    yield resolved("hoverlabel", hover)


def problems(spec: dict) -> list[str]:
    """Each text of the figure drawn below MIN_PX, or with contrast under MIN_CONTRAST against the paper."""
    layout = spec.get("layout") or {}
    paper = layout.get("paper_bgcolor") or PLOTLY_PAPER
    hover_bg = (layout.get("hoverlabel") or {}).get("bgcolor") or paper
    found = []
    for where, size, colour in texts(spec):
        if size < MIN_PX:
            found.append(f"{where}: {size:g} px")
        if colour is not None:
            ratio = contrast(colour, hover_bg if where == "hoverlabel" else paper)
            if ratio is not None and ratio < MIN_CONTRAST:
                found.append(f"{where}: colour {colour} has contrast {ratio:.2f}:1")
    return found
