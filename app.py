"""Attention Lab: the router. Every file in pages/ is registered here, through the registry."""

from pathlib import Path

# Imported before any session builds a figure: plotly's validators read sys.modules["pandas"]
# without importing it, and while Streamlit imported it lazily in one session's thread (0.5 s)
# another session's figure met "partially initialized module 'pandas'" (seen on a fresh server
# under quick reloads). An import statement waits for another thread's import to finish.
import pandas  # noqa: F401
import streamlit as st

from models.compile_cache import enable_compilation_cache
from models.registry import PAGES
from ui.heap import freeze_long_lived
from ui.i18n import choose_language, keep_language_in_url, language_switch, translator
from ui.link_box import one_history_entry_per_page
from ui.router import PAGE_STYLE
from ui.widgets import large_text_switch

enable_compilation_cache()  # a restarted server loads what an earlier one compiled
freeze_long_lived("imports")  # Streamlit's gc after every run then skips them (ui/heap.py)

# A local file: a ":material/…:" page icon makes the browser fetch the favicon from fonts.gstatic.com.
st.set_page_config(page_title="Attention Lab", page_icon=str(Path(__file__).parent / "ui" / "icon.png"), layout="wide")

choose_language()  # the link's ?lang=, the session's choice or the browser's language (ui/i18n.py)
_ = translator()
navigation = st.navigation(
    [
        st.Page(page.file, title=_(page.title), icon=page.icon, default=True)
        if page.default
        else st.Page(page.file, title=_(page.title), icon=page.icon, url_path=page.url_path)
        for page in PAGES
    ],
    # Every page listed: collapsed, Streamlit adds a "View N more" button that no catalog translates.
    expanded=True,
)

with st.sidebar:
    language_switch()
    large_text_switch()
    st.caption(_("Attention Lab runs on this machine: no model hubs, no CDNs, no telemetry."))
    st.html(PAGE_STYLE)  # a style alone takes no room in the sidebar
    one_history_entry_per_page()

try:
    navigation.run()
finally:
    # After the page, which saw the URL as the browser sent it (ui/links.py tells a Back to a bare
    # address from a link by its parameters); a page switch empties the URL's parameters.
    keep_language_in_url()
freeze_long_lived(navigation.url_path)  # once per page: the models its first run loaded
