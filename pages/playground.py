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
from models.variants.records import stacked_rows
from ui.legend import PLAYGROUND_LEGEND, symbol_legend
from ui.link_table import link_rows, linked_rows
from ui.links import bound
from ui.router import PHONE_WIDE, start_page
from ui.story import page_header
from ui.widgets import (
    checked,
    editor_key,
    option_number,
    option_radio,
    option_slider,
    show_figure,
    show_panels,
    warm_in_background,
)
from viz.figures import record_figure
from viz.formulas import formula_table, matrix_latex, query_key_notation
from viz.i18n_text import N_
from viz.query_keys import query_key_record, stages_figure

_ = start_page()

TABLE_COLUMNS = ("label", "k1", "k2", "v1", "v2")

page_header(PLAYGROUND, _(
    "Every attention mechanism does three things. **1. Score** the query against each key. "
    "**2. Normalise** the scores into weights α. **3. Sum** the values, weighted by α. "
    "Move the query, edit the keys and values, and watch each stage change."
), title=_("A Query over Key/Value pairs"))

mechanisms = [m for m in mechanisms_on_page(PLAYGROUND.file) if m.family == "playground"]  # the score functions
variants = [m for m in mechanisms_on_page(PLAYGROUND.file) if m.family == "variants"]  # models/registry_variants.py
warm_in_background(PLAYGROUND.file)  # the score functions not shown yet, so that switching to one does not wait

NOTATION = N_("The papers write the same things differently: Bahdanau's query is s_{i−1} and his keys h_j; Luong's "
              "query is h_t and his keys h̄_s. Here, as on Home: q for the query, k_j for the keys, v_j for the values.")
# τ each score opens with. The additive score's tanh saturates on keys this long, so its scores lie within
# about ±1 of each other: at τ = 1 every α stays near 1/5 whatever the query; τ = 0.3 shows the differences.
START_TEMPERATURE = {"qkv-additive": 0.3}

# Every score's formula, and the hand-set parameters of those that have any, drawn once here, outside
# the fragment below: picking a score or moving a slider then typesets no LaTeX (docs/PERFORMANCE.md, "The page").
SCORE_PREFIX = r"\operatorname{score}(q, k) = "
SHORT_NAMES = {"dot": N_("Dot product"), "scaled-dot": N_("Scaled dot product"), "general": N_("General"),
               "concat": N_("Concat"), "additive": N_("Additive"), "location": N_("Location"), "cosine": N_("Cosine")}
short = {m.variant: _(SHORT_NAMES.get(m.variant, m.name)) for m in mechanisms}
st.markdown(formula_table([(short[m.variant], query_key_notation(m.formula)) for m in mechanisms],
                          row_label="score(q, k) =", prefix=SCORE_PREFIX))
symbol_legend(PLAYGROUND_LEGEND, note=_(NOTATION))
with st.expander(_("Parameters of the {scores} scores (hand-set for illustration, not learned)").format(
        scores=", ".join(short[v] for v in PARAMETERS_OF_SCORE))):
    for variant, names in PARAMETERS_OF_SCORE.items():
        st.markdown(f"**{_(next(m.name for m in mechanisms if m.variant == variant))}**")
        st.latex(r",\qquad ".join(matrix_latex(name, getattr(HAND_SET_PARAMS, name)) for name in names))


