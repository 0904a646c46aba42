"""Export: a record or a figure in, bytes out. Nothing here opens files or shows anything.

The bytes come as one bytes object (export_bytes, record_bytes: the pages' download buttons)
or streamed into a binary file the caller opened (write_export: the CLI), the same bytes
either way. Streamed, a record's CSV and JSON are written a block of weights at a time: a
6 × 12 × 512 × 512 record is about 600 MB of CSV, and as one string several times that.

Data formats (CSV, JSON, NPY, NPZ) come straight from the record and never import plotly.
HTML embeds plotly.js, so the file opens offline. Image formats (PNG, SVG, PDF) go through
viz/image_export.py: one watched Chromium per process, every render with a timeout, a busy
or broken exporter answered with ExportBusy ("try again") instead of a hang.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import shutil
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from models.record import AttentionRecord, json_safe
from viz.i18n_text import N_, Gettext, untranslated
from viz.image_export import ExportBusy, ExportUnavailable, exporter_for

__all__ = ["IMAGE_EXPORT_PX", "ExportBusy", "ExportUnavailable", "export_bytes", "figure_bytes", "record_bytes",
           "text_export_allowed", "write_export"]

if TYPE_CHECKING:  # plotly loads only when a figure is exported (data formats never need it)
    import plotly.graph_objects as go

IMAGE_EXPORT_PX = 900  # a picture's width unless its figure sets one (viz.plotly_json.with_width)
RECORD_FORMATS = ("csv", "json", "npy", "npz")
FIGURE_FORMATS = ("png", "svg", "pdf", "html")

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
INSTALL_HINT = N_(
    "image export needs Chromium: install it (Debian/Ubuntu: apt-get install chromium) "
    "or set BROWSER_PATH to a Chrome/Chromium binary"
)

# Above this many weights, CSV and JSON are not offered: a 6 × 12 × 512 × 512 record is 19 M
# CSV rows (hundreds of MB); NPY holds the same numbers in 4 bytes each.
TEXT_EXPORT_MAX_CELLS = 2_000_000
# Streamed CSV and JSON hold about this many weights as text at a time (a few MB).
TEXT_BLOCK_CELLS = 2**18


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
    """Returns the figure as PNG, SVG, PDF or standalone (offline) HTML bytes: a picture `width` px wide
    (default: the figure's layout.width, else IMAGE_EXPORT_PX); an HTML page takes its window's width."""
    import plotly.io as pio

    from viz.chart_style import styled_spec

    fmt = fmt.lower()
    spec = styled_spec(fig.to_dict())  # the page's look (a copy: the caller's figure stays as it was)
    if fmt == "html":
        spec["layout"].pop("width", None)
        # plotly.js embedded (not a CDN link), so the file opens offline.
        return pio.to_html(spec, include_plotlyjs=True, full_html=True, validate=False,
                           config={"displaylogo": False}).encode("utf-8")
    if fmt not in ("png", "svg", "pdf"):
        raise ValueError(f"unknown figure format {fmt!r}; use one of {', '.join(FIGURE_FORMATS)}")
    path = chromium_path()
    if path is None:
        raise ExportUnavailable(INSTALL_HINT)
    width = width or int(fig.layout.width or IMAGE_EXPORT_PX)
    height = height or int(fig.layout.height or 500)
    return exporter_for(path).render(spec, fmt, width, height, scale if fmt == "png" else 1)


def text_export_allowed(record: AttentionRecord) -> bool:
    """Returns whether CSV and JSON are offered for this record (see TEXT_EXPORT_MAX_CELLS)."""
    return record.weights.size <= TEXT_EXPORT_MAX_CELLS


def record_bytes(record: AttentionRecord, fmt: str, *, compress: bool = False) -> bytes:
    """Returns the record's weights as CSV, JSON, NPY or NPZ bytes (npz compressed only if asked:
    zlib saves about 30 % on float32 attention and costs several times the write time)."""
    buffer = io.BytesIO()
    write_record(record, fmt, buffer, compress=compress)
    return buffer.getvalue()


def write_record(record: AttentionRecord, fmt: str, file: BinaryIO, *, compress: bool = False) -> None:
    """Writes what record_bytes returns into a binary file, a block at a time (see the module docstring)."""
    fmt = fmt.lower()
    if fmt not in RECORD_FORMATS:
        raise ValueError(f"unknown record format {fmt!r}; use one of {', '.join(RECORD_FORMATS)}")
    if fmt == "npy":
        np.save(file, record.weights, allow_pickle=False)
    elif fmt == "npz":
        (np.savez_compressed if compress else np.savez)(file, **record.to_npz_dict())
    else:
        for text in _json_text(record) if fmt == "json" else _csv_text(record):
            file.write(text.encode("utf-8"))


# ------------------------------------------------------------------ JSON, streamed

_dumps = functools.partial(json.dumps, ensure_ascii=False, allow_nan=False)
_STREAMED = object()


def _json_text(record: AttentionRecord) -> Iterator[str]:
    """Yields json.dumps(record.to_json_dict(), ensure_ascii=False, allow_nan=False) in pieces, the
    weights a block at a time (tests/viz/test_export.py holds the two equal)."""
    fields = {
        "mechanism": record.mechanism,
        "axes": list(record.axes),
        "shape": list(record.weights.shape),
        "weights": _STREAMED,
        "query_labels": list(record.query_labels),
        "key_labels": list(record.key_labels),
        "meta": dict(record.meta),
        **{name: json_safe(value) for name, value in record.extras.items()},
    }
    if fields["weights"] is not _STREAMED or not all(isinstance(name, str) for name in fields):
        yield _dumps(record.to_json_dict())  # an extra named like a field: the one-piece form decides
        return
    for n, (name, value) in enumerate(fields.items()):
        yield f"{', ' if n else '{'}{_dumps(name)}: "
        if value is _STREAMED:
            yield from _json_array(record.weights)
        else:
            yield _dumps(value)
    yield "}"


def _json_array(weights: np.ndarray) -> Iterator[str]:
    # json.dumps writes a list as "[" + ", ".join(items) + "]": so does this, one block at a time.
    if weights.ndim == 0 or weights.size <= TEXT_BLOCK_CELLS:
        yield _dumps(weights.tolist() if np.isfinite(weights).all() else json_safe(weights))
        return
    for i in range(len(weights)):
        yield ", " if i else "["
        yield from _json_array(weights[i])
    yield "]"


# ------------------------------------------------------------------ CSV, streamed

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


def _csv_rows(rows: Iterable[list]) -> Iterator[str]:
    """Yields the rows as csv.writer writes them, a few thousand rows a piece."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for n, row in enumerate(rows, start=1):
        writer.writerow(row)
        if n % 4096 == 0:
            yield out.getvalue()
            out.seek(0)
            out.truncate()
    yield out.getvalue()


