"""Attention Lab: the router. Every file in pages/ is registered here, through the registry."""

import streamlit as st

from models.compile_cache import enable_compilation_cache
from models.registry import PAGES

enable_compilation_cache()  # a restarted server loads what an earlier one compiled

st.set_page_config(page_title="Attention Lab", page_icon=":material/grid_on:", layout="wide")

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

navigation.run()
