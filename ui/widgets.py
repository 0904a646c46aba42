"""Streamlit helpers shared by the pages: option widgets, figures with their export menu,
one-line errors and plotly clicks.

ui/ and pages/ are the only places besides app.py that import streamlit. Widgets made from a
registry option take its range, step and default (models/options.py), and every value they
return is checked again on the server when the page calls Mechanism.build.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from models.errors import LabError
from models.options import Option
from models.record import AttentionRecord, InputError
from models.registry import Mechanism, warm
from models.text import Notice
from ui.editor import editor_key, index_or_none  # noqa: F401  (pages read them from here)
from ui.i18n import notice_text, translator
from ui.link_box import link_box
from ui.links import bound
from ui.markdown import escape_markdown
from ui.router import PHONE_FIT
from viz.chart_style import for_the_page, with_text_scaled
from viz.export import (
    IMAGE_EXPORT_PX,
    MIME_TYPES,
    ExportBusy,
    ExportUnavailable,
    export_bytes,
    figure_bytes,
    image_export_available,
    text_export_allowed,
)
from viz.i18n_text import N_
from viz.plotly_json import with_width

T = TypeVar("T")
LARGE_TEXT_KEY = "_large_text"  # session state: the sidebar's "Large text" switch (large_text_switch)
LARGE_TEXT_SCALE = 1.4  # its figures' text size, times the page's: 15 px ticks become 21 px
CHART_CONFIG = {"modeBarButtonsToRemove": ["autoScale2d"]}
IMAGE_FORMATS = ("svg", "pdf")  # made on a click, then saved: a busy exporter answers with one line in the menu
DATA_FORMATS = ("png", "html", "csv", "json", "npy")  # downloaded in one click, their bytes made on the click (PNG first)
WHOLE_PANEL_PX = 420  # px a panel in a whole figure's picture (show_panels' `whole`)
# session key: (figure key, format, bytes or None, error or None, what it was made from: _made_from)
MADE_IMAGE = "_export_made_image"
FORMAT_LABELS = {
    "png": N_("PNG image"),
    "svg": N_("SVG (vector)"),
    "pdf": N_("PDF (vector)"),
    "html": N_("HTML (interactive, offline)"),
    "csv": N_("CSV (weights)"),
    "json": N_("JSON (record)"),
    "npy": N_("NPY (weights array)"),
}
# The exporter's own one-line errors (viz/image_export.py, viz/export.py), translated where the menu shows them.
EXPORT_ERRORS = (N_("image export is busy; try again in a moment (CSV, JSON, NPY and HTML export work now)"),)


# ------------------------------------------------------------------ text and errors


WARM_ENV = "ATTENTION_LAB_WARM"  # "0": no background warm-up (the tests turn it off)


@st.cache_resource(show_spinner=False, max_entries=64)
def warm_in_background(page_file: str) -> threading.Thread | None:
    """Starts, once per process and page, a thread that builds every variant of the page on its
    example (models.registry.warm), so that switching to a variant the process has not used yet
    does not wait for its weights and compiled code. Returns the thread (None: turned off)."""
    if os.environ.get(WARM_ENV, "1").strip().lower() in ("0", "off", "false", "no"):
        return None
    # At normal priority: a niced thread hands its priority on to the threads it starts, and XLA's
    # compiler threads, once started here, would compile every session's code at that priority.
    thread = threading.Thread(target=warm, args=(page_file,), name=f"warm {page_file}", daemon=True)
    thread.start()
    return thread


def show_input_error(error: Exception) -> None:
    """Shows a user-caused error as one line (never a traceback), in the session's language: a message
    that is a Notice (models/text.py) part by part, any other as the catalog translates it whole."""
    first = error.args[0] if error.args else None
    message = first if isinstance(first, Notice) else str(error).splitlines()[0] if str(error) else type(error).__name__
    shown = notice_text(message, translator())
    st.error(escape_markdown(shown.splitlines()[0] if shown else shown), icon=":material/error:")


def show_notice(notice: str | None, icon: str = ":material/info:") -> None:
    """Shows a notice a model wrote into a record (what it did not read as typed: a cut text, characters
    its tokenizer could not read, an input outside what it knows) as one warning in the session's
    language, escaped, since it may quote what the user typed. Nothing for None or ""."""
    if notice:
        st.warning(escape_markdown(notice_text(notice, translator())), icon=icon)


def checked(fn: Callable[..., T], *args: Any, stop: bool = True, **kwargs: Any) -> T | None:
    """Returns fn(*args, **kwargs); on an error raised on purpose (models/errors.py: bad input, a
    damaged checkpoint, ...) shows its one line and stops the script (stop=False: returns None
    instead, so a page can go on with its other sections)."""
    try:
        return fn(*args, **kwargs)
    except LabError as error:
        show_input_error(error)
        if stop:
            st.stop()
        return None


# ------------------------------------------------------------------ widgets from options


def option_title(option: Option) -> str:
    """Returns an option's widget label (models/options.py marks it with N_), in the session's language."""
    title = option.title
    return translator()(title) if title else title  # gettext("") would be the catalog's header


def option_help(option: Option) -> str | None:
    """Returns an option's help line in the session's language (None: it has none)."""
    return translator()(option.help) if option.help else None


def choice_names(labels: Mapping[str, str] | None = None) -> Callable[[Any], str]:
    """Returns the format_func of a choice widget: a choice's label from `labels` (the page's, already
    translated) or the choice itself (marked with N_ where it is declared), in the session's language."""
    _ = translator()

    def name(choice: Any) -> str:
        text = (labels or {}).get(choice, choice)
        return _(text) if isinstance(text, str) and text else str(text)

    return name


