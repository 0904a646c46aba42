"""Export: a record or a figure in, bytes out. Nothing here writes files or shows anything.

Data formats (CSV, JSON, NPY, NPZ) come straight from the record and never import plotly.
HTML embeds plotly.js, so the file opens offline. Image formats (PNG, SVG, PDF) go through
viz/image_export.py: one watched Chromium per process, every render with a timeout, a busy
or broken exporter answered with ExportBusy ("try again") instead of a hang.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from typing import TYPE_CHECKING

import numpy as np

from models.record import AttentionRecord
from viz.image_export import ExportBusy, ExportUnavailable, exporter_for

__all__ = ["ExportBusy", "ExportUnavailable", "export_bytes", "figure_bytes", "record_bytes", "text_export_allowed"]

if TYPE_CHECKING:  # plotly loads only when a figure is exported (data formats never need it)
    import plotly.graph_objects as go

RECORD_FORMATS = ("csv", "json", "npy", "npz")
FIGURE_FORMATS = ("png", "svg", "pdf", "html")
ALL_FORMATS = FIGURE_FORMATS + RECORD_FORMATS

MIME_TYPES = {
    "png": "image/png",
    "svg": "image/svg+xml",
    "pdf": "application/pdf",
    "html": "text/html",
    "csv": "text/csv",
    "json": "application/json",
    "npy": "application/octet-stream",
    "npz": "application/octet-stream",
}

_BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
INSTALL_HINT = (
    "image export needs Chromium: install it (Debian/Ubuntu: apt-get install chromium) "
    "or set BROWSER_PATH to a Chrome/Chromium binary"
)

# Above this many weights, CSV and JSON are not offered: a 6 × 12 × 512 × 512 record is 19 M
# CSV rows (hundreds of MB); NPY holds the same numbers in 4 bytes each.
TEXT_EXPORT_MAX_CELLS = 2_000_000


def chromium_path() -> str | None:
    """Returns the browser kaleido will use: $BROWSER_PATH if it exists, else one on PATH."""
    configured = os.environ.get("BROWSER_PATH")
    if configured:
        return configured if os.path.isfile(configured) and os.access(configured, os.X_OK) else None
    for name in _BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def image_export_available() -> tuple[bool, str]:
    """Returns (available, message): whether PNG/SVG/PDF export can run in this process."""
    path = chromium_path()
    if path is None:
        return False, INSTALL_HINT
    return True, f"image export uses {path}"


def figure_bytes(fig: go.Figure, fmt: str, *, width: int | None = None, height: int | None = None, scale: float = 2.0) -> bytes:
    """Returns the figure as PNG, SVG, PDF or standalone (offline) HTML bytes."""
    import plotly.io as pio

    from viz.chart_style import styled_spec

    fmt = fmt.lower()
    spec = styled_spec(fig.to_dict())  # the page's look (a copy: the caller's figure stays as it was)
    if fmt == "html":
        # plotly.js embedded (not a CDN link), so the file opens offline.
        return pio.to_html(spec, include_plotlyjs=True, full_html=True, validate=False,
                           config={"displaylogo": False}).encode("utf-8")
    if fmt not in ("png", "svg", "pdf"):
        raise ValueError(f"unknown figure format {fmt!r}; use one of {', '.join(FIGURE_FORMATS)}")
    path = chromium_path()
    if path is None:
        raise ExportUnavailable(INSTALL_HINT)
    width = width or 900
    height = height or int(fig.layout.height or 500)
    return exporter_for(path).render(spec, fmt, width, height, scale if fmt == "png" else 1)


def text_export_allowed(record: AttentionRecord) -> bool:
    """Returns whether CSV and JSON are offered for this record (see TEXT_EXPORT_MAX_CELLS)."""
    return record.weights.size <= TEXT_EXPORT_MAX_CELLS


def record_bytes(record: AttentionRecord, fmt: str, *, compress: bool = False) -> bytes:
    """Returns the record's weights as CSV, JSON, NPY or NPZ bytes (npz compressed only if asked:
    zlib saves about 30 % on float32 attention and costs several times the write time)."""
    fmt = fmt.lower()
    if fmt == "json":
        return json.dumps(record.to_json_dict(), ensure_ascii=False, allow_nan=False).encode("utf-8")
    if fmt == "npy":
        buffer = io.BytesIO()
        np.save(buffer, record.weights, allow_pickle=False)
        return buffer.getvalue()
    if fmt == "npz":
        buffer = io.BytesIO()
        (np.savez_compressed if compress else np.savez)(buffer, **record.to_npz_dict())
        return buffer.getvalue()
    if fmt == "csv":
        return _record_csv(record).encode("utf-8")
    raise ValueError(f"unknown record format {fmt!r}; use one of {', '.join(RECORD_FORMATS)}")


def _csv_cell(text: str) -> str:
    # Spreadsheets run cells that start with = + - @ as formulas; a leading quote stops that.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _cell_words(record: AttentionRecord) -> np.ndarray | None:
    """Returns extras["words"] when it names every cell of a 2-D record (the HAN's word slots hold a
    different word in each sentence), else None."""
    words = record.extras.get("words")
    if words is None or record.leading_axes:
        return None
    words = np.asarray(words)
    return words if words.shape == record.weights.shape and words.dtype.kind in "UO" else None


def _record_csv(record: AttentionRecord) -> str:
    """2-D records: a query × key matrix with labels. Records whose columns hold a different word in
    each row (extras["words"], the HAN's): one row per word, long form, padding left out. Others: one
    row per weight, long form."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    words = _cell_words(record)
    if words is not None:
        row_axis, col_axis = record.axes
        writer.writerow([f"{row_axis} index", row_axis, f"{col_axis} index", col_axis, "weight"])
        for qi, (qlabel, row) in enumerate(zip(record.query_labels, record.weights)):
            for ki, word in enumerate(words[qi]):
                if str(word):
                    writer.writerow([qi, _csv_cell(qlabel), ki, _csv_cell(str(word)), f"{row[ki]:.8g}"])
        return out.getvalue()
    if not record.leading_axes:
        matrix = record.matrix()
        writer.writerow(["query \\ key", *(_csv_cell(k) for k in record.key_labels)])
        for label, row in zip(record.query_labels, matrix):
            writer.writerow([_csv_cell(label), *(f"{x:.8g}" for x in row)])
        return out.getvalue()
    lead = record.leading_axes
    writer.writerow([*lead, "query", "key", "weight"])
    lead_shape = record.weights.shape[: len(lead)]
    for index in np.ndindex(*lead_shape):
        matrix = record.matrix(**dict(zip(lead, index)))
        for qi, qlabel in enumerate(record.query_labels):
            for ki, klabel in enumerate(record.key_labels):
                writer.writerow([*index, _csv_cell(qlabel), _csv_cell(klabel), f"{matrix[qi, ki]:.8g}"])
    return out.getvalue()


def export_bytes(record: AttentionRecord, fmt: str, fig: go.Figure | None = None, *, compress: bool = False) -> bytes:
    """Returns one export: figure formats use `fig` (default: the record's default figure)."""
    fmt = fmt.lower()
    if fmt in FIGURE_FORMATS:
        if fig is None:  # the CLI: the record's default figure, its axes set as the app sets them
            from viz.chart_style import for_the_page
            from viz.figures import record_figure

            fig = for_the_page(record_figure(record))
        return figure_bytes(fig, fmt)
    return record_bytes(record, fmt, compress=compress)
