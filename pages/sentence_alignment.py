"""Sentence alignment: two sentences aligned token by token with pretrained contextual vectors."""

import streamlit as st

from models.record import InputError
from models.registry import SENTENCE_ALIGNMENT, mechanisms_on_page
from models.transformer.alignment import (
    DEFAULT_SENTENCES,
    DEFAULT_TEMPERATURES,
    MAX_WINDOW,
    SCORE_NAMES,
    SCORES,
    align_sentences,
    best_pairs,
)
from ui.router import ensure_router
from ui.transformer import cached_runner
from ui.widgets import export_buttons, show_input_error
from viz.transformer import alignment_figure

ensure_router()


@st.cache_data(show_spinner=False, max_entries=64)
def alignment(text: str, text_pair: str, score: str, window: int | None, temperature: float):
    """Returns the alignment record of two sentences with the default model."""
    return align_sentences(cached_runner(""), text, text_pair, score=score, window=window, temperature=temperature)


st.title("Sentence-pair alignment with pretrained embeddings")
mechanism = mechanisms_on_page(SENTENCE_ALIGNMENT.file)[0]
st.markdown(
    "Each sentence is encoded **on its own** by all-MiniLM-L6-v2; every token of sentence 1 is then "
    "scored against every token of sentence 2 with a score that has **no trained parameters**, and the "
    "scores are normalised into α. Paraphrases line up: *cat* finds *cat*, *mat* finds *rug*."
)
st.latex(mechanism.formula)

left, right = st.columns(2)
text = left.text_input("Sentence 1 (rows)", DEFAULT_SENTENCES[0], key="al_text", max_chars=2000)
text_pair = right.text_input("Sentence 2 (columns)", DEFAULT_SENTENCES[1], key="al_pair", max_chars=2000)

score_col, tau_col, window_col, d_col = st.columns([2, 2, 2, 2], vertical_alignment="bottom")
score = score_col.radio(
    "Score", SCORES, index=SCORES.index("cosine"), format_func=SCORE_NAMES.get, key="al_score", horizontal=True
)
temperature = tau_col.slider(
    "Temperature τ", 0.01, 5.0, DEFAULT_TEMPERATURES[score], 0.01, key=f"al_tau_{score}",
    help="α = softmax(score / τ). Cosine lies in [−1, 1], so it needs a small τ; the plain dot product of "
    "384-wide vectors is so large that τ = 1 makes α one-hot (the reason for √d scaling).",
)
window_mode = window_col.radio("Window", ("global", "local"), key="al_window_mode", horizontal=True,
                               format_func={"global": "Global", "local": "Local (p_t = t·S/T)"}.get)
window = None
if window_mode == "local":
    window = d_col.slider("Half-width D", 0, MAX_WINDOW, 2, key="al_window",
                          help="Only keys within [p_t − D, p_t + D] are allowed, weighted by a Gaussian with σ = D/2.")

if not text.strip() or not text_pair.strip():
    st.info("Type a sentence in both boxes to align them.", icon=":material/edit:")
    st.stop()

try:
    with st.spinner("Encoding both sentences…"):
        record = alignment(text, text_pair, score, window, float(temperature))
except InputError as error:
    show_input_error(error)
    st.stop()

heat_col, pairs_col = st.columns([3, 2], gap="large")
with heat_col:
    where = "global" if window is None else f"local, D = {window}"
    fig = alignment_figure(record, title=f"α: {SCORE_NAMES[score].lower()} score, τ = {temperature:g}, {where}")
    st.plotly_chart(fig, key="al_chart")
    export_buttons(record, fig, key="al_heatmap", name=f"sentence-alignment-{score}")
with pairs_col:
    st.subheader("Best-aligned pairs")
    st.caption("Each sentence-1 token with its highest-α sentence-2 token; mutual = each is the other's best match.")
    st.dataframe(
        [
            {"sentence 1": p.query_token, "sentence 2": p.key_token, "α": round(p.weight, 3),
             "score": round(p.score, 3), "mutual": p.mutual}
            for p in best_pairs(record)
        ],
        hide_index=True, width="stretch", key="al_pairs",
    )
