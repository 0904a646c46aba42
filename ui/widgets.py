"""Streamlit helpers shared by the pages: option widgets, figures with their export menu,
one-line errors, plotly clicks and training progress.

ui/ and pages/ are the only places besides app.py that import streamlit. Widgets made from a
registry option take its range, step and default (models/options.py), and every value they
return is checked again on the server when the page calls Mechanism.build.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import plotly.graph_objects as go
import streamlit as st

from models.options import Option
from models.record import AttentionRecord, InputError
from models.registry import Mechanism
from viz.export import MIME_TYPES, export_bytes, image_export_available

T = TypeVar("T")
BUTTON_FORMATS = ("png", "svg", "pdf", "html", "csv", "json", "npy")
FORMAT_LABELS = {
    "png": "PNG image",
    "svg": "SVG (vector)",
    "pdf": "PDF (vector)",
    "html": "HTML (interactive, offline)",
    "csv": "CSV (weights)",
    "json": "JSON (record)",
    "npy": "NPY (weights array)",
}
MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]<>#~|$])")


# ------------------------------------------------------------------ text and errors


def escape_markdown(text: str) -> str:
    """Returns `text` with every character Streamlit's markdown would format (emphasis, code,
    links, HTML, headings, tables, $…$ maths) backslash-escaped, so it shows as typed."""
    return MARKDOWN_SPECIALS.sub(r"\\\1", str(text))


def show_input_error(error: Exception) -> None:
    """Shows a user-caused error as one line (never a traceback); the text is shown as is."""
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    st.error(escape_markdown(message), icon=":material/error:")


def checked(fn: Callable[..., T], *args: Any, stop: bool = True, **kwargs: Any) -> T | None:
    """Returns fn(*args, **kwargs); on InputError shows its one line and stops the script
    (stop=False: returns None instead, so a page can go on with its other sections)."""
    try:
        return fn(*args, **kwargs)
    except InputError as error:
        show_input_error(error)
        if stop:
            st.stop()
        return None


# ------------------------------------------------------------------ widgets from options


def option_slider(option: Option, *, key: str, label: str | None = None, **kwargs: Any):
    """Returns st.slider over the option's range, step and default."""
    number = float if option.kind == "float" else int
    default = kwargs.pop("value", option.default if option.default is not None else option.low)
    return st.slider(label or option.title, number(option.low), number(option.high), number(default),
                     number(option.step or 1), key=key, help=kwargs.pop("help", option.help), **kwargs)


def option_number(option: Option, *, key: str, label: str | None = None, **kwargs: Any):
    """Returns st.number_input over the option's range (whole numbers for int options)."""
    number = float if option.kind == "float" else int
    default = kwargs.pop("value", option.default if option.default is not None else option.low)
    return st.number_input(label or option.title, number(option.low), number(option.high), number(default),
                           number(option.step or 1), key=key, help=kwargs.pop("help", option.help), **kwargs)


def option_radio(option: Option, *, key: str, label: str | None = None, labels: Mapping[str, str] | None = None,
                 **kwargs: Any):
    """Returns st.radio over the option's choices, the default selected."""
    index = option.choices.index(option.default) if option.default in option.choices else 0
    return st.radio(label or option.title, option.choices, index=index, key=key,
                    format_func=(labels or {}).get if labels else str, help=kwargs.pop("help", option.help), **kwargs)


def declared(mechanism: Mechanism, values: Mapping[str, Any]) -> dict[str, Any]:
    """Returns the values the mechanism declares options for (pages sharing widgets between
    mechanisms, e.g. soft and hard, pass each only its own)."""
    names = {o.name for o in mechanism.options}
    return {k: v for k, v in values.items() if k in names}


# ------------------------------------------------------------------ figures and export


def _file_stem(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:60] or "attention"


def _deferred_export(record: AttentionRecord, fig: go.Figure, fmt: str) -> bytes:
    return export_bytes(record, fmt, fig)


def export_buttons(record: AttentionRecord, fig: go.Figure, *, key: str, name: str | None = None) -> None:
    """Shows an Export menu with one download per format; bytes are made only on click.

    record must be the one `fig` was drawn from: its CSV/JSON rows are the figure's numbers.
    """
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


def show_figure(fig: go.Figure, record: AttentionRecord, *, key: str, name: str | None = None,
                chart_key: str | None = None, **chart_kwargs: Any) -> Any:
    """Shows a figure and, under it, the Export menu of the record it was drawn from.

    Returns what st.plotly_chart returns (the selection state when on_select is given).
    """
    state = st.plotly_chart(fig, key=chart_key or f"{key}_chart", **chart_kwargs)
    export_buttons(record, fig, key=key, name=name)
    return state


def clicked_points(state: Any, *, curve: int | None = None) -> list[dict[str, Any]]:
    """Returns the clicked points of a plotly chart's selection state (optionally of one trace).

    state: what st.plotly_chart(on_select=...) stored, {"selection": {"points": [...]}} or None.
    """
    if not isinstance(state, Mapping):
        return []
    points = (state.get("selection") or {}).get("points") or []
    return [p for p in points if isinstance(p, Mapping) and (curve is None or p.get("curve_number") == curve)]


# ------------------------------------------------------------------ training progress


class StreamlitProgress:
    """The training Progress protocol (models/training.py) on an st.progress bar."""

    def __init__(self, text: str):
        self._text = text
        self._bar = st.progress(0.0, text=f"{text}: compiling…")

    def update(self, step: int, total: int, **metrics: float) -> None:
        shown = ", ".join(f"{k} {v:.3f}" for k, v in metrics.items())
        self._bar.progress(min(step / max(total, 1), 1.0), text=f"{self._text}: step {step}/{total}" +
                           (f", {shown}" if shown else ""))

    def close(self) -> None:
        pass
