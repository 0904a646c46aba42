"""Figures for attention over images: per-word caption panels and patch self-attention.

Builders take arrays and labels and return a go.Figure; they never show or write anything.
"""

from __future__ import annotations

import base64
import functools
import html
import io
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import plotly.graph_objects as go
from PIL import Image

from models.record import AttentionRecord
from viz.figures import COLORSCALE, image_overlay, safe_label

PANEL_PX = 160
PANELS_PER_LINE = 4  # words per line of caption panels; longer captions wrap
PANEL_GAP = 0.08  # space between caption panels, as a share of the image's side
TITLE_ROOM = 0.22  # room above each panel row for its word titles, as a share of the image's height
BLOCK_HEADING = 0.3  # room above a block of caption panels for its heading, as a share of the image's height


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
                   row_name: str, smooth: bool, opacity: float, coloraxis: str = "coloraxis") -> dict:
    # One attention map stretched over the image: cell (r, c) covers H/g × W/g pixels. A smooth
    # map is scaled up by the browser (zsmooth "fast"); plotly's own interpolation ("best") costs
    # as much as the rest of the figure.
    gh, gw = amap.shape
    dy, dx, y0, x0 = _cell_centres(gh, gw, *image_shape)
    return {
        "type": "heatmap", "z": amap, "x0": origin[0] + x0, "dx": dx, "y0": origin[1] + y0, "dy": dy,
        "coloraxis": coloraxis, "opacity": float(np.clip(opacity, 0, 1)), "zsmooth": "fast" if smooth else False,
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


@dataclass(frozen=True)
class CaptionBlock:
    """One caption's panels: a column per word, a row per map kind."""

    words: Sequence[str]
    rows: Sequence[tuple[str, np.ndarray]]  # (row title, maps float [n_words, g, g])
    smooth: Sequence[bool] | None = None  # per row: interpolate (a smooth soft map) or draw cells
    marks: Sequence[np.ndarray | None] | None = None  # per row: int [n_words] cell to outline, or None
    heading: str | None = None  # over the block, when several blocks share a figure


def _block_tiles(image_shape: tuple[int, int], block: CaptionBlock, *, top: float, opacity: float, per_line: int,
                 source: str, coloraxis: str) -> tuple[list[dict], list[dict], list[dict], int, int]:
    # The panels of one block, its first panel row's origin at y = top: returns (traces, shapes,
    # annotations, panel rows, lines).
    words, rows = list(block.words), list(block.rows)
    n_words, n_rows = len(words), len(rows)
    if n_words == 0 or n_rows == 0:
        raise ValueError("a caption block needs at least one word and one row")
    smooth = list(block.smooth) if block.smooth is not None else [True] * n_rows
    marks = list(block.marks) if block.marks is not None else [None] * n_rows
    n_cols, n_lines = _panel_grid(n_words, n_rows, per_line)
    height, width = image_shape
    pitch_x, pitch_y = panel_pitch(image_shape)

    def origin(r: int, c: int) -> tuple[float, float]:  # map kind r, word c
        return (c % n_cols) * pitch_x, top + ((c // n_cols) * n_rows + r) * pitch_y

    data, shapes, annotations = [], [], []
    for r, (name, maps) in enumerate(rows):
        maps = np.asarray(maps, np.float32)
        if maps.ndim != 3 or maps.shape[0] != n_words:
            raise ValueError(f"row {name!r}: maps must be [{n_words}, g, g], got {maps.shape}")
        for c in range(n_words):
            ox, oy = origin(r, c)
            data.append({"type": "image", "source": source, "x0": ox, "y0": oy, "hoverinfo": "skip"})
            data.append(_panel_heatmap(image_shape, maps[c], origin=(ox, oy), word=words[c], row_name=name,
                                       smooth=smooth[r], opacity=opacity, coloraxis=coloraxis))
            if marks[r] is not None:
                shapes.append(_cell_outline(np.asarray(marks[r])[c], maps.shape[1:], image_shape, (ox, oy)))
    text = {"xref": "x", "yref": "y", "showarrow": False, "font": {"size": 14}}
    for c, word in enumerate(words):  # each word's title over its first map kind, on every line
        ox, oy = origin(0, c)
        annotations.append({**text, "text": safe_label(word), "x": ox + width / 2 - 0.5, "y": oy - 1.5,
                            "yanchor": "bottom"})
    for line in range(n_lines):  # each map kind's title at the left of its row, on every line
        for r, (name, _) in enumerate(rows):
            _, oy = origin(r, line * n_cols)
            annotations.append({**text, "text": safe_label(name), "x": -0.5 - width * PANEL_GAP / 2,
                                "y": oy + height / 2, "xanchor": "right", "textangle": -90})
    if block.heading:
        annotations.append({**text, "text": f"<b>{html.escape(block.heading)}</b>", "x": -0.5, "xanchor": "left",
                            "y": top - height * TITLE_ROOM, "yanchor": "bottom", "font": {"size": 15}})
    return data, shapes, annotations, n_lines * n_rows, n_lines


def caption_blocks(
    image: np.ndarray,
    blocks: Sequence[CaptionBlock],
    *,
    title: str | None = None,
    opacity: float = 0.6,
    zmax: float | None = None,
    per_line: int = PANELS_PER_LINE,
) -> go.Figure:
    """Returns one figure of caption blocks stacked top to bottom (e.g. the soft captioner's and the
    hard one's, each with its own words and heading): a control that changes either redraws one
    figure. Each block has its own colour axis and colour bar beside it, from 0 to zmax (default:
    the block's largest value), so a flat soft map stays as readable as a peaked hard one.

    A block is a grid of panels, one column per word and one row per map kind (rows: (row title,
    maps float [n_words, g, g]), e.g. ("α", alphas) and ("sample frequency", freqs)). Words wrap
    after `per_line` columns (9 words take three lines of 4, 4 and 1, each line holding every map
    kind), so panels stay large enough to read. A block's smooth[r] interpolates row r (a smooth
    soft map) or draws cells; marks[r] outlines one cell (row-major index) per word.
    Traces: per block, row-major over (map kind, word), an image and a heatmap for each panel.
    All panels are tiled on one pair of axes: plotly.js lays out and draws each subplot's axes on
    its own, which made a 16-panel grid cost twice as much in the browser as one tiled figure.
    """
    image = np.asarray(image)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be [H, W, 3], got {image.shape}")
    if not blocks:
        raise ValueError("caption_blocks needs at least one block")
    height, width = image.shape[:2]
    pitch_x, pitch_y = panel_pitch((height, width))
    source = png_data_uri(image)
    data, shapes, annotations, spans = [], [], [], []
    top, panel_rows, lines, columns, headings = 0.0, 0, 0, 1, 0
    for i, block in enumerate(blocks):
        if block.heading:
            top += height * BLOCK_HEADING * (i > 0)  # the first block's heading sits in the title room
            headings += 1
        axis = "coloraxis" if i == 0 else f"coloraxis{i + 1}"
        traces, block_shapes, block_notes, block_rows, block_lines = _block_tiles(
            (height, width), block, top=top, opacity=opacity, per_line=per_line, source=source, coloraxis=axis)
        data += traces
        shapes += block_shapes
        annotations += block_notes
        spans.append((axis, top, top + block_rows * pitch_y - height * (PANEL_GAP + TITLE_ROOM), block))
        top += block_rows * pitch_y
        panel_rows += block_rows
        lines += block_lines
        columns = max(columns, _panel_grid(len(block.words), len(block.rows), per_line)[0])
    span_x = columns * pitch_x - width * PANEL_GAP
    span_y = top - height * PANEL_GAP
    above = height * (TITLE_ROOM + (BLOCK_HEADING if blocks[0].heading else 0))
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "xaxis": {"visible": False, "range": [-0.5 - width * 0.12, span_x - 0.5], "constrain": "domain"},
        # Narrower than its height allows, the grid keeps its aspect and hugs the top: no band above.
        "yaxis": {"visible": False, "range": [span_y - 0.5, -0.5 - above], "scaleanchor": "x", "constrain": "domain",
                  "constraintoward": "top"},
        "plot_bgcolor": "rgba(0,0,0,0)", "annotations": annotations, "shapes": shapes,
        "height": int(PANEL_PX * panel_rows + 30 * lines + 40 * headings + (60 if title else 30)),
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    }
    full = span_y + above
    for axis, first, last, block in spans:
        peak = float(zmax) if zmax is not None else max(float(np.max(m)) for _, m in block.rows)
        bar = {"title": {"text": "weight"}}
        if len(spans) > 1:  # beside its own block (paper fractions of the y range, top = 1)
            bar.update(len=(last - first) / full, y=1 - (first + above + (last - first) / 2) / full, yanchor="middle")
        layout[axis] = {"colorscale": COLORSCALE, "cmin": 0.0, "cmax": max(peak, 1e-9), "colorbar": bar}
    # Every value above is built here from checked arrays and fixed names: plotly's per-property
    # validation (most of this figure's cost) is skipped.
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def caption_block(record: AttentionRecord) -> CaptionBlock:
    """Returns the panels of a soft or hard captioner record (models/captioner/records.py), headed
    by the caption. Soft: one smooth α row. Hard: α with the decoder's cell outlined and, when
    samples were drawn, the sample frequencies below."""
    words = list(record.query_labels)
    caption = record.extras.get("caption", " ".join(words))
    if record.meta.get("variant") != "hard":
        return CaptionBlock(words, [("α (soft)", record.weights)], smooth=[True], heading=f"Soft: “{caption}”")
    rows = [("α", record.weights)]
    if "frequencies" in record.extras:
        samples = np.asarray(record.extras["samples"]).shape[-1]
        rows.append((f"frequency of {samples} samples", record.extras["frequencies"]))
    picked = "sampled" if record.meta.get("mode", "sample") == "sample" else "argmax"
    return CaptionBlock(words, rows, smooth=[False] * len(rows),
                        marks=[record.extras["decode_cells"]] + [None] * (len(rows) - 1),
                        heading=f"Hard ({picked} cell outlined): “{caption}”")


def caption_figure(image: np.ndarray, record: AttentionRecord) -> go.Figure:
    """Returns the caption panels of one captioner record, its heading as the title.
    image: the model input [64, 64, 3]."""
    block = caption_block(record)
    return caption_blocks(image, [replace(block, heading=None)], title=block.heading)


def captions_figure(image: np.ndarray, records: Sequence[AttentionRecord]) -> go.Figure:
    """Returns the caption panels of several captioner records (soft, hard) stacked in one figure,
    each block headed by its caption, with its own colour scale."""
    return caption_blocks(image, [caption_block(r) for r in records])


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
