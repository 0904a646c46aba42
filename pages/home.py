"""Home: what attention is, then the catalogue of mechanisms from the registry."""

import streamlit as st

from models.registry import PAGES, START_HERE, get_mechanism, mechanisms_on_page
from ui.legend import GENERAL_LEGEND, symbol_legend
from ui.router import start_page
from ui.widgets import checked, option_slider, show_figure
from viz.figures import weight_bars
from viz.i18n_text import N_

_ = start_page()

PAPERS_NOTATION = N_(
    "In the papers: Bahdanau writes the query s_{i−1} (the decoder's previous state), the keys and the values "
    "h_j (the encoder's states) and the weight α_ij; Luong writes h_t for the query and h̄_s for the keys and "
    "values; the Transformer writes Q, K, V for many queries, keys and values at once."
)

st.title(_("Attention Lab"))
st.markdown(_(
    "Attention lets a model decide, for each thing it produces, **where to look**. "
    "Every mechanism in this lab is the same three steps: a **query** is scored against a set "
    "of **keys**, the scores are **normalised** into weights α (usually with a softmax), and "
    "the output is the **α-weighted sum of the values** that belong to those keys."
))
st.latex(r"\alpha_j = \frac{\exp(\operatorname{score}(q, k_j)/\tau)}{\sum_{j'} \exp(\operatorname{score}(q, k_{j'})/\tau)}, \qquad c = \sum_j \alpha_j v_j")
symbol_legend(GENERAL_LEGEND, note=_(PAPERS_NOTATION))
st.markdown(_(
    "The mechanisms of the literature differ in how they score, which keys they allow "
    "(masks, local windows), and whether they take the expectation (soft) or pick one key (hard). "
    "Each page below shows real weights you can inspect, tweak and export."
))
st.page_link(START_HERE.file, label=_("New here? Start the guided tour"), icon=":material/school:")

st.subheader(_("Temperature in one picture"))
st.caption(_(
    "Five keys scored against one query by dot product (the playground's default example). "
    "Lower the temperature and α concentrates on the best key; raise it and α spreads out."
))


@st.fragment
def temperature_example() -> None:
    # Its own fragment: moving τ reruns this example only, not the catalogue below.
    dot = get_mechanism("qkv-dot")
    temperature = option_slider(dot.option("temperature"), key="home_temperature")
    example = checked(dot.build, {"temperature": temperature})
    fig = weight_bars(example.weights[0], example.key_labels,
                      title=_("α at τ = {temperature}").format(temperature=f"{temperature:g}"), value_name="α", gettext=_)
    show_figure(fig, example, key="home_example", chart_key="home_example")


temperature_example()

st.header(_("Catalogue"))
for page in PAGES:
    mechanisms = mechanisms_on_page(page.file)
    if not mechanisms:
        continue
    title = _(page.title)
    st.subheader(title)
    st.page_link(page.file, label=_("Open {page}").format(page=title), icon=page.icon)
    for mechanism in mechanisms:
        with st.container(border=True):
            st.markdown(f"**{_(mechanism.name)}** · `{mechanism.id}`")
            st.latex(mechanism.formula)
            st.caption(f"{_(mechanism.summary)} — {mechanism.citation(_)}")
