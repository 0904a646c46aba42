"""Figures for attention over images: per-word caption panels and patch self-attention.

Builders take arrays and labels and return a go.Figure; they never show or write anything.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import plotly.graph_objects as go

from models.record import AttentionRecord
from viz.figures import COLORSCALE, image_overlay, png_data_uri
from viz.i18n_text import Gettext, untranslated
from viz.labels import safe_label
from viz.pixel_scale import bar_value_y, overlay_pixels, paint_scale_bar, scale_ticks
from viz.plotly_private import unchecked_figure

# Two panels a line: in the page's 624 px column at 1,280 px each panel is about 205 px wide, large
# enough to read a cell's colour from the back of a class; longer captions wrap. The figure's height
# gives each image PANEL_PX, so that the column's width, not the height, sets the panels' size there.
PANEL_PX = 205
PANELS_PER_LINE = 2
# Room between and above caption panels, as shares of the image's side. In pixels (8, 16 and 24 of a
# 64-pixel image) they are whole multiples of an 8 × 8 grid's cell, so every panel's cells fall on one grid.
PANEL_GAP = 0.125  # space between caption panels
TITLE_ROOM = 0.25  # room above each panel row for its word titles
BLOCK_HEADING = 0.375  # room above a block of caption panels for its heading
BAR_GAP, BAR_WIDTH, BAR_LABELS = 0.1875, 0.125, 0.375  # a block's colour bar, right of its panels: gap, bar, its numbers
OUTLINE = (214, 39, 40)  # the outline of the hard decoder's cell (plotly's red, #d62728)
FRAME = (170, 170, 170)  # each panel's edge


def _px(share: float, side: int) -> int:
    return int(round(share * side))


def _panel_grid(n_words: int, n_rows: int, per_line: int) -> tuple[int, int]:
    """Returns (columns, lines): words wrap after per_line columns, each line holds every row kind."""
    if per_line < 1:
        raise ValueError(f"per_line must be at least 1, got {per_line}")
    n_cols = min(n_words, per_line)
    return n_cols, -(-n_words // n_cols)


def panel_pitch(image_shape: tuple[int, int]) -> tuple[int, int]:
    """Returns (x, y) distance in pixels (the figure's data units) between the origins of
    neighbouring caption panels: the image plus a gap, and room for a word title above each row."""
    height, width = image_shape
    return width + _px(PANEL_GAP, width), height + _px(PANEL_GAP, height) + _px(TITLE_ROOM, height)


def _outline(canvas: np.ndarray, cell: int, grid: tuple[int, int], origin: tuple[int, int], cell_px: tuple[int, int],
             colour: tuple[int, int, int] = OUTLINE) -> None:
    # A one-pixel frame just inside one cell of a panel, in place.
    cr, cc = divmod(int(cell), grid[1])
    ch, cw = cell_px
    top, left = origin[1] + cr * ch, origin[0] + cc * cw
    canvas[top, left:left + cw, :3] = canvas[top + ch - 1, left:left + cw, :3] = colour
    canvas[top:top + ch, left, :3] = canvas[top:top + ch, left + cw - 1, :3] = colour


@dataclass(frozen=True)
class CaptionBlock:
    """One caption's panels: a column per word, a row per map kind."""

    words: Sequence[str]
    rows: Sequence[tuple[str, np.ndarray]]  # (row title, maps float [n_words, g, g])
    smooth: Sequence[bool] | None = None  # per row: interpolate (a smooth soft map) or draw cells
    marks: Sequence[np.ndarray | None] | None = None  # per row: int [n_words] cell to outline, or None
    heading: str | None = None  # over the block, when several blocks share a figure


def _hover_map(maps: np.ndarray, words: list[str], name: str, origins: list[tuple[int, int]], *,
               image_shape: tuple[int, int], coloraxis: str, gettext: Gettext = untranslated) -> dict:
    # One map kind of a block as one invisible heatmap on the panels' common cell grid: each panel's
    # cells carry its values and the hover (word, cell, value); the cells between panels are empty
    # (NaN, no hover). origins: each word's panel, top-left pixel.
    n_words, gh, gw = maps.shape
    height, width = image_shape
    ch, cw = height // gh, width // gw
    x0, y0 = min(x for x, _ in origins), min(y for _, y in origins)
    cols = (max(x for x, _ in origins) - x0) // cw + gw
    rows = (max(y for _, y in origins) - y0) // ch + gh
    z = np.full((rows, cols), np.nan, np.float32)
    labels = [safe_label(w) for w in words]
    word = np.full(z.shape, "", f"<U{max(map(len, labels), default=1)}")
    cells = np.zeros((rows, cols, 2), np.int16)
    for k, (ox, oy) in enumerate(origins):
        r, c = (oy - y0) // ch, (ox - x0) // cw
        z[r:r + gh, c:c + gw] = maps[k]
        word[r:r + gh, c:c + gw] = labels[k]
        cells[r:r + gh, c:c + gw] = _cell_indices(gh, gw)
    return {
        "type": "heatmap", "z": z, "x0": x0 + cw / 2 - 0.5, "dx": cw, "y0": y0 + ch / 2 - 0.5, "dy": ch,
        "coloraxis": coloraxis, "opacity": 0.0, "hoverongaps": False, "text": word, "customdata": cells,
        "name": safe_label(name),
        "hovertemplate": "%{text}<br>" + gettext("row {row}, col {col}").format(row="%{customdata[0]}", col="%{customdata[1]}")
                         + f"<br>{safe_label(name)} = %{{z:.4f}}<extra></extra>",
    }


@functools.lru_cache(maxsize=8)
def _cell_indices(gh: int, gw: int) -> np.ndarray:
    indices = np.stack(np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij"), -1)
    indices.setflags(write=False)
    return indices


def _block_tiles(image: np.ndarray, block: CaptionBlock, canvas: np.ndarray, *, top: int, opacity: float,
                 per_line: int, cmax: float, coloraxis: str, gettext: Gettext = untranslated) -> tuple[list[dict], list[dict], list[tuple], int, int]:
    # The panels of one block, its first panel row's origin at y = top: paints them into canvas
    # (RGBA, the figure's one picture) and returns (hover traces, annotations, word titles
    # (x, y, text), panel rows, lines).
    words, rows = list(block.words), list(block.rows)
    n_words, n_rows = len(words), len(rows)
    if n_words == 0 or n_rows == 0:
        raise ValueError("a caption block needs at least one word and one row")
    smooth = list(block.smooth) if block.smooth is not None else [True] * n_rows
    marks = list(block.marks) if block.marks is not None else [None] * n_rows
    n_cols, n_lines = _panel_grid(n_words, n_rows, per_line)
    height, width = image.shape[:2]
    pitch_x, pitch_y = panel_pitch((height, width))

    def origin(r: int, c: int) -> tuple[int, int]:  # map kind r, word c
        return (c % n_cols) * pitch_x, top + ((c // n_cols) * n_rows + r) * pitch_y

    data, annotations, titles = [], [], []
    for r, (name, maps) in enumerate(rows):
        maps = np.asarray(maps, np.float32)
        if maps.ndim != 3 or maps.shape[0] != n_words:
            raise ValueError(f"row {name!r}: maps must be [{n_words}, g, g], got {maps.shape}")
        cell_px = (height // maps.shape[1], width // maps.shape[2])
        if height % maps.shape[1] or width % maps.shape[2] or any(
                p % q for p in (pitch_x, pitch_y, top) for q in cell_px):
            raise ValueError(f"row {name!r}: a {maps.shape[1]} × {maps.shape[2]} grid does not tile a {height} × {width} "
                             "image with the panel gaps (each must be a whole number of cells)")
        for c in range(n_words):
            ox, oy = origin(r, c)
            canvas[oy:oy + height, ox:ox + width, :3] = overlay_pixels(image, maps[c], cmax=cmax, opacity=opacity,
                                                                       smooth=smooth[r])
            canvas[oy:oy + height, ox:ox + width, 3] = 255
            # A grey frame along the panel's edge (a white scene's edge would not show on a white page).
            _outline(canvas, 0, (1, 1), (ox, oy), (height, width), FRAME)
            if marks[r] is not None:
                _outline(canvas, np.asarray(marks[r])[c], maps.shape[1:], (ox, oy), cell_px)
        data.append(_hover_map(maps, words, name, [origin(r, c) for c in range(n_words)], image_shape=(height, width),
                               coloraxis=coloraxis, gettext=gettext))
    for c, word in enumerate(words):  # each word's title over its first map kind, on every line
        ox, oy = origin(0, c)
        titles.append((ox + width / 2 - 0.5, oy - 1.5, safe_label(word)))
    text = {"xref": "x", "yref": "y", "showarrow": False, "font": {"size": 14}}
    for line in range(n_lines):  # each map kind's title at the left of its row, on every line
        for r, (name, _) in enumerate(rows):
            _, oy = origin(r, line * n_cols)
            annotations.append({**text, "text": safe_label(name), "x": -0.5 - width * PANEL_GAP / 2,
                                "y": oy + height / 2, "xanchor": "right", "textangle": -90})
    if block.heading:
        annotations.append({**text, "text": f"<b>{html.escape(block.heading)}</b>", "x": -0.5, "xanchor": "left",
                            "y": top - _px(TITLE_ROOM, height), "yanchor": "bottom", "font": {"size": 15}})
    return data, annotations, titles, n_lines * n_rows, n_lines


def caption_blocks(
    image: np.ndarray,
    blocks: Sequence[CaptionBlock],
    *,
    title: str | None = None,
    opacity: float = 0.85,
    zmax: float | None = None,
    per_line: int = PANELS_PER_LINE,
    gettext: Gettext = untranslated,
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
    The figure is one picture and a few invisible traces. Every panel (the map in the colour scale
    over the image, at `opacity`, and the outlines) and each block's colour bar are painted on the
    server into one RGBA image (overlay_pixels, viz/pixel_scale.py); over it, one heatmap per block
    and map kind with opacity 0 gives each cell's value on hover, one text trace holds the word
    titles and one the bars' numbers and titles. Traces: the image, then per block its map kinds'
    heatmaps in order, then the word titles, then the bars' text. As an image and a heatmap per panel,
    the titles as annotations and the outlines as shapes, the figure takes plotly.js about twice the
    time, and plotly.js's own colour bars 4–13 ms of each update (docs/PERFORMANCE.md, "Figures").
    """
    image = np.asarray(image)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be [H, W, 3], got {image.shape}")
    if not blocks:
        raise ValueError("caption_blocks needs at least one block")
    height, width = image.shape[:2]
    pitch_x, pitch_y = panel_pitch((height, width))
    gap, title_room, heading_room = _px(PANEL_GAP, height), _px(TITLE_ROOM, height), _px(BLOCK_HEADING, height)
    tops, top, columns = [], 0, 1
    for i, block in enumerate(blocks):  # where each block starts, to size the picture
        if len(block.words) == 0 or len(block.rows) == 0:
            raise ValueError("a caption block needs at least one word and one row")
        top += heading_room * bool(block.heading and i > 0)  # the first block's heading sits in the title room
        tops.append(top)
        n_cols, n_lines = _panel_grid(len(block.words), len(block.rows), per_line)
        top += n_lines * len(block.rows) * pitch_y
        columns = max(columns, n_cols)
    # The axes keep a title's room under the last row: a row title turned upright can be longer than its panel.
    span_x, span_y = columns * pitch_x - _px(PANEL_GAP, width), top - gap
    bar_left, bar_width = span_x + _px(BAR_GAP, width), _px(BAR_WIDTH, width)
    canvas = np.zeros((span_y - title_room, bar_left + bar_width, 4), np.uint8)  # transparent between the panels
    hovers, annotations, titles, spans = [], [], [], []
    panel_rows, lines, headings = 0, 0, 0
    for i, (block, top) in enumerate(zip(blocks, tops)):
        headings += bool(block.heading)
        axis = "coloraxis" if i == 0 else f"coloraxis{i + 1}"
        peak = float(zmax) if zmax is not None else max(float(np.max(m)) for _, m in block.rows)
        peak = max(peak, 1e-9)
        traces, notes, words, block_rows, block_lines = _block_tiles(
            image, block, canvas, top=top, opacity=opacity, per_line=per_line, cmax=peak, coloraxis=axis,
            gettext=gettext)
        hovers += traces
        annotations += notes
        titles += words
        spans.append((axis, top, top + block_rows * pitch_y - gap - title_room, peak))
        panel_rows += block_rows
        lines += block_lines
    scale = []  # each block's colour bar, painted beside its panels, and its numbers and title as text
    for _, first, last, peak in spans:
        paint_scale_bar(canvas, left=bar_left, top=first, width=bar_width, height=last - first, cmax=peak)
        scale += [(bar_left + bar_width + 1.5, bar_value_y(value, top=first, height=last - first, cmax=peak), label,
                   "middle right") for value, label in scale_ticks(peak)]
        scale.append((bar_left + bar_width / 2 - 0.5, first - _px(0.0625, height), gettext("weight"), "top center"))
    # zlib level 1: half the time of the default for a third more bytes (24 KB for soft and hard).
    picture = {"type": "image", "source": png_data_uri(canvas, compress_level=1), "x0": 0, "y0": 0, "hoverinfo": "skip", "name": "panels"}
    text = {"type": "scatter", "mode": "text", "hoverinfo": "skip", "showlegend": False, "cliponaxis": False}
    words = {**text, "x": [x for x, _, _ in titles], "y": [y for _, y, _ in titles], "text": [t for _, _, t in titles],
             "textposition": "top center", "textfont": {"size": 14}, "name": "words"}
    numbers = {**text, "x": [p[0] for p in scale], "y": [p[1] for p in scale], "text": [p[2] for p in scale],
               "textposition": [p[3] for p in scale], "textfont": {"size": 13}, "name": "colour scale"}
    above = title_room + (heading_room if blocks[0].heading else 0)
    layout = {
        "title": {"text": html.escape(title) if title else None},
        "xaxis": {"visible": False, "range": [-0.5 - width * 0.12, bar_left + bar_width + _px(BAR_LABELS, width) - 0.5],
                  "constrain": "domain"},
        # Narrower than its height allows, the grid keeps its aspect and hugs the top: no band above.
        "yaxis": {"visible": False, "range": [span_y - 0.5, -0.5 - above], "scaleanchor": "x", "constrain": "domain",
                  "constraintoward": "top"},
        "plot_bgcolor": "rgba(0,0,0,0)", "annotations": annotations, "showlegend": False,
        # PANEL_PX for an image's side: the picture's whole height (titles and gaps too) at that scale.
        "height": int(PANEL_PX / height * (span_y + above)) + (50 if title else 20) + 10,
        "margin": {"l": 10, "r": 10, "t": 50 if title else 20, "b": 10},
    }
    for axis, _, _, peak in spans:  # the hover maps' scales; the bars are painted above
        layout[axis] = {"colorscale": COLORSCALE, "cmin": 0.0, "cmax": peak, "showscale": False}
    # Every value above is built here from checked arrays and fixed names: plotly's per-property
    # validation (most of this figure's cost) is skipped.
    return unchecked_figure({"data": [picture, *hovers, words, numbers], "layout": layout})


def caption_block(record: AttentionRecord, *, gettext: Gettext = untranslated) -> CaptionBlock:
    """Returns the panels of a soft or hard captioner record (models/captioner/records.py), headed
    by the caption. Soft: one smooth α row. Hard: α with the decoder's cell outlined and, when
    samples were drawn, the sample frequencies below."""
    _ = gettext
    words = list(record.query_labels)
    caption = record.extras.get("caption", " ".join(words))
    if record.meta.get("variant") != "hard":
        return CaptionBlock(words, [(_("α (soft)"), record.weights)], smooth=[True],
                            heading=_("Soft: “{caption}”").format(caption=caption))
    rows = [("α", record.weights)]
    if "frequencies" in record.extras:
        samples = np.asarray(record.extras["samples"]).shape[-1]
        rows.append((_("frequency of {samples} samples").format(samples=samples), record.extras["frequencies"]))
    heading = (_("Hard (sampled cell outlined): “{caption}”") if record.meta.get("mode", "sample") == "sample"
               else _("Hard (argmax cell outlined): “{caption}”"))
    return CaptionBlock(words, rows, smooth=[False] * len(rows),
                        marks=[record.extras["decode_cells"]] + [None] * (len(rows) - 1),
                        heading=heading.format(caption=caption))


def caption_figure(image: np.ndarray, record: AttentionRecord, *, gettext: Gettext = untranslated) -> go.Figure:
    """Returns the caption panels of one captioner record, its heading as the title.
    image: the model input [64, 64, 3]."""
    block = caption_block(record, gettext=gettext)
    return caption_blocks(image, [replace(block, heading=None)], title=block.heading, gettext=gettext)


def captions_figure(image: np.ndarray, records: Sequence[AttentionRecord], *,
                    gettext: Gettext = untranslated) -> go.Figure:
    """Returns the caption panels of several captioner records (soft, hard) stacked in one figure,
    each block headed by its caption, with its own colour scale."""
    return caption_blocks(image, [caption_block(r, gettext=gettext) for r in records], gettext=gettext)


def _patch_click_targets(gh: int, gw: int, dy: float, dx: float, gettext: Gettext = untranslated) -> go.Scatter:
    # A faint marker at every patch centre: plotly heatmaps cannot be clicked, markers can.
    rows, cols = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")
    return go.Scatter(
        x=(cols.ravel() + 0.5) * dx - 0.5, y=(rows.ravel() + 0.5) * dy - 0.5, mode="markers",
        marker={"size": max(4, min(14, int(300 / max(gh, gw)))), "color": "rgba(255,255,255,0.01)"},
        customdata=np.arange(gh * gw), text=[f"{r}c{c}" for r, c in zip(rows.ravel(), cols.ravel())],
        hovertemplate=gettext("click to make patch r{patch} the query").format(patch="%{text}") + "<extra></extra>",
        name="patches", showlegend=False,
    )


def _sample_markers(samples: np.ndarray, gh: int, gw: int, dy: float, dx: float,
                    gettext: Gettext = untranslated) -> go.Scatter:
    # One cross per drawn patch, sized by how often it was drawn.
    counts = np.bincount(samples.ravel(), minlength=gh * gw)
    drawn = np.flatnonzero(counts)
    return go.Scatter(
        x=(drawn % gw + 0.5) * dx - 0.5, y=(drawn // gw + 0.5) * dy - 0.5, mode="markers",
        marker={"size": 6 + 24 * np.sqrt(counts[drawn] / counts.max()), "color": "#d62728", "symbol": "x"},
        customdata=counts[drawn], name="samples",
        hovertemplate=gettext("drawn {count} times").format(count="%{customdata}") + "<extra></extra>",
        showlegend=False,
    )


def patch_attention_figure(
    image: np.ndarray,
    weights: np.ndarray,
    query: tuple[int, int],
    *,
    title: str | None = None,
    opacity: float = 0.8,
    samples: np.ndarray | None = None,
    value_name: str = "α",
    gettext: Gettext = untranslated,
) -> go.Figure:
    """Returns the photo with one query patch's attention over all patches.

    image uint8 [H, W, 3]; weights float [gh, gw] (one per patch); query (row, col) of the
    query patch, outlined; samples: optional int [N] patch indices drawn (hard), drawn as
    markers sized by count; value_name: what weights are, in the hover ("α", or the sample
    frequency when they count draws). A faint marker at every patch centre makes patches clickable
    (a click selects one and returns its customdata: the patch index).
    """
    image = np.asarray(image)
    weights = np.asarray(weights, np.float32)
    # The map is painted into the picture (overlay_pixels: opacity in proportion to the weight, so
    # patches of weight 0 show the photo as it is); the heatmap over it is invisible, for hover and colour bar.
    fig = image_overlay(image, weights, opacity=0.0, smooth=False)
    painted = overlay_pixels(image, weights, cmax=max(float(weights.max(initial=0.0)), 1e-9), opacity=opacity,
                             smooth=False)
    fig.update_traces(selector={"type": "image"}, source=png_data_uri(painted, compress_level=1))
    height, width = image.shape[:2]
    gh, gw = weights.shape
    dy, dx = height / gh, width / gw
    rows, cols = np.meshgrid(np.arange(gh), np.arange(gw), indexing="ij")
    fig.update_traces(
        selector={"type": "heatmap"}, name=value_name, customdata=np.stack([rows, cols], -1),
        hovertemplate=gettext("patch r{row}c{col}").format(row="%{customdata[0]}", col="%{customdata[1]}")
        + f"<br>{html.escape(value_name)} = %{{z:.4f}}<extra></extra>",
    )
    fig.add_trace(_patch_click_targets(gh, gw, dy, dx, gettext))
    if samples is not None and len(samples):
        fig.add_trace(_sample_markers(np.asarray(samples), gh, gw, dy, dx, gettext))
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


def patch_figure(photo: np.ndarray, record: AttentionRecord, *, title: str | None = None,
                 gettext: Gettext = untranslated) -> go.Figure:
    """Returns patch_attention_figure of a patch self-attention record (models/captioner/patches.py).

    photo: the photo the record's patches were cut from (prepare_photo's crop). A sampled record's
    weights are the share of draws per patch: its hover and colour bar say "sample frequency", not α.
    """
    row, col = record.meta["query"]
    samples = record.extras.get("samples")
    value_name = gettext("sample frequency") if record.meta.get("mode") == "sample" else "α"
    fig = patch_attention_figure(photo, record.weights[0], (row, col), title=title, value_name=value_name,
                                 gettext=gettext, samples=None if samples is None else np.asarray(samples)[0])
    fig.update_traces(selector={"type": "heatmap"}, colorbar_title_text=value_name)
    return fig
