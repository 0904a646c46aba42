"""The floor of a Streamlit round trip: one slider and one 64 × 64 plotly heatmap, nothing else.

bench/ui_latency.py and bench/control_pairs.py start it beside the app (`streamlit run bench/floor_app.py`;
bench/load_protocol.py with `--app bench/floor_app.py`)
and measure it exactly like the app's pages, so their tables can say how many floors a page costs.
The heatmap depends on the slider, so every step redraws all 4,096 cells, as a page's figure would.

FLOOR_WIDGET=select (or radio, pills, toggle, number) puts that kind of widget in the slider's place, with
the same heatmap: the floor of each kind of control. A select box, for one, opens and closes a
menu around its change, which a slider's key press does not.
"""

import os

import numpy as np
import plotly.graph_objects as go
import streamlit as st

SIZE = 64
WIDGET = os.environ.get("FLOOR_WIDGET", "slider")

st.title("Floor")


def floor() -> None:
    if WIDGET == "select":
        phase = st.selectbox("Phase", list(range(101)), key="floor_phase")
    elif WIDGET == "radio":
        phase = st.radio("Phase", [0, 20, 40, 60, 80, 100], horizontal=True, key="floor_phase")
    elif WIDGET == "pills":
        phase = st.pills("Phase", [0, 20, 40, 60, 80, 100], default=0, required=True, key="floor_phase")
    elif WIDGET == "toggle":
        phase = 60 if st.checkbox("Phase 60", key="floor_phase") else 0
    elif WIDGET == "number":
        phase = st.number_input("Phase", 0, 100, 0, key="floor_phase")
    else:
        phase = st.slider("Phase", 0, 100, 0, key="floor_phase")
    rows, cols = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    weights = np.sin(6.0 * rows + phase / 10.0) * np.cos(4.0 * cols - phase / 7.0)  # [64, 64]
    figure = go.Figure(go.Heatmap(z=weights, zmin=-1.0, zmax=1.0, colorscale="Viridis"))
    figure.update_layout(title=f"phase {phase}", height=480, margin=dict(l=40, r=20, t=40, b=40))
    st.plotly_chart(figure, key="floor_chart")


floor()
