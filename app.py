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
from ui.router import PAGE_STYLE

enable_compilation_cache()  # a restarted server loads what an earlier one compiled
freeze_long_lived("imports")  # Streamlit's gc after every run then skips them (ui/heap.py)

# A local file: a ":material/…:" page icon makes the browser fetch the favicon from fonts.gstatic.com.
st.set_page_config(page_title="Attention Lab", page_icon=str(Path(__file__).parent / "ui" / "icon.png"), layout="wide")

navigation = st.navigation(
    [
        st.Page(page.file, title=page.title, icon=page.icon, default=True)
        if page.default
        else st.Page(page.file, title=page.title, icon=page.icon, url_path=page.url_path)
        for page in PAGES
    ]
)

with st.sidebar:
    st.caption("Attention Lab runs on this machine: no model hubs, no CDNs, no telemetry.")
    st.html(PAGE_STYLE)  # a style alone takes no room in the sidebar

navigation.run()
freeze_long_lived(navigation.url_path)  # once per page: the models its first run loaded
