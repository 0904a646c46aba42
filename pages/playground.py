"""Playground: one query scored against key/value pairs — score, normalise, weighted sum."""

import numpy as np
import pandas as pd
import streamlit as st

from models.playground.records import (
    HAND_SET_PARAMS,
    MAX_KEYS,
    PARAMETERS_OF_SCORE,
    context_record,
    default_table,
    score_record,
    table_to_kv,
)
from models.registry import PLAYGROUND, get_mechanism, mechanisms_on_page
from ui.links import bound, link_rows, linked_rows
from ui.router import ensure_router
from ui.widgets import checked, editor_key, option_number, option_radio, option_slider, show_panels, warm_in_background
from viz.figures import attention_heatmap, bars_over_heatmap, vectors_2d, weight_bars
from viz.formulas import formula_table, matrix_latex
from viz.plotly_json import side_by_side

ensure_router()

TABLE_COLUMNS = ("label", "k1", "k2", "v1", "v2")

st.title("A Query over Key/Value pairs")
st.markdown(
    "Every attention mechanism does three things. **1. Score** the query against each key. "
    "**2. Normalise** the scores into weights α. **3. Sum** the values, weighted by α. "
    "Move the query, edit the keys and values, and watch each stage change."
)

mechanisms = mechanisms_on_page(PLAYGROUND.file)
warm_in_background(PLAYGROUND.file)  # the score functions not shown yet, so that switching to one does not wait

# Every score's formula, and the hand-set parameters of those that have any, drawn once here, outside
# the fragment below: picking a score or moving a slider then typesets no LaTeX (docs/PERFORMANCE.md, "The page").
SCORE_PREFIX = r"\operatorname{score}(s, h) = "
short = {m.variant: m.name.removesuffix(" score").split(" (")[0] for m in mechanisms}  # "General (bilinear) score" → "General"
st.markdown(formula_table([(short[m.variant], m.formula) for m in mechanisms], row_label="score(s, h) =", prefix=SCORE_PREFIX))
with st.expander(f"Parameters of the {', '.join(short[v] for v in PARAMETERS_OF_SCORE)} scores "
                 "(hand-set for illustration, not learned)"):
    for variant, names in PARAMETERS_OF_SCORE.items():
        st.markdown(f"**{next(m.name for m in mechanisms if m.variant == variant)}**")
        st.latex(r",\qquad ".join(matrix_latex(name, getattr(HAND_SET_PARAMS, name)) for name in names))