def _csv_fields(cells: Iterable[str]) -> list[str]:
    """Returns each cell as csv.writer writes it inside a row of several fields (quoted where needed)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    fields = []
    for cell in cells:
        out.seek(0)
        out.truncate()
        writer.writerow([cell, ""])  # a second field: a lone empty field would be written as ""
        fields.append(out.getvalue().removesuffix(",\n"))
    return fields


def _csv_text(record: AttentionRecord) -> Iterator[str]:
    """Yields the record's CSV. 2-D records: a query × key matrix with labels. Records whose columns
    hold a different word in each row (extras["words"], the HAN's): one row per word, long form,
    padding left out. Others: one row per weight, long form."""
    words = _cell_words(record)
    if words is not None:
        row_axis, col_axis = record.axes
        yield from _csv_rows([[f"{row_axis} index", row_axis, f"{col_axis} index", col_axis, "weight"]])
        yield from _csv_rows([qi, _csv_cell(qlabel), ki, _csv_cell(str(word)), f"{row[ki]:.8g}"]
                             for qi, (qlabel, row) in enumerate(zip(record.query_labels, record.weights))
                             for ki, word in enumerate(words[qi]) if str(word))
        return
    if not record.leading_axes:
        yield from _csv_rows([["query \\ key", *(_csv_cell(k) for k in record.key_labels)]])
        yield from _csv_rows([_csv_cell(label), *(f"{x:.8g}" for x in row)]
                             for label, row in zip(record.query_labels, record.matrix()))
        return
    # One row per weight, millions for a transformer: each row is formatted directly, its label
    # fields quoted once the way csv.writer quotes them (the tests hold the two equal).
    lead = record.leading_axes
    yield from _csv_rows([[*lead, "query", "key", "weight"]])
    queries = _csv_fields(_csv_cell(label) for label in record.query_labels)
    keys = [f"{field}," for field in _csv_fields(_csv_cell(label) for label in record.key_labels)]
    rows_per_piece = max(1, TEXT_BLOCK_CELLS // max(1, len(keys)))
    for index in np.ndindex(*record.weights.shape[: len(lead)]):
        matrix = record.matrix(**dict(zip(lead, index)))
        start = "".join(f"{i}," for i in index)
        for first in range(0, len(queries), rows_per_piece):
            block = matrix[first : first + rows_per_piece].tolist()
            yield "".join(f"{start}{query},{key}{x:.8g}\n"
                          for query, row in zip(queries[first:], block) for key, x in zip(keys, row))


def export_bytes(record: AttentionRecord, fmt: str, fig: go.Figure | None = None, *, compress: bool = False,
                 gettext: Gettext = untranslated) -> bytes:
    """Returns one export: figure formats use `fig` (default: the record's default figure, its texts in
    gettext's language)."""
    fmt = fmt.lower()
    if fmt in FIGURE_FORMATS:
        if fig is None:  # the CLI: the record's default figure, its axes set as the app sets them
            from viz.chart_style import for_the_page
            from viz.figures import record_figure
            from viz.lm_lens import knockout_grid, lens_grid

            # Records of quantities other than α get the page's own figure: a knock-out grid holds signed
            # changes (a diverging scale centred on 0), a lens grid each layer's top token.
            own = {"lm-knockout": knockout_grid, "lm-logit-lens": lens_grid}.get(record.mechanism, record_figure)
            fig = for_the_page(own(record, gettext=gettext))
        return figure_bytes(fig, fmt)
    return record_bytes(record, fmt, compress=compress)


def write_export(record: AttentionRecord, fmt: str, file: BinaryIO, *, compress: bool = False,
                 gettext: Gettext = untranslated) -> None:
    """Writes what export_bytes(record, fmt, gettext=…) returns into a binary file; data formats a block at a time."""
    if fmt.lower() in FIGURE_FORMATS:
        file.write(export_bytes(record, fmt, gettext=gettext))
    else:
        write_record(record, fmt, file, compress=compress)
