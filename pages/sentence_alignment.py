"""Sentence alignment: two sentences aligned token by token with pretrained contextual vectors."""

import streamlit as st

from models.registry import SENTENCE_ALIGNMENT, mechanisms_on_page
from models.transformer.alignment import DEFAULT_TEMPERATURES, SCORE_NAMES, best_pair_rows
from ui.links import bound, linked_text
from ui.router import ensure_router
from ui.widgets import checked, escape_markdown, option_radio, option_slider, show_figure
from viz.transformer import alignment_figure

ensure_router()
mechanism = mechanisms_on_page(SENTENCE_ALIGNMENT.file)[0]


@st.cache_data(show_spinner=False, max_entries=64)
def alignment(text: str, text_pair: str, score: str, window: int | None, temperature: float):
    """Returns the alignment record of two sentences with the default model."""
    return mechanism.build({"text": text, "text_pair": text_pair, "score": score, "window": window,
                            "temperature": temperature})


st.title("Sentence-pair alignment with pretrained embeddings")
st.markdown(
    "Each sentence is encoded **on its own** by all-MiniLM-L6-v2; every token of sentence 1 is then "
    "scored against every token of sentence 2 with a score that has **no trained parameters**, and the "
    "scores are normalised into α. Paraphrases line up: *cat* finds *cat*, *mat* finds *rug*."
)
st.latex(mechanism.formula)

left, right = st.columns(2)
text_option, pair_option = mechanism.option("text"), mechanism.option("text_pair")
text = linked_text(left.text_input, "Sentence 1 (rows)", mechanism.example["text"], key="al_text",
                   max_chars=text_option.max_chars)
text_pair = linked_text(right.text_input, "Sentence 2 (columns)", mechanism.example["text_pair"], key="al_pair",
                        max_chars=pair_option.max_chars)

score_col, tau_col, window_col, d_col = st.columns([2, 2, 2, 2], vertical_alignment="bottom")
with score_col:
    score = option_radio(mechanism.option("score"), key="al_score", horizontal=True, labels=SCORE_NAMES)
with tau_col:
    temperature = option_slider(
        mechanism.option("temperature"), key=f"al_tau_{score}", value=DEFAULT_TEMPERATURES[score],
        help="α = softmax(score / τ). Cosine lies in [−1, 1], so it needs a small τ; the plain dot product of "
        "384-wide vectors is so large that τ = 1 makes α one-hot (the reason for √d scaling).",
    )
window_mode = bound(window_col.radio, "Window", ("global", "local"), key="al_window_mode", horizontal=True,
                    format_func={"global": "Global", "local": "Local (p_t = t·S/T)"}.get)
window = None
if window_mode == "local":
    with d_col:
        window = option_slider(mechanism.option("window"), key="al_window", value=2,
                               help="Only keys within [p_t − D, p_t + D] are allowed, weighted by a Gaussian with σ = D/2.")

if not text.strip() or not text_pair.strip():
    st.info("Type a sentence in both boxes to align them.", icon=":material/edit:")
    st.stop()

with st.spinner("Encoding both sentences…"):
    record = checked(alignment, text, text_pair, score, window, float(temperature))

for notice in record.meta.get("notices", []):
    st.warning(escape_markdown(notice), icon=":material/help:")
heat_col, pairs_col = st.columns([3, 2], gap="large")
with heat_col:
    where = "global" if window is None else f"local, D = {window}"
    fig = alignment_figure(record, title=f"α: {SCORE_NAMES[score].lower()} score, τ = {temperature:g}, {where}")
    show_figure(fig, record, key="al_heatmap", chart_key="al_chart", name=f"sentence-alignment-{score}")
with pairs_col:
    st.subheader("Best-aligned pairs")
    st.caption("Each sentence-1 token with its highest-α sentence-2 token; mutual = each is the other's best match.")
    st.dataframe(best_pair_rows(record), hide_index=True, width="stretch", key="al_pairs")