# The controls and the three stages are a fragment (st.fragment) inside table_and_stages below: a
# control reruns it alone, not the key/value editor above it, nor the router, the sidebar and the
# text (docs/PERFORMANCE.md, "The page").
@st.fragment
def playground(key_values: tuple | None) -> None:
    score_col, query_col, norm_col = st.columns([4, 3, 3], gap="large")
    with score_col:
        names = {m.id: m.name for m in mechanisms}
        mechanism = get_mechanism(bound(st.radio, "Score function", list(names), format_func=names.get, key="mechanism"))
        st.caption(f"{mechanism.summary} From {mechanism.paper}.")
    with query_col:
        qx = bound(st.slider, "Query, dimension 1", -3.0, 3.0, 1.5, 0.1, key="query_x")
        qy = bound(st.slider, "Query, dimension 2", -3.0, 3.0, 0.5, 0.1, key="query_y")
    with norm_col:
        temperature = option_slider(
            mechanism.option("temperature"), key="temperature",
            help="Scores are divided by τ before the softmax: small τ sharpens α towards one key, large τ flattens it.",
        )
        mode = option_radio(
            mechanism.option("mode"), key="mode", horizontal=True,
            labels={"soft": "Soft (softmax)", "argmax": "Hard: argmax", "sample": "Hard: sampled"},
        )
        # Drawn whatever the mode, greyed out unless it samples: a mode change then changes two
        # widgets' state rather than mounting them, and the stages below do not move.
        sampling = mode == "sample"
        samples = option_slider(mechanism.option("samples"), key="samples", disabled=not sampling)
        seed = option_number(mechanism.option("seed"), key="seed", disabled=not sampling)
        if not sampling:  # the record keeps the defaults, as it did while they were not drawn
            samples, seed = mechanism.option("samples").default, mechanism.option("seed").default

    if key_values is None:
        return
    labels, keys, values = key_values
    record = checked(mechanism.build, {
        "query": np.array([qx, qy]), "keys": keys, "values": values, "labels": labels,
        "temperature": temperature, "mode": mode, "seed": seed, "samples": samples,
    })

    extras = record.extras
    # The three stages are three panels of one figure: a query, τ or score change redraws one figure,
    # not three. Each panel keeps its own Export menu, which exports that stage's record and figure.
    scores = score_record(record)
    score_fig = weight_bars(scores.weights[0], scores.key_labels, title="1 · Scores: score(q, kⱼ)", value_name="score")
    if mode == "sample":
        weight_fig = weight_bars(
            extras["soft_weights"], record.key_labels, title=f"2 · Weights: α vs. frequency of {samples} samples",
            value_name="α (soft)", compare=record.weights[0], compare_name="sample frequency",
        )
    else:
        weight_fig = weight_bars(record.weights[0], record.key_labels, title="2 · Weights α", value_name="α")
    # The bars and, under them, the heatmap row every other page draws.
    heat_fig = attention_heatmap(record, title="", zmax=1.0, height=220)
    weights_panel = bars_over_heatmap(weight_fig, heat_fig)
    points = context_record(record)
    context_fig = vectors_2d(
        points.weights[:-1, :2], points.query_labels[:-1], weights=points.weights[:-1, 2], highlight=points.weights[-1, :2],
        highlight_name=points.query_labels[-1], title="3 · Sum: values (size = α) and c",
        x_title="value dim 1", y_title="value dim 2",
    )
    panels = [
        (score_fig, scores, "scores", f"{record.mechanism}-scores", "Export scores"),
        (weights_panel, record, "weights", f"{record.mechanism}-weights", "Export α"),
        (context_fig, points, "context", f"{record.mechanism}-context", "Export sum"),
    ]
    show_panels(side_by_side([p[0] for p in panels], gap=0.07, height=480), panels, chart_key="weights_chart")
    st.caption("Under the α bars: the same α as a one-row heatmap, as the other pages draw attention. "
               f"The weighted sum c = ({points.weights[-1, 0]:.3f}, {points.weights[-1, 1]:.3f}).")


# The key/value editor and, under it, the controls and stages are one fragment: an edit reruns the
# editor and the stages, not the router, the sidebar, the formulas and their LaTeX; the inner fragment
# keeps the editor out of a control's rerun.
@st.fragment
def table_and_stages() -> None:
    table_col, about_col = st.columns([2, 1], gap="large", vertical_alignment="center")
    with table_col:
        st.markdown("**Keys and values** (edit cells, add or delete rows)")
        start_rows = linked_rows("kv", default_table(), TABLE_COLUMNS, MAX_KEYS)
        table = st.data_editor(
            pd.DataFrame(start_rows, columns=TABLE_COLUMNS), num_rows="dynamic", width="stretch",
            key=editor_key("kv_table", len(start_rows), TABLE_COLUMNS, 4 * MAX_KEYS),
            hide_index=True,
        )
    with about_col:
        st.caption(f"Each row is one key k = (k1, k2) and its value v = (v1, v2), up to {MAX_KEYS} rows. "
                   "The query q is set by the sliders below; the score compares q with every key, and α "
                   "weights the values.")
    rows = table.to_dict("records")
    link_rows("kv", rows, default_table())
    # A table that cannot be read is said in one line, and the controls below stay as they were.
    playground(checked(table_to_kv, rows, stop=False))


table_and_stages()
