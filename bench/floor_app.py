"""The floor of a Streamlit round trip: one slider and one 64 × 64 plotly heatmap, nothing else.

bench/ui_latency.py and bench/load.py start it beside the app (`streamlit run bench/floor_app.py`)
and measure it exactly like the app's pages, so their tables can say how many floors a page costs.
The heatmap depends on the slider, so every step redraws all 4,096 cells, as a page's figure would.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

SIZE = 64

st.title("Floor")
phase = st.slider("Phase", 0, 100, 0, key="floor_phase")
rows, cols = np.mgrid[0:SIZE, 0:SIZE] / SIZE
weights = np.sin(6.0 * rows + phase / 10.0) * np.cos(4.0 * cols - phase / 7.0)  # [64, 64]
figure = go.Figure(go.Heatmap(z=weights, zmin=-1.0, zmax=1.0, colorscale="Viridis"))
figure.update_layout(title=f"phase {phase}", height=480, margin=dict(l=40, r=20, t=40, b=40))
st.plotly_chart(figure, key="floor_chart")
