"""Keeps every request on app.py's router, even on a freshly started server.

Streamlit decides once per process whether an app uses the legacy `pages/` folder: until
some session has run app.py (whose st.navigation switches the legacy mode off), a deep
link such as /playground runs pages/playground.py directly, with a sidebar listing every
file. Each page calls `ensure_router()` first: in legacy mode it switches that mode off
and reruns, so the request goes through app.py and its st.navigation like any other.
"""

import streamlit as st

from ui.links import start_run
from ui.streamlit_private import leave_legacy_pages_mode

# The app's one style block. A table wider than the screen (the Playground's seven score formulas on
# a phone) scrolls in its own box instead of widening the whole page. On a phone each chart keeps
# 600 px (its width is its frame's) and scrolls sideways in its element's box, which already scrolls:
# at 390 px, plots had been squeezed to a few pixels between their labels. A chart whose key holds
# PHONE_FIT (ui.widgets.show_figure(fit_phone=True): few, short column labels, like the seq2seq map's
# characters) fits the phone instead, so that all its columns show at once. A chart that scrolls gets
# a right edge that fades out: the cue that more of it lies to the right (CSS alone; the box is the
# element container, which scrolls). A chart whose key holds PHONE_WIDE (four panels side by side,
# the Playground's stages) scrolls at 840 px, so that each panel keeps about 200 px.
PHONE_FIT = "phonefit"
PHONE_WIDE = "phonewide"
PAGE_STYLE = ("<style>[data-testid='stMarkdownContainer'] table{display:block;max-width:100%;overflow-x:auto}"
              "[data-testid='stMarkdownContainer'] th:first-child{white-space:nowrap}"
              "@media (max-width:640px){"
              "[data-testid='stFullScreenFrame']:has(>[data-testid='stPlotlyChart']){min-width:600px}"
              f"[class*='{PHONE_FIT}'] [data-testid='stFullScreenFrame']:has(>[data-testid='stPlotlyChart'])"
              "{min-width:0}"
              f"[class*='{PHONE_WIDE}'] [data-testid='stFullScreenFrame']:has(>[data-testid='stPlotlyChart'])"
              "{min-width:840px}"
              f"[data-testid='stElementContainer']:not([class*='{PHONE_FIT}'])"
              ":has(>[data-testid='stFullScreenFrame']>[data-testid='stPlotlyChart'])"
              "{mask-image:linear-gradient(to right,#000 calc(100% - 28px),rgba(0,0,0,.25))}}"
              "</style>")


def ensure_router() -> None:
    """Reruns the script through app.py if Streamlit is still in legacy pages/ mode; then notes a
    link's parameters (ui/links.py)."""
    if leave_legacy_pages_mode():
        st.rerun()
    start_run()  # the run that opens a link remembers its parameters, to report refused ones