def _drop_bad_state(option: Option, key: str) -> None:
    # A value stored for a widget that is not drawn yet becomes its initial value, and
    # Streamlit raises on one outside the range: such a value goes, the default takes its place.
    if key in st.session_state:
        try:
            option.read(st.session_state[key])
        except InputError:
            del st.session_state[key]


def option_slider(option: Option, *, key: str, label: str | None = None, **kwargs: Any):
    """Returns st.slider over the option's range, step and default; the value it returns is
    read through the option again (a scripted client can send any value)."""
    _drop_bad_state(option, key)
    number = float if option.kind == "float" else int
    default = kwargs.pop("value", option.default if option.default is not None else option.low)
    value = bound(st.slider, label or option_title(option), number(option.low), number(option.high), number(default),
                  number(option.step or 1), key=key, help=kwargs.pop("help", option_help(option)), **kwargs)
    return checked(option.read, value)


def option_number(option: Option, *, key: str, label: str | None = None, **kwargs: Any):
    """Returns st.number_input over the option's range (whole numbers for int options), checked again."""
    _drop_bad_state(option, key)
    number = float if option.kind == "float" else int
    default = kwargs.pop("value", option.default if option.default is not None else option.low)
    value = bound(st.number_input, label or option_title(option), number(option.low), number(option.high),
                  number(default), number(option.step or 1), key=key, help=kwargs.pop("help", option_help(option)),
                  **kwargs)
    return checked(option.read, value)


def option_radio(option: Option, *, key: str, label: str | None = None, labels: Mapping[str, str] | None = None,
                 **kwargs: Any):
    """Returns st.radio over the option's choices, the default selected, checked again."""
    _drop_bad_state(option, key)
    index = option.choices.index(option.default) if option.default in option.choices else 0
    value = bound(st.radio, label or option_title(option), option.choices, index=index, key=key,
                  format_func=choice_names(labels), help=kwargs.pop("help", option_help(option)), **kwargs)
    return checked(option.read, value)


def index_in(value: Any, count: int) -> int:
    """Returns a widget's index value as an int in 0..count-1, refusing anything else with one line."""
    index = index_or_none(value, count)
    if index is None:
        show_input_error(InputError(translator()("pick a value from 0 to {last}").format(last=count - 1)))
        st.stop()
    return index


def declared(mechanism: Mechanism, values: Mapping[str, Any]) -> dict[str, Any]:
    """Returns the values the mechanism declares options for (pages sharing widgets between
    mechanisms, e.g. soft and hard, pass each only its own)."""
    names = {o.name for o in mechanism.options}
    return {k: v for k, v in values.items() if k in names}


# ------------------------------------------------------------------ figures and export


def _file_stem(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:60] or "attention"


def _figure(fig: go.Figure | Callable[[], go.Figure]) -> go.Figure:
    # A panel's own figure is only needed for an export: a page may hand a builder instead.
    return fig() if callable(fig) else fig


def _deferred_export(record: AttentionRecord, fig: go.Figure | Callable[[], go.Figure], fmt: str) -> bytes:
    return export_bytes(record, fmt, _figure(fig))


def _made_from(record: AttentionRecord | go.Figure, stem: str) -> str:
    """Returns a digest of what an image is made from: the record's weights and labels (for a whole
    figure's menu, which has no record: the figure's JSON), and the file name."""
    digest = hashlib.blake2b(digest_size=16)
    if isinstance(record, go.Figure):
        digest.update(repr(stem).encode())
        digest.update(pio.to_json(record, validate=False).encode())
        return digest.hexdigest()
    weights = np.ascontiguousarray(record.weights)
    digest.update(repr((stem, weights.shape, weights.dtype.str, record.query_labels, record.key_labels)).encode())
    digest.update(weights.data)
    return digest.hexdigest()


