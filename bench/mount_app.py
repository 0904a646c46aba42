"""A view switch that mounts one kind of element: what bench/mount_cost.py times.

MOUNT_ELEMENT names the element the second view ("B") draws; the first view ("A") draws one caption.
Above the switch, one heatmap as the app shows it stays drawn, so each switch reruns a page with a
figure on it, as the app's pages do. Run with `streamlit run bench/mount_app.py`.
"""

import os
import sys
from pathlib import Path

import numpy as np
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.record import AttentionRecord  # noqa: E402
from ui.links import link_box  # noqa: E402
from ui.widgets import export_buttons, show_figure, show_panels, view_switch  # noqa: E402
from viz.figures import heatmap  # noqa: E402
from viz.plotly_json import side_by_side  # noqa: E402

SIZE = 24  # tokens: the self-attention page's default text
ELEMENT = os.environ.get("MOUNT_ELEMENT", "nothing")
TEXT = ("**Rollout** follows attention through all layers: each layer's heads are fused, the residual connection "
        "is counted as half of the mixing, and the layers are multiplied from the first up.")

rng = np.random.default_rng(0)
maps = rng.random((3, SIZE, SIZE)).astype(np.float32)
maps /= maps.sum(-1, keepdims=True)
labels = [f"token {i}" for i in range(SIZE)]


def record(i: int) -> AttentionRecord:
    return AttentionRecord(mechanism="mount-bench", weights=maps[i], axes=("query", "key"),
                           query_labels=labels, key_labels=labels, meta={})


def figure(i: int):
    return heatmap(maps[i], labels, labels, title=f"map {i}")


st.title("Mount cost")
show_figure(figure(0), record(0), key="base")
if view_switch(["A", "B"], key="mount_view") == "A":
    st.caption("View A")
elif ELEMENT == "caption":
    st.caption("View B")
elif ELEMENT == "markdown":
    st.markdown(TEXT)
elif ELEMENT == "radio":
    st.radio("Method", ["Rollout", "Flow"], horizontal=True, key="mount_radio")
elif ELEMENT == "selectbox":
    st.selectbox("Statistic", ["entropy", "share to [CLS]", "previous token"], key="mount_select")
elif ELEMENT == "toggle":
    st.toggle("Leave [CLS] and [SEP] out", key="mount_toggle")
elif ELEMENT == "export":
    export_buttons(record(1), figure(1), key="mount_export")
elif ELEMENT == "link":
    link_box()
elif ELEMENT == "chart":
    st.plotly_chart(figure(1), key="mount_chart")
elif ELEMENT == "figure":  # a chart with its Export menu and Link box, as every page shows one
    show_figure(figure(1), record(1), key="mount_one")
elif ELEMENT == "two_figures":
    show_figure(figure(1), record(1), key="mount_one")
    show_figure(figure(2), record(2), key="mount_two")
elif ELEMENT == "two_panels":  # the same two maps as one figure of two panels
    panels = [(figure(i), record(i), f"mount_{i}", None, f"Export {i}") for i in (1, 2)]
    show_panels(side_by_side([p[0] for p in panels], gap=0.12), panels, chart_key="mount_panels")
else:
    st.empty()