# The controls and the three stages are a fragment (st.fragment) inside table_and_stages below: a
# control reruns it alone, not the key/value editor above it, nor the router, the sidebar and the
# text (docs/PERFORMANCE.md, "The page").
@st.fragment
def playground(key_values: tuple | None) -> None:
    score_col, query_col, norm_col = st.columns([4, 3, 3], gap="large")
    with score_col:
        names = {m.id: _(m.name) for m in mechanisms}
        mechanism = get_mechanism(bound(st.radio, _("Score function"), list(names), format_func=names.get,
                                        key="mechanism"))
        st.caption(_("{summary} From {paper}.").format(summary=_(mechanism.summary), paper=mechanism.citation(_)))
    with query_col:
        qx = bound(st.slider, _("Query q, dimension 1"), -3.0, 3.0, 1.5, 0.1, key="query_x")
        qy = bound(st.slider, _("Query q, dimension 2"), -3.0, 3.0, 0.5, 0.1, key="query_y")
    with norm_col:
        start = START_TEMPERATURE.get(mechanism.id)
        temperature = option_slider(
            mechanism.option("temperature"), key="temperature" if start is None else f"temperature_{mechanism.variant}",
            value=start if start is not None else mechanism.option("temperature").default,
            help=_("Scores are divided by τ before the softmax: small τ sharpens α towards one key, large τ flattens it."),
        )
        if start is not None:
            st.caption(_("This score's values lie close together (its tanh saturates), so it starts at τ = {tau}.")
                       .format(tau=f"{start:g}"))
        mode = option_radio(
            mechanism.option("mode"), key="mode", horizontal=True,
            labels={"soft": _("Soft (softmax)"), "argmax": _("Hard: argmax"), "sample": _("Hard: sampled")},
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
    query = np.array([qx, qy])
    record = checked(mechanism.build, {
        "query": query, "keys": keys, "values": values, "labels": labels,
        "temperature": temperature, "mode": mode, "seed": seed, "samples": samples,
    })

    # The three stages and the query–key plane are panels of one figure: a query, τ or score change redraws
    # one figure. Each panel keeps its own Export menu, which exports that panel's record and figure; one
    # more exports the whole figure as a picture.
    scores, points = score_record(record), context_record(record)
    figure, (score_fig, weights_panel, context_fig, plane) = stages_figure(record, scores, points, query, keys,
                                                                          gettext=_)
    panels = [
        (score_fig, scores, "scores", f"{record.mechanism}-scores", _("Export scores")),
        (weights_panel, record, "weights", f"{record.mechanism}-weights", _("Export α")),
        (context_fig, points, "context", f"{record.mechanism}-context", _("Export sum")),
        (plane, query_key_record(record), "plane", f"{record.mechanism}-query-keys", _("Export q and k")),
    ]
    show_panels(figure, panels, chart_key=f"weights_{PHONE_WIDE}_chart",
                whole=("stages", f"{record.mechanism}-stages", _("Export the whole figure")))
    frequency = _("the sample frequencies") if mode == "sample" else _("the same α")
    st.caption(_("Under the α bars: {what} as a one-row heatmap, as the other pages draw attention. In the sum, "
                 "each value v_j is a dot sized by its α_j; the weighted sum c = ({c1}, {c2}).").format(
        what=frequency, c1=f"{points.weights[-1, 0]:.3f}", c2=f"{points.weights[-1, 1]:.3f}"))
    after_2017(query, keys, values, labels, temperature)


def after_2017(query, keys, values, labels, temperature) -> None:
    """The same q, k and v through one variant of attention after 2017: its formula, paper and weights."""
    st.subheader(_("The same q, k and v after 2017"))
    names = {m.id: _(m.name) for m in variants}
    variant = get_mechanism(bound(st.selectbox, _("Variant"), list(names), format_func=names.get, key="variant"))
    st.latex(variant.formula)
    st.caption(_("{summary} From {paper}.").format(summary=_(variant.summary), paper=variant.citation(_)))
    record = checked(variant.build, {"query": query, "keys": keys, "values": values, "labels": labels,
                                     "temperature": temperature}, stop=False)
    if record is not None:
        rows = stacked_rows(record)  # every head or layer as one row of one map
        show_figure(record_figure(rows, gettext=_), rows, key="variant_weights")


# The key/value editor and, under it, the controls and stages are one fragment: an edit reruns the
# editor and the stages, not the router, the sidebar, the formulas and their LaTeX; the inner fragment
# keeps the editor out of a control's rerun.
@st.fragment
def table_and_stages() -> None:
    table_col, about_col = st.columns([2, 1], gap="large", vertical_alignment="center")
    with table_col:
        st.markdown(_("**Keys and values** (edit cells, add or delete rows)"))
        start_rows = linked_rows("kv", default_table(), TABLE_COLUMNS, MAX_KEYS)
        table = st.data_editor(
            pd.DataFrame(start_rows, columns=TABLE_COLUMNS), num_rows="dynamic", width="stretch",
            key=editor_key("kv_table", len(start_rows), TABLE_COLUMNS, 4 * MAX_KEYS),
            hide_index=True,
        )
    with about_col:
        st.caption(_("Each row is one key k = (k1, k2) and its value v = (v1, v2), up to {count} rows. "
                     "The query q is set by the sliders below; the score compares q with every key, and α "
                     "weights the values.").format(count=MAX_KEYS))
    rows = table.to_dict("records")
    link_rows("kv", rows, default_table())
    # A table that cannot be read is said in one line, and the controls below stay as they were.
    key_values = checked(table_to_kv, rows, stop=False)
    playground(key_values)
    if key_values is not None:  # under the stages, outside their fragment: a control does not send it again
        st.markdown(_("In the right-hand panel the star is the query q, the dots are the keys k_j; hover a key "
                      "for its score and α, and watch its dot grow with α. A dot product q·k = |q| |k| cos θ is "
                      "large for a key that is long and points the query's way; the cosine score looks at the "
                      "angle θ alone. Move the query with the sliders above and see which keys it comes close to."))


table_and_stages()
