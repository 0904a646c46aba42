"""Streamlit helpers shared by the pages: export buttons and one-line error messages.

This is the only place besides pages/ and app.py that imports streamlit.
"""

from __future__ import annotations

import functools
import re

import plotly.graph_objects as go
import streamlit as st

from models.record import AttentionRecord
from viz.export import MIME_TYPES, export_bytes, image_export_available

BUTTON_FORMATS = ("png", "svg", "pdf", "html", "csv", "json", "npy")


def _file_stem(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:60] or "attention"


def _deferred_export(record: AttentionRecord, fig: go.Figure, fmt: str) -> bytes:
    return export_bytes(record, fmt, fig)


FORMAT_LABELS = {
    "png": "PNG image",
    "svg": "SVG (vector)",
    "pdf": "PDF (vector)",
    "html": "HTML (interactive, offline)",
    "csv": "CSV (weights)",
    "json": "JSON (record)",
    "npy": "NPY (weights array)",
}


def export_buttons(record: AttentionRecord, fig: go.Figure, *, key: str, name: str | None = None) -> None:
    """Shows an Export menu with one download per format; bytes are made only on click."""
    stem = _file_stem(name or record.mechanism)
    images_ok, hint = image_export_available()
    with st.popover("Export", icon=":material/download:", width="content"):
        for fmt in BUTTON_FORMATS:
            is_image = fmt in ("png", "svg", "pdf")
            st.download_button(
                FORMAT_LABELS[fmt],
                data=functools.partial(_deferred_export, record, fig, fmt),
                file_name=f"{stem}.{fmt}",
                mime=MIME_TYPES[fmt],
                key=f"{key}-export-{fmt}",
                on_click="ignore",
                disabled=is_image and not images_ok,
                help=hint if is_image and not images_ok else None,
                width="stretch",
            )


MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]<>#~|$])")


def escape_markdown(text: str) -> str:
    """Returns `text` with every character Streamlit's markdown would format (emphasis, code,
    links, HTML, headings, tables, $…$ maths) backslash-escaped, so it shows as typed."""
    return MARKDOWN_SPECIALS.sub(r"\\\1", text)


def show_input_error(error: Exception) -> None:
    """Shows a user-caused error as one line (never a traceback); the text is shown as is."""
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    st.error(escape_markdown(message), icon=":material/error:")