def _make_image(key: str, fmt: str, fig: go.Figure | Callable[[], go.Figure], record: AttentionRecord | go.Figure,
                stem: str) -> None:
    # on_click of "PNG image" etc.: renders once (with the exporter's timeouts) and keeps the
    # bytes of this one image in the session until the next image is made.
    made_from = _made_from(record, stem)
    try:
        st.session_state[MADE_IMAGE] = (key, fmt, figure_bytes(_figure(fig), fmt), None, made_from)
    except (ExportBusy, ExportUnavailable) as error:
        st.session_state[MADE_IMAGE] = (key, fmt, None, str(error).splitlines()[0], made_from)


def export_buttons(record: AttentionRecord, fig: go.Figure | Callable[[], go.Figure], *, key: str,
                   name: str | None = None, label: str | None = None) -> None:
    """Shows an Export menu (titled `label`, default "Export", already translated) for a figure and
    the record it was drawn from, in the session's language.

    PNG and the data formats (HTML, CSV, JSON, NPY) download in one click, their bytes made on
    click. SVG and PDF take two: "SVG (vector)" renders it (a busy or broken exporter answers with
    one "try again" line, never a hang), then "Save SVG" downloads it. CSV and JSON are not offered
    for records above TEXT_EXPORT_MAX_CELLS weights (NPY is).

    The menu's buttons exist only while it is open (st.popover's on_change="rerun" and .open):
    opening it reruns the page (or the fragment it sits in) once, and every other rerun sends
    one element instead of eight. `fig` may be a zero-argument builder, called on export only.
    """
    _export_menu(fig, record, key=key, stem=_file_stem(name or record.mechanism), label=label)


def _export_menu(fig: go.Figure | Callable[[], go.Figure], made_of: AttentionRecord | go.Figure, *, key: str,
                 stem: str, label: str | None) -> None:
    # export_buttons' menu. made_of: the record (the menu offers every format), or for a whole
    # figure's menu (show_panels' `whole`) the figure shown, which its pictures only are made of:
    # PNG, SVG, PDF and HTML, with `fig` the figure they draw.
    _ = translator()
    menu = st.popover(label or _("Export"), icon=":material/download:", width="content", key=f"{key}-menu",
                      on_change="rerun")
    if not menu.open:
        return
    record = made_of if isinstance(made_of, AttentionRecord) else None
    images_ok, hint = image_export_available()
    text_ok = record is not None and text_export_allowed(record)
    made = st.session_state.get(MADE_IMAGE)
    if made and (made[0] != key or made[4] != _made_from(made_of, stem)):
        # Made for another figure, or for this menu's figure before a control changed it: the
        # menu offers to make the image again rather than save the old one under the new name.
        # (The digest is taken only for a menu whose own image is kept: one at a time.)
        made = None

    def download(fmt: str) -> None:
        too_big = fmt in ("csv", "json") and not text_ok
        no_image = fmt == "png" and not images_ok
        too_many = _("{count} weights are too many for {format}; use NPY").format(
            count=f"{record.weights.size:,}", format=fmt.upper()) if too_big else None
        data = (functools.partial(_deferred_export, record, fig, fmt) if record is not None
                else functools.partial(_picture_bytes, fig, fmt))
        st.download_button(_(FORMAT_LABELS[fmt]), data=data,
                           file_name=f"{stem}.{fmt}", mime=MIME_TYPES[fmt], key=f"{key}-export-{fmt}",
                           on_click="ignore", disabled=too_big or no_image,
                           help=too_many if too_big else _(hint) if no_image else None, width="stretch")

    with menu:
        download("png")  # one click, like CSV
        for fmt in IMAGE_FORMATS:
            if made and made[:2] == (key, fmt) and made[2] is not None:
                st.download_button(_("Save {format}").format(format=fmt.upper()), data=made[2],
                                   file_name=f"{stem}.{fmt}", mime=MIME_TYPES[fmt], key=f"{key}-save-{fmt}",
                                   on_click="ignore", type="primary", width="stretch")
                continue
            st.button(_(FORMAT_LABELS[fmt]), key=f"{key}-make-{fmt}", on_click=_make_image,
                      args=(key, fmt, fig, made_of, stem), disabled=not images_ok,
                      help=_(hint) if not images_ok else None, width="stretch")
            if made and made[:2] == (key, fmt) and made[3]:
                st.error(escape_markdown(_(made[3])), icon=":material/hourglass:")
        for fmt in DATA_FORMATS[1:] if record is not None else ("html",):
            download(fmt)


