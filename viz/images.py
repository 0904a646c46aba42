"""Figures for attention over images: per-word caption panels and patch self-attention.

Builders take arrays and labels and return a go.Figure; they never show or write anything.
"""

from __future__ import annotations

import base64
import functools
import html
import io
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from PIL import Image

from models.record import AttentionRecord
from viz.figures import COLORSCALE, image_overlay, safe_label

PANEL_PX = 190
PANELS_PER_LINE = 4  # words per line of caption panels; longer captions wrap
PANEL_GAP = 0.08  # space between caption panels, as a share of the image's side
TITLE_ROOM = 0.22  # room above each panel row for its word titles, as a share of the image's height


def _cell_centres(grid_h: int, grid_w: int, height: int, width: int):
    dy, dx = height / grid_h, width / grid_w
    return dy, dx, dy / 2 - 0.5, dx / 2 - 0.5


def _panel_grid(n_words: int, n_rows: int, per_line: int) -> tuple[int, int]:
    """Returns (columns, lines): words wrap after per_line columns, each line holds every row kind."""
    if per_line < 1:
        raise ValueError(f"per_line must be at least 1, got {per_line}")
    n_cols = min(n_words, per_line)
    return n_cols, -(-n_words // n_cols)


def panel_pitch(image_shape: tuple[int, int]) -> tuple[float, float]:
    """Returns (x, y) distance in data units between the origins of neighbouring caption panels:
    the image plus a gap, and room for a word title above each panel row."""
    height, width = image_shape
    return width * (1 + PANEL_GAP), height * (1 + PANEL_GAP + TITLE_ROOM)


def _panel_heatmap(image_shape: tuple[int, int], amap: np.ndarray, *, origin: tuple[float, float], word: str,
                   row_name: str, smooth: bool, opacity: float) -> dict:
    # One attention map stretched over the image: cell (r, c) covers H/g × W/g pixels. A smooth
    # map is scaled up by the browser (zsmooth "fast"); plotly's own interpolation ("best") costs
    # as much as the rest of the figure.
    gh, gw = amap.shape
    dy, dx, y0, x0 = _cell_centres(gh, gw, *image_shape)
    return {
        "type": "heatmap", "z": amap, "x0": origin[0] + x0, "dx": dx, "y0": origin[1] + y0, "dy": dy,
        "coloraxis": "coloraxis", "opacity": float(np.clip(opacity, 0, 1)), "zsmooth": "fast" if smooth else False,
        "name": f"{safe_label(row_name)} · {safe_label(word)}",
        "hovertemplate": (f"{safe_label(word)}<br>row %{{customdata[0]}}, col %{{customdata[1]}}"
                          f"<br>{safe_label(row_name)} = %{{z:.4f}}<extra></extra>"),
        "customdata": _cell_indices(gh, gw),
    }


@functools.lru_cache(maxsize=8)
def _cell_indices(gh: int, gw: int) -> np.ndarray:
    indices = np.stack(np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij"), -1)
    indices.setflags(write=False)
    return indices


def _cell_outline(cell: int, grid: tuple[int, int], image_shape: tuple[int, int], origin: tuple[float, float]) -> dict:
    gh, gw = grid
    dy, dx, _, _ = _cell_centres(gh, gw, *image_shape)
    cr, cc = divmod(int(cell), gw)
    ox, oy = origin
    return {"type": "rect", "x0": ox + cc * dx - 0.5, "x1": ox + (cc + 1) * dx - 0.5, "y0": oy + cr * dy - 0.5,
            "y1": oy + (cr + 1) * dy - 0.5, "line": {"color": "#d62728", "width": 2}, "xref": "x", "yref": "y"}


def png_data_uri(image: np.ndarray) -> str:
    """Returns uint8 [H, W, 3] as a PNG data URI (an image trace's `source`: a few KB where `z`
    would send every pixel as a JSON number, once per panel)."""
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image, dtype=np.uint8)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def caption_panels(
    image: np.ndarray,
    words: Sequence[str],
    rows: Sequence[tuple[str, np.ndarray]],
    *,
    smooth: Sequence[bool] | None = None,
    marks: Sequence[np.ndarray | None] | None = None,
    title: str | None = None,
    opacity: float = 0.6,
    zmax: float | None = None,
    per_line: int = PANELS_PER_LINE,
) -> go.Figure:
    """Returns a grid of panels: one column per word, one row per map kind.

    Words wrap after `per_line` columns (a caption of 9 words takes three lines of 4, 4 and 1
    words, each line holding every map kind), so panels stay large enough to read.
    Traces come in row-major order over (map kind, word): image, heatmap for each panel.
    All panels are tiled on one pair of axes (panel (row, column) has its origin at
    panel_pitch × (column, row)): plotly.js lays out and draws each subplot's axes on its own,
    which made a 16-panel grid cost twice as much in the browser as one tiled figure.

    image uint8 [H, W, 3]; rows: (row title, maps float [n_words, g, g]) e.g. ("α", alphas)
    and ("sample frequency", freqs); smooth[r]: interpolate row r (a smooth soft map) or draw
    cells; marks[r]: int [n_words] cell index (row-major) to outline per word, or None.
    All panels share one colour axis from 0 to zmax (default: the largest value shown).
    """
    image = np.asarray(image)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be [H, W, 3], got {image.shape}")
    n_words, n_rows = len(words), len(rows)
    if n_words == 0 or n_rows == 0:
        raise ValueError("caption_panels needs at least one word and one row")
    smooth = list(smooth) if smooth is not None else [True] * n_rows
    marks = list(marks) if marks is not None else [None] * n_rows
    n_cols, n_lines = _panel_grid(n_words, n_rows, per_line)
    height, width = image.shape[:2]
    pitch_x, pitch_y = panel_pitch((height, width))

    def origin(r: int, c: int) -> tuple[float, float]:  # map kind r, word c
        return (c % n_cols) * pitch_x, ((c // n_cols) * n_rows + r) * pitch_y

    source = png_data_uri(image)
    data, shapes, annotations = [], [], []
    for r, (name, maps) in enumerate(rows):
        maps = np.asarray(maps, np.float32)
        if maps.ndim != 3 or maps.shape[0] != n_words:
            raise ValueError(f"row {name!r}: maps must be [{n_words}, g, g], got {maps.shape}")
        for c in range(n_words):
            ox, oy = origin(r, c)
            data.append({"type": "image", "source": source, "x0": ox, "y0": oy, "hoverinfo": "skip"})
            data.append(_panel_heatmap((height, width), maps[c], origin=(ox, oy), word=words[c], row_name=name,
                                       smooth=smooth[r], opacity=opacity))
            if marks[r] is not None:
                shapes.append(_cell_outline(np.asarray(marks[r])[c], maps.shape[1:], (height, width), (ox, oy)))
    text = {"xref": "x", "yref": "y", "showarrow": False, "font": {"size": 14}}
    for c, word in enumerate(words):  # each word's title over its first map kind, on every line
        ox, oy = origin(0, c)
        annotations.append({**text, "text": safe_label(word), "x": ox + width / 2 - 0.5, "y": oy - 1.5,
                            "yanchor": "bottom"})
    for line in range(n_lines):  # each map kind's title at the left of its row, on every line
        for r, (name, _) in enumerate(rows):
            _, oy = origin(r, line * n_cols)
            annotations.append({**text, "text": safe_label(name), "x": -0.5 - width * PANEL_GAP / 2, "y": oy + height / 2,
                                "xanchor": "right", "textangle": -90})
    top = float(zmax) if zmax is not None else max(float(np.max(m)) for _, m in rows)
    span_x = n_cols * pitch_x - width * PANEL_GAP
    span_y = n_lines * n_rows * pitch_y - height * PANEL_GAP
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "coloraxis": {"colorscale": COLORSCALE, "cmin": 0.0, "cmax": max(top, 1e-9),
                      "colorbar": {"title": {"text": "weight"}}},
        "xaxis": {"visible": False, "range": [-0.5 - width * 0.12, span_x - 0.5], "constrain": "domain"},
        "yaxis": {"visible": False, "range": [span_y - 0.5, -0.5 - height * TITLE_ROOM], "scaleanchor": "x",
                  "constrain": "domain"},
        "plot_bgcolor": "rgba(0,0,0,0)", "annotations": annotations, "shapes": shapes,
        "height": int(PANEL_PX * n_rows * n_lines + 30 * n_lines + (60 if title else 30)),
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    }
    # Every value above is built here from checked arrays and fixed names: plotly's per-property
    # validation (most of this figure's cost) is skipped.
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def caption_figure(image: np.ndarray, record: AttentionRecord) -> go.Figure:
    """Returns the caption panels of a soft or hard captioner record (models/captioner/records.py).

    Soft: one smooth α row. Hard: α with the decoder's cell outlined and, when samples were
    drawn, the sample frequencies below. image: the model input [64, 64, 3].
    """
    words = list(record.query_labels)
    caption = record.extras.get("caption", " ".join(words))
    if record.meta.get("variant") != "hard":
        return caption_panels(image, words, [("α (soft)", record.weights)], smooth=[True], title=f"Soft: “{caption}”")
    rows = [("α", record.weights)]
    if "frequencies" in record.extras:
        samples = np.asarray(record.extras["samples"]).shape[-1]
        rows.append((f"frequency of {samples} samples", record.extras["frequencies"]))
    picked = "sampled" if record.meta.get("mode", "sample") == "sample" else "argmax"
    return caption_panels(
        image, words, rows, smooth=[False] * len(rows), marks=[record.extras["decode_cells"]] + [None] * (len(rows) - 1),
        title=f"Hard ({picked} cell outlined): “{caption}”",
    )


def _patch_click_targets(gh: int, gw: int, dy: float, dx: float) -> go.Scatter:
    # A faint marker at every patch centre: plotly heatmaps cannot be clicked, markers can.
    rows, cols = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")
    return go.Scatter(
        x=(cols.ravel() + 0.5) * dx - 0.5, y=(rows.ravel() + 0.5) * dy - 0.5, mode="markers",
        marker={"size": max(4, min(14, int(300 / max(gh, gw)))), "color": "rgba(255,255,255,0.01)"},
        customdata=np.arange(gh * gw), text=[f"{r}c{c}" for r, c in zip(rows.ravel(), cols.ravel())],
        hovertemplate="click to make patch r%{text} the query<extra></extra>", name="patches", showlegend=False,
    )


def _sample_markers(samples: np.ndarray, gh: int, gw: int, dy: float, dx: float) -> go.Scatter:
    # One cross per drawn patch, sized by how often it was drawn.
    counts = np.bincount(samples.ravel(), minlength=gh * gw)
    drawn = np.flatnonzero(counts)
    return go.Scatter(
        x=(drawn % gw + 0.5) * dx - 0.5, y=(drawn // gw + 0.5) * dy - 0.5, mode="markers",
        marker={"size": 6 + 24 * np.sqrt(counts[drawn] / counts.max()), "color": "#d62728", "symbol": "x"},
        customdata=counts[drawn], hovertemplate="drawn %{customdata} times<extra></extra>", name="samples",
        showlegend=False,
    )


def patch_attention_figure(
    image: np.ndarray,
    weights: np.ndarray,
    query: tuple[int, int],
    *,
    title: str | None = None,
    opacity: float = 0.6,
    samples: np.ndarray | None = None,
) -> go.Figure:
    """Returns the photo with one query patch's attention over all patches.

    image uint8 [H, W, 3]; weights float [gh, gw] (one per patch); query (row, col) of the
    query patch, outlined; samples: optional int [N] patch indices drawn (hard), drawn as
    markers sized by count. A faint marker at every patch centre makes patches clickable
    (a click selects one and returns its customdata: the patch index).
    """
    image = np.asarray(image)
    weights = np.asarray(weights, np.float32)
    fig = image_overlay(image, weights, opacity=opacity, smooth=False)
    height, width = image.shape[:2]
    gh, gw = weights.shape
    dy, dx = height / gh, width / gw
    rows, cols = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")
    fig.update_traces(
        selector={"type": "heatmap"}, name="α", customdata=np.stack([rows, cols], -1),
        hovertemplate="patch r%{customdata[0]}c%{customdata[1]}<br>α = %{z:.4f}<extra></extra>",
    )
    fig.add_trace(_patch_click_targets(gh, gw, dy, dx))
    if samples is not None and len(samples):
        fig.add_trace(_sample_markers(np.asarray(samples), gh, gw, dy, dx))
    qr, qc = query
    fig.add_shape(
        type="rect", x0=qc * dx - 0.5, x1=(qc + 1) * dx - 0.5, y0=qr * dy - 0.5, y1=(qr + 1) * dy - 0.5,
        line={"color": "#00e5ff", "width": 3},
    )
    fig.update_layout(
        title={"text": html.escape(title) if title else None},
        height=480,
        margin={"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
        xaxis={"visible": False, "range": [-0.5, width - 0.5]},
        yaxis={"visible": False, "scaleanchor": "x", "range": [height - 0.5, -0.5]},
        # No drag-select: Streamlit turns click selection off when dragmode is "select" or
        # "lasso" (a click must pick one patch; tests/e2e/test_images_browser.py clicks one).
        clickmode="event+select",
    )
    return fig


def patch_figure(photo: np.ndarray, record: AttentionRecord, *, title: str | None = None) -> go.Figure:
    """Returns patch_attention_figure of a patch self-attention record (models/captioner/patches.py).

    photo: the photo the record's patches were cut from (prepare_photo's crop).
    """
    row, col = record.meta["query"]
    samples = record.extras.get("samples")
    return patch_attention_figure(photo, record.weights[0], (row, col), title=title,
                                  samples=None if samples is None else np.asarray(samples)[0])
