"""Home: what attention is, then the catalogue of mechanisms from the registry."""

import streamlit as st

from models.registry import PAGES, get_mechanism, mechanisms_on_page
from ui.router import ensure_router
from ui.widgets import checked, option_slider, show_figure
from viz.figures import weight_bars

ensure_router()

st.title("Attention Lab")
st.markdown(
    "Attention lets a model decide, for each thing it produces, **where to look**. "
    "Every mechanism in this lab is the same three steps: a **query** is scored against a set "
    "of **keys**, the scores are **normalised** into weights α (usually with a softmax), and "
    "the output is the **α-weighted sum of the values** that belong to those keys."
)
st.latex(r"\alpha_j = \frac{\exp(\operatorname{score}(q, k_j)/\tau)}{\sum_{j'} \exp(\operatorname{score}(q, k_{j'})/\tau)}, \qquad c = \sum_j \alpha_j v_j")
st.markdown(
    "The mechanisms of the literature differ in how they score, which keys they allow "
    "(masks, local windows), and whether they take the expectation (soft) or pick one key (hard). "
    "Each page below shows real weights you can inspect, tweak and export."
)

st.subheader("Temperature in one picture")
st.caption(
    "Five keys scored against one query by dot product (the playground's default example). "
    "Lower the temperature and α concentrates on the best key; raise it and α spreads out."
)


@st.fragment
def temperature_example() -> None:
    # Its own fragment: moving τ reruns this example only, not the catalogue below.
    dot = get_mechanism("qkv-dot")
    temperature = option_slider(dot.option("temperature"), key="home_temperature")
    example = checked(dot.build, {"temperature": temperature})
    fig = weight_bars(example.weights[0], example.key_labels, title=f"α at τ = {temperature:g}", value_name="α")
    show_figure(fig, example, key="home_example", chart_key="home_example")


temperature_example()

st.header("Catalogue")
for page in PAGES:
    mechanisms = mechanisms_on_page(page.file)
    if not mechanisms:
        continue
    st.subheader(page.title)
    st.page_link(page.file, label=f"Open {page.title}", icon=page.icon)
    for mechanism in mechanisms:
        with st.container(border=True):
            st.markdown(f"**{mechanism.name}** · `{mechanism.id}`")
            st.latex(mechanism.formula)
            st.caption(f"{mechanism.summary} — {mechanism.paper}")