def _picture_bytes(fig: go.Figure | Callable[[], go.Figure], fmt: str) -> bytes:
    return figure_bytes(_figure(fig), fmt)


def show_figure(fig: go.Figure, record: AttentionRecord, *, key: str, name: str | None = None,
                chart_key: str | None = None, fit_phone: bool = False, **chart_kwargs: Any) -> Any:
    """Shows a figure and, under it, the Export menu of the record it was drawn from and the Link
    box of the view (ui/links.py).

    fit_phone: on a phone the chart takes the screen's width instead of scrolling sideways at 600 px
    (ui/router.py's style), for a map whose columns are few and short, so that all of them show.
    Returns what st.plotly_chart returns (the selection state when on_select is given).
    """
    chart_key = chart_key or (f"{key}_{PHONE_FIT}_chart" if fit_phone else f"{key}_chart")
    return show_panels(fig, [(fig, record, key, name, None)], chart_key=chart_key, **chart_kwargs)


def show_panels(fig: go.Figure,
                panels: list[tuple[go.Figure | Callable[[], go.Figure], AttentionRecord, str, str | None, str]], *,
                chart_key: str, whole: tuple[str, str, str] | None = None, **chart_kwargs: Any) -> Any:
    """Shows one figure and, under it, one Export menu per panel, labelled, and the Link box. For a
    figure made of several panels (viz.plotly_json.side_by_side) each menu exports its panel's own
    record and, as an image, the panel's own figure: what a panel shows is what its menu exports.

    panels: (panel figure, record, export key, file name, menu label), left to right. A panel figure
    the page does not draw may be a zero-argument builder: it is built on export only.
    whole: (export key, file name, menu label) of one more menu, after them, that exports the whole
    figure as a picture (PNG, SVG, PDF, HTML: the panels side by side, as a class sees them on the
    page), WHOLE_PANEL_PX wide a panel; its numbers are in the panels' menus.
    """
    # theme=None: the look is in the figure itself (viz/chart_style.py), which spares the browser a
    # second full draw of every chart it mounts. No Autoscale button: maps show their first row on
    # top with a fixed range, which autoscaling would turn upside down ("Reset axes" restores it).
    fig = for_the_page(fig)
    shown = with_text_scaled(fig, LARGE_TEXT_SCALE) if st.session_state.get(LARGE_TEXT_KEY) else fig
    state = st.plotly_chart(shown, key=chart_key, theme=None, config=CHART_CONFIG, **chart_kwargs)
    with st.container(horizontal=True):
        for panel_fig, record, key, name, label in panels:
            export_buttons(record, panel_fig, key=key, name=name, label=label)
        if whole is not None:
            key, name, label = whole
            wide = functools.partial(with_width, fig, max(IMAGE_EXPORT_PX, WHOLE_PANEL_PX * len(panels)))
            _export_menu(wide, fig, key=key, stem=_file_stem(name), label=label)
        link_box()
    return state


def large_text_switch() -> None:
    """Shows the sidebar's "Large text" switch: every figure's text 1.4 times as large, for a projector
    (a fullscreen chart grows its plot, not its text). Exports keep the page's size."""
    _ = translator()
    st.toggle(_("Large text in figures (projector)"), key=LARGE_TEXT_KEY,
              help=_("Every figure's labels, titles and numbers 1.4 times as large, for a class at the back of "
                     "a room; figures get a little taller. Exports keep the usual size."))


def view_switch(views: Mapping[str, str], *, key: str) -> str:
    """Returns the id of the view a section shows, picked in a row of buttons above it
    (st.segmented_control, bound to the URL); the page runs only the chosen view's code.

    views: {id: name}, the first the default. The names (marked with N_) are shown in the session's
    language; the value and the URL hold the id, so a link opens the same view in either language.

    Not st.tabs: a tab bar is drawn again by the browser on every rerun of the fragment around it,
    which cost 9 ms of script and 14–17 ms of the round trip in a floor app, while a segmented
    control cost nothing measurable.
    """
    _ = translator()
    ids = list(views)
    return bound(st.segmented_control, _("View"), ids, default=ids[0], required=True, key=key,
                 label_visibility="collapsed", format_func=lambda view: _(views[view]))


def clicked_points(state: Any, *, curve: int | None = None) -> list[dict[str, Any]]:
    """Returns the clicked points of a plotly chart's selection state (optionally of one trace).

    state: what st.plotly_chart(on_select=...) stored, {"selection": {"points": [...]}} or None.
    """
    if not isinstance(state, Mapping):
        return []
    points = (state.get("selection") or {}).get("points") or []
    return [p for p in points if isinstance(p, Mapping) and (curve is None or p.get("curve_number") == curve)]

