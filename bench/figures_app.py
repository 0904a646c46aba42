"""bench/floor_app.py with N heatmaps that one slider changes: N figures, or one figure of N subplots,
optionally with a token label at every row and column.

    FIGURES=4 LAYOUT=subplots streamlit run bench/figures_app.py
    TICKS=64 OVERFLOW=allow streamlit run bench/figures_app.py
    MENUS=app streamlit run bench/figures_app.py

TICKS labels every one of the 64 rows and columns (plotly tickmode "array", as the token pages
do); OVERFLOW sets the axes' ticklabeloverflow (unset: plotly.js's default, "hide past div").
TOKENS=24 draws the app's own heatmap (viz.figures.heatmap: token labels on both axes, a titled
colorbar, a hover template) of 24 × 24 cells instead of the floor's. PAD=10 puts ten unchanged
sections (a subheader, prose, a small table and a small figure each) above the slider, as on a
long page: they are sent again on every rerun but do not change; PAD_PARTS=text,table,figure picks
what each section holds. FRAGMENT=1 makes the slider and what it changes one st.fragment.
MENUS puts the app's Export and Link menus (ui/widgets.py) under the figure ("app"), or a Link menu
and an Export menu of one format select and one button ("lean").

bench/figure_cost.py starts it once per variant. FIGURES=1 LAYOUT=figures is the floor itself: the
same 64 × 64 heatmap, the same slider, the same layout. Every heatmap depends on the slider, so
every step redraws all of them, as a control that changes several panels of a page would.
"""

import os
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

SIZE = 64
FIGURES = max(1, min(int(os.environ.get("FIGURES", "1")), 8))
LAYOUT = os.environ.get("LAYOUT", "figures")  # "figures" (one st.plotly_chart each) or "subplots"
TICKS = os.environ.get("TICKS") == "64"
OVERFLOW = os.environ.get("OVERFLOW")  # e.g. "allow"
MENUS = os.environ.get(
    "MENUS"
)  # "app": the app's Export and Link menus under the figure; "lean": one select + one button
TOKENS = int(os.environ.get("TOKENS") or 0)  # > 0: the app's own heatmap (viz.figures.heatmap) of TOKENS words a side
PAD = int(os.environ.get("PAD") or 0)  # > 0: that many unchanged sections (text, a table, a figure) above the slider
PAD_PARTS = set((os.environ.get("PAD_PARTS") or "text,table,figure").split(","))  # what each section holds
FRAGMENT = os.environ.get("FRAGMENT") == "1"  # the slider and what it changes are one st.fragment
WORDS = ("dog", "sun", "cat", "k", "m", "p", "tree", "house")

st.title("Floor")
if TOKENS or PAD:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
for i in range(PAD):  # what a long page holds besides the control's own figure; none of it changes
    st.subheader(f"Section {i + 1}")
    if "text" in PAD_PARTS:
        st.markdown(
            "Unchanged prose of a long page: **bold**, `code`, and a sentence long enough to wrap "
            "once or twice in the page's width, as the app's explanations do. " * 2
        )
    if "table" in PAD_PARTS:
        st.dataframe({"token": list(WORDS), "weight": [round(0.1 * j, 2) for j in range(len(WORDS))]}, height=120)
    if "figure" in PAD_PARTS:
        still = go.Figure(go.Heatmap(z=np.eye(16), colorscale="Viridis"))
        still.update_layout(height=260, margin=dict(l=40, r=20, t=20, b=40))
        st.plotly_chart(still, key=f"pad_chart_{i}")


def body() -> None:
    phase = st.slider("Phase", 0, 100, 0, key="floor_phase")
    rows, cols = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    panels = [np.sin(6.0 * rows + phase / 10.0 + i) * np.cos(4.0 * cols - phase / 7.0) for i in range(FIGURES)]
    height = 480 if FIGURES == 1 else 300
    margin = dict(l=40, r=20, t=40, b=40)
    if LAYOUT == "subplots" and FIGURES > 1:
        figure = make_subplots(rows=1, cols=FIGURES, horizontal_spacing=0.04)
        for i, weights in enumerate(panels):
            figure.add_trace(
                go.Heatmap(z=weights, zmin=-1.0, zmax=1.0, colorscale="Viridis", showscale=i == 0), row=1, col=i + 1
            )
        figure.update_layout(title=f"phase {phase}", height=height, margin=margin)
        st.plotly_chart(figure, key="floor_chart")
    else:
        for i, weights in enumerate(panels):
            if TOKENS:
                from viz.figures import heatmap
                from viz.plotly_json import allow_tick_overflow

                words = [WORDS[j % len(WORDS)] for j in range(TOKENS)]
                small = np.abs(weights[:TOKENS, :TOKENS]).astype(np.float32)
                figure = allow_tick_overflow(
                    heatmap(small / small.sum(axis=1, keepdims=True), words, words, title=f"phase {phase}")
                )
                st.plotly_chart(figure, key="floor_chart" if i == 0 else f"floor_chart_{i}")
                continue
            figure = go.Figure(go.Heatmap(z=weights, zmin=-1.0, zmax=1.0, colorscale="Viridis"))
            figure.update_layout(title=f"phase {phase}", height=height, margin=margin)
            if TICKS:
                labels = [WORDS[j % len(WORDS)] for j in range(SIZE)]
                for axis in (figure.layout.xaxis, figure.layout.yaxis):
                    axis.update(tickmode="array", tickvals=list(range(SIZE)), ticktext=labels)
                figure.layout.xaxis.tickangle = -90
            if OVERFLOW:
                figure.update_xaxes(ticklabeloverflow=OVERFLOW)
                figure.update_yaxes(ticklabeloverflow=OVERFLOW)
            st.plotly_chart(figure, key="floor_chart" if i == 0 else f"floor_chart_{i}")

    if MENUS:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from models.record import AttentionRecord
        from ui.links import link_box
        from ui.widgets import DATA_FORMATS, FORMAT_LABELS, IMAGE_FORMATS, _deferred_export, export_buttons

        record = AttentionRecord(
            mechanism="floor",
            weights=panels[0].astype(np.float32),
            axes=("query", "key"),
            query_labels=tuple(map(str, range(SIZE))),
            key_labels=tuple(map(str, range(SIZE))),
        )
        with st.container(horizontal=True):
            if MENUS == "app":
                export_buttons(record, figure, key="floor")
            else:
                with st.popover("Export", icon=":material/download:", width="content"):
                    fmt = st.selectbox(
                        "Format", IMAGE_FORMATS + DATA_FORMATS, format_func=FORMAT_LABELS.get, key="floor_fmt"
                    )
                    if fmt in DATA_FORMATS:
                        st.download_button(
                            "Download",
                            data=lambda: _deferred_export(record, figure, fmt),
                            file_name=f"floor.{fmt}",
                            key="floor_dl",
                            on_click="ignore",
                        )
                    else:
                        st.button(f"Make {fmt.upper()}", key="floor_make")
            link_box()


(st.fragment(body) if FRAGMENT else body)()
