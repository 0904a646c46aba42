"""Export: a record or a figure in, bytes out. Nothing here writes files or shows anything.

Image formats (PNG, SVG, PDF) go through kaleido, which drives a Chromium. One kaleido
server is started on first use and kept for the life of the process (a fresh browser per
export costs seconds); MathJax is off and plotly.js comes from the plotly package, so no
export reaches the network.
"""

from __future__ import annotations

import atexit
import csv
import io
import json
import os
import shutil
import threading
import warnings
from typing import TYPE_CHECKING

import numpy as np

from models.record import AttentionRecord

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

_kaleido_lock = threading.Lock()
_kaleido_state = {"started": False}


class ExportUnavailable(RuntimeError):
    """Image export cannot run here (no Chromium); the message says what to install."""


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


def _ensure_kaleido() -> None:
    with _kaleido_lock:
        if _kaleido_state["started"]:
            return
        path = chromium_path()
        if path is None:
            raise ExportUnavailable(INSTALL_HINT)
        import kaleido

        kaleido.start_sync_server(mathjax=False, path=path, silence_warnings=True)
        _kaleido_state["started"] = True
        atexit.register(_stop_kaleido)


def _stop_kaleido() -> None:
    with _kaleido_lock:
        if _kaleido_state["started"]:
            import kaleido

            kaleido.stop_sync_server(silence_warnings=True)
            _kaleido_state["started"] = False


def figure_bytes(fig: go.Figure, fmt: str, *, width: int | None = None, height: int | None = None, scale: float = 2.0) -> bytes:
    """Returns the figure as PNG, SVG, PDF or standalone (offline) HTML bytes."""
    import plotly.io as pio

    fmt = fmt.lower()
    if fmt == "html":
        # plotly.js embedded (not a CDN link), so the file opens offline.
        return pio.to_html(fig, include_plotlyjs=True, full_html=True, config={"displaylogo": False}).encode("utf-8")
    if fmt not in ("png", "svg", "pdf"):
        raise ValueError(f"unknown figure format {fmt!r}; use one of {', '.join(FIGURE_FORMATS)}")
    _ensure_kaleido()
    width = width or 900
    height = height or int(fig.layout.height or 500)
    with _kaleido_lock, warnings.catch_warnings():
        # plotly passes options meant for a one-shot browser; the running server ignores them.
        warnings.filterwarnings("ignore", message="The kopts argument is ignored")
        return pio.to_image(fig, format=fmt, width=width, height=height, scale=scale if fmt == "png" else 1)


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


def _record_csv(record: AttentionRecord) -> str:
    """2-D records: a query × key matrix with labels. Others: one row per weight, long form."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
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
        if fig is None:
            from viz.figures import record_figure

            fig = record_figure(record)
        return figure_bytes(fig, fmt)
    return record_bytes(record, fmt, compress=compress)
