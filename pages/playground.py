"""Playground: one query scored against key/value pairs — score, normalise, weighted sum."""

import numpy as np
import pandas as pd
import streamlit as st

from models.playground.records import HAND_SET_PARAMS, MAX_SAMPLES, default_table, qkv_record, table_to_kv
from models.record import InputError
from models.registry import PLAYGROUND, mechanisms_on_page
from ui.router import ensure_router
from ui.widgets import export_buttons, show_input_error
from viz.figures import attention_heatmap, vectors_2d, weight_bars

ensure_router()

st.title("A Query over Key/Value pairs")
st.markdown(
    "Every attention mechanism does three things. **1. Score** the query against each key. "
    "**2. Normalise** the scores into weights α. **3. Sum** the values, weighted by α. "
    "Move the query, edit the keys and values, and watch each stage change."
)

mechanisms = mechanisms_on_page(PLAYGROUND.file)
controls, data = st.columns([1, 2], gap="large")
with controls:
    mechanism = st.selectbox("Score function", mechanisms, format_func=lambda m: m.name, key="mechanism")
    st.latex(mechanism.formula)
    st.caption(mechanism.paper)
    qx = st.slider("Query, dimension 1", -3.0, 3.0, 1.5, 0.1, key="query_x")
    qy = st.slider("Query, dimension 2", -3.0, 3.0, 0.5, 0.1, key="query_y")
    temperature = st.slider(
        "Temperature τ", 0.05, 10.0, 1.0, 0.05, key="temperature",
        help="Scores are divided by τ before the softmax: small τ sharpens α towards one key, large τ flattens it.",
    )
    mode = st.radio(
        "Normalisation",
        ["soft", "argmax", "sample"],
        format_func={"soft": "Soft (softmax)", "argmax": "Hard: argmax", "sample": "Hard: sampled"}.get,
        key="mode",
        horizontal=True,
    )
    samples, seed = 100, 0
    if mode == "sample":
        samples = st.slider("Samples N", 1, min(MAX_SAMPLES, 2000), 100, key="samples")
        seed = st.number_input("Seed", 0, 2**31 - 1, 0, key="seed")

with data:
    st.markdown("**Keys and values** (edit cells, add or delete rows)")
    table = st.data_editor(
        pd.DataFrame(default_table()), num_rows="dynamic", key="kv_table", width="stretch", hide_index=True
    )
    if mechanism.id in ("qkv-general", "qkv-concat", "qkv-additive", "qkv-location"):
        with st.expander("Parameters of this score (hand-set for illustration, not learned)"):
            names = {
                "qkv-general": ["w_general"],
                "qkv-concat": ["w_concat", "v_concat"],
                "qkv-additive": ["w_additive", "u_additive", "v_additive"],
                "qkv-location": ["w_location"],
            }[mechanism.id]
            for name in names:
                st.markdown(f"`{name}`")
                st.dataframe(np.atleast_2d(getattr(HAND_SET_PARAMS, name)), width="content")

try:
    labels, keys, values = table_to_kv(table.to_dict("records"))
    record = qkv_record(
        {
            "mechanism": mechanism.id,
            "query": np.array([qx, qy]),
            "keys": keys,
            "values": values,
            "labels": labels,
            "temperature": temperature,
            "mode": mode,
            "seed": seed,
            "samples": samples,
        }
    )
except InputError as error:
    show_input_error(error)
    st.stop()

extras = record.extras
stage1, stage2, stage3 = st.columns(3, gap="medium")
with stage1:
    st.subheader("1 · Scores")
    score_fig = weight_bars(extras["scores"], record.key_labels, title="score(q, kⱼ)", value_name="score")
    st.plotly_chart(score_fig, key="scores_chart")
    export_buttons(record, score_fig, key="scores", name=f"{record.mechanism}-scores")
with stage2:
    st.subheader("2 · Weights α")
    if mode == "sample":
        weight_fig = weight_bars(
            extras["soft_weights"], record.key_labels, title=f"α vs. frequency of {samples} samples",
            value_name="α (soft)", compare=record.weights[0], compare_name="sample frequency",
        )
    else:
        weight_fig = weight_bars(record.weights[0], record.key_labels, title="α", value_name="α")
    st.plotly_chart(weight_fig, key="weights_bars")
    heat_fig = attention_heatmap(record, title="α as a heatmap", zmax=1.0)
    heat_fig.update_layout(height=220)
    st.plotly_chart(heat_fig, key="weights_heatmap")
    export_buttons(record, heat_fig, key="weights", name=f"{record.mechanism}-weights")
with stage3:
    st.subheader("3 · Weighted sum")
    context = extras["context"]
    context_fig = vectors_2d(
        extras["values"], record.key_labels, weights=record.weights[0], highlight=context,
        highlight_name="c = Σ αⱼ vⱼ", title="Values (size = weight) and c", x_title="value dim 1", y_title="value dim 2",
    )
    st.plotly_chart(context_fig, key="context_chart")
    st.markdown(f"c = ({context[0]:.3f}, {context[1]:.3f})")
    export_buttons(record, context_fig, key="context", name=f"{record.mechanism}-context")
