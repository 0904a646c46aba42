"""Keeps every request on app.py's router, even on a freshly started server.

Streamlit decides once per process whether an app uses the legacy `pages/` folder: until
some session has run app.py (whose st.navigation switches the legacy mode off), a deep
link such as /playground runs pages/playground.py directly, with a sidebar listing every
file. Each page calls `start_page()` first: in legacy mode it switches that mode off
and reruns, so the request goes through app.py and its st.navigation like any other.
"""

import streamlit as st

from ui.i18n import translator
from ui.links import start_run
from ui.streamlit_private import leave_legacy_pages_mode
from viz.i18n_text import Gettext

# The app's one style block. A table wider than the screen (the Playground's seven score formulas on
# a phone) scrolls in its own box instead of widening the whole page.
#
# On a phone each chart keeps 600 px (its width is its frame's) and scrolls sideways in its element's box,
# which already scrolls: at 390 px, plots had been squeezed to a few pixels between their labels. A chart
# whose key holds PHONE_FIT (ui.widgets.show_figure(fit_phone=True): few, short column labels, like the
# seq2seq map's characters) fits the phone instead, so that all its columns show at once; one whose key
# holds PHONE_WIDE (four panels side by side, the Playground's stages) scrolls at 840 px, so that each panel
# keeps about 200 px. A chart that scrolls gets a right edge that fades out, the cue that more of it lies to
# the right; the fade slides out over the last stretch of the scroll (a scroll-driven animation; a browser
# without one keeps the fade), so that the colour bar's numbers at the far end read whole.
#
# On a touch screen (pointer: coarse) a swipe over a chart scrolls its box sideways and the page up and
# down, as over a picture. plotly.js takes every touch that starts on its plot for its drag mode and cancels
# the browser's scrolling (a swipe drew a zoom box: "Double-click to zoom back out"), so there its drag
# layer lets touches through; a mouse (pointer: fine) still drags to zoom. A phone gives up the hover label
# on a tap and drag-zooming (the browser's pinch remains), and so plotly's modebar, which a touch screen
# shows at all times over the chart's title (the Export menu under each chart does what its camera did). A tap never picked a
# cell of a chart that takes a click (on_select): plotly.js sends the selection Streamlit listens for
# (plotly_selected) on a mouse click, not on a tap. tests/e2e/test_phone_browser.py measures and swipes.
PHONE_FIT = "phonefit"
PHONE_WIDE = "phonewide"
_CHART_FRAME = "[data-testid='stFullScreenFrame']:has(>[data-testid='stPlotlyChart'])"
_CHART_BOX = "[data-testid='stElementContainer']:has(>[data-testid='stFullScreenFrame']>[data-testid='stPlotlyChart'])"
_FADE = 28  # px: the width of the fading right edge
PAGE_STYLE = ("<style>[data-testid='stMarkdownContainer'] table{display:block;max-width:100%;overflow-x:auto}"
              "[data-testid='stMarkdownContainer'] th:first-child{white-space:nowrap}"
              "@media (max-width:640px){"
              f"{_CHART_FRAME}{{min-width:600px}}"
              f"[class*='{PHONE_FIT}'] {_CHART_FRAME}{{min-width:0}}"
              f"[class*='{PHONE_WIDE}'] {_CHART_FRAME}{{min-width:840px}}"
              f"{_CHART_BOX}:not([class*='{PHONE_FIT}'])"
              f"{{mask-image:linear-gradient(to right,#000 calc(100% - {_FADE}px),rgba(0,0,0,.25));"
              "mask-repeat:no-repeat;mask-size:100% 100%;"
              "animation:chart-scroll-cue linear both;animation-timeline:scroll(self inline)}}"
              f"@keyframes chart-scroll-cue{{85%{{mask-size:100% 100%}}to{{mask-size:calc(100% + {_FADE}px) 100%}}}}"
              "@media (pointer:coarse){.js-plotly-plot .draglayer .drag{pointer-events:none!important}"
              ".js-plotly-plot .modebar-container{display:none}}"
              "</style>")


def start_page() -> Gettext:
    """Returns the session's translator (ui/i18n.py) once the run is on app.py's router: reruns the script
    through app.py if Streamlit is still in legacy pages/ mode, then notes a link's parameters (ui/links.py)."""
    if leave_legacy_pages_mode():
        st.rerun()
    start_run()  # the run that opens a link remembers its parameters, to report refused ones
    return translator()
