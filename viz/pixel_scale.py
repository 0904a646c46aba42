"""A plotly colour scale in pixels: the colour of a value, and a colour bar painted into a picture.

The images page paints its caption panels into one picture on the server (viz/images.py). Its colour
bars are painted there too, with their numbers as text: plotly.js redraws a colour bar of its own on
every update, measuring its labels and title (the caption figure's two bars took 4–13 ms of each
Plotly.react; docs/PERFORMANCE.md, "Figures"). No streamlit, no jax.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import plotly.colors as pc
from PIL import Image

from viz.figures import COLORSCALE
from viz.plotly_json import colorscale_stops


@functools.lru_cache(maxsize=4)
def _colour_stops(name: str) -> tuple[np.ndarray, np.ndarray]:
    stops = colorscale_stops(name)
    positions = np.array([p for p, _ in stops])
    colours = np.array([pc.hex_to_rgb(c) if c.startswith("#") else pc.unlabel_rgb(c) for _, c in stops], np.float64)
    return positions, colours


def colour_map(values: np.ndarray, cmax: float, name: str = COLORSCALE) -> np.ndarray:
    """Returns the RGB colour (float [..., 3], 0–255) a plotly colour scale gives each value on the
    range [0, cmax]: linear in RGB between the scale's stops, as plotly.js draws a heatmap."""
    positions, colours = _colour_stops(name)
    t = np.clip(np.asarray(values, np.float64) / max(float(cmax), 1e-12), 0.0, 1.0)
    return np.stack([np.interp(t, positions, colours[:, k]) for k in range(3)], -1)


def scale_ticks(cmax: float, most: int = 5) -> list[tuple[float, str]]:
    """Returns (value, label) ticks from 0 up to cmax, at most `most` of them, a step of 1, 2, 2.5 or
    5 × 10^k apart (as plotly.js picks them), labelled without trailing zeros."""
    if not math.isfinite(cmax) or cmax <= 0:
        return [(0.0, "0")]
    step = 10.0 ** math.floor(math.log10(cmax / max(most - 1, 1)))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if cmax / (step * m) <= most - 1 + 1e-9)
    exponent = math.floor(math.log10(step) + 1e-9)
    digits = max(0, -exponent + (round(step / 10.0 ** exponent, 6) == 2.5))
    labels = (f"{i * step:.{digits}f}" for i in range(int(math.floor(cmax / step + 1e-9)) + 1))
    return [(float(text), text.rstrip("0").rstrip(".") if "." in text and digits <= 6 else f"{float(text):.2g}")
            for text in labels]


def paint_scale_bar(canvas: np.ndarray, *, left: int, top: int, width: int, height: int, cmax: float,
                    name: str = COLORSCALE) -> None:
    """Paints a vertical colour bar into an RGBA canvas, in place: cmax at the top row, 0 at the
    bottom one, each pixel row the colour of its value."""
    if height < 2 or width < 1:
        raise ValueError(f"a colour bar needs at least 2 × 1 pixels, got {height} × {width}")
    values = cmax * (1.0 - np.arange(height) / (height - 1))
    canvas[top:top + height, left:left + width, :3] = np.rint(colour_map(values, cmax, name))[:, None, :]
    canvas[top:top + height, left:left + width, 3] = 255


def bar_value_y(value: float, *, top: int, height: int, cmax: float) -> float:
    """Returns the y (pixel centre, the picture's data units) of `value` on a bar painted by paint_scale_bar."""
    return top + (height - 1) * (1.0 - value / cmax) if cmax > 0 else top + height - 1


def overlay_pixels(image: np.ndarray, amap: np.ndarray, *, cmax: float, opacity: float, smooth: bool) -> np.ndarray:
    """Returns uint8 [H, W, 3]: the attention map in the figure's colour scale over the image. Each
    pixel's opacity is `opacity` × √(value / cmax): a cell of weight 0 shows the image as it is, the
    largest weight the colour at `opacity` (no wash of the scale's low end over the picture), and a
    tenth of the largest weight a third of that. Each cell of amap [g, g'] covers H/g × W/g' pixels;
    a smooth map is interpolated between cell centres (bilinear, edges held), as zsmooth does."""
    image = np.asarray(image, np.float64)
    height, width = image.shape[:2]
    amap = np.asarray(amap, np.float32)
    if smooth:
        full = np.asarray(Image.fromarray(amap, mode="F").resize((width, height), Image.Resampling.BILINEAR))
    else:
        rows = np.arange(height) * amap.shape[0] // height
        cols = np.arange(width) * amap.shape[1] // width
        full = amap[rows][:, cols]
    alpha = float(np.clip(opacity, 0.0, 1.0)) * np.sqrt(np.clip(full / max(float(cmax), 1e-12), 0.0, 1.0))[..., None]
    return np.rint((1 - alpha) * image + alpha * colour_map(full, cmax)).astype(np.uint8)
