"""Hierarchical attention (Yang et al., 2016): word attention inside sentences, sentence attention over the document."""

import streamlit as st

from models.han.model import default_predictor, result_record
from models.record import InputError
from models.registry import HAN, mechanisms_on_page
from ui.han import show_analysis, train_your_own
from ui.router import ensure_router
from ui.widgets import export_buttons, show_input_error
from viz.han import probability_bars, score_bars, sentence_labels

ensure_router()

DEFAULT_TEXT = (
    "We went there on a Friday evening with my sister. The table by the window was free. "
    "The waiter forgot our order twice and was rude when we asked about it. "
    "We took the bus home afterwards."
)
TOP_WORDS = 15
VOCABULARY = 10_000  # the first 10,000 whole words of the vocabulary


@st.cache_resource(show_spinner="Loading the trained HAN and MiniLM's word vectors…")
def predictor():
    return default_predictor()


@st.cache_data(max_entries=64, show_spinner=False)
def analyse(text: str):
    return result_record(predictor().analyse(text))


@st.cache_data(show_spinner=False)
def context_words(k: int):
    words, scores = predictor().context_word_scores(limit=VOCABULARY)
    order = scores.argsort()
    return [words[i] for i in order[::-1][:k]], scores[order[::-1][:k]], [words[i] for i in order[:k]], scores[order[:k]]


st.title("Hierarchical attention")
mechanism = mechanisms_on_page(HAN.file)[0]
st.markdown(
    "A hierarchical attention network reads a document twice over. Inside each sentence, word attention "
    "weighs the words against a learned **word context vector u_w** and sums them into a sentence vector; "
    "over the document, sentence attention weighs the sentences against a learned **sentence context "
    "vector u_s**. This one was trained here on generated restaurant reviews, where only the opinion "
    "sentences tell the **sentiment** and the **topic** (food, service, price, ambience)."
)
st.latex(mechanism.formula)
st.caption(mechanism.paper + ". Word vectors: MiniLM's input embeddings (frozen); a word's α is the sum of its word pieces' α.")

text = st.text_area("Type or paste a document of several sentences", DEFAULT_TEXT, key="han_text", height=110)
try:
    with st.spinner("Reading…"):
        record = analyse(text)
except InputError as error:
    show_input_error(error)
    st.stop()

st.subheader("Prediction")
heads = record.meta["heads"]
for column, head in zip(st.columns(len(heads), gap="large"), heads):
    with column:
        classes = [str(c) for c in record.extras[f"classes_{head}"]]
        fig = probability_bars(classes, record.extras[f"probabilities_{head}"], title=f"{head}: {record.meta['prediction'][head]}")
        st.plotly_chart(fig, key=f"han_probs_{head}")
        export_buttons(record, fig, key=f"han_probs_{head}", name=f"han-{head}-probabilities")

st.subheader("Where the network looked")
show_analysis(record, key="han_main", name="han-attention")

st.subheader("The learned context vectors")
st.markdown(
    "u_w and u_s are parameters, learned like any weight: a word's score is u_itᵀu_w with "
    "u_it = tanh(W_w h_it + b_w), and the softmax of the scores is α. **Left:** the first 10,000 whole words of MiniLM's vocabulary, each read "
    "alone as a one-word sentence, scored against u_w: the words the word level looks for, and those it ignores. "
    "**Right:** this document's sentences scored against u_s (before the softmax)."
)
top, top_scores, bottom, bottom_scores = context_words(TOP_WORDS)
uw_col, us_col = st.columns(2, gap="large")
with uw_col:
    fig = score_bars(top + bottom[::-1], list(top_scores) + list(bottom_scores[::-1]),
                     title=f"Top and bottom {TOP_WORDS} words against u_w", value_name="uᵀu_w")
    st.plotly_chart(fig, key="han_uw")
    export_buttons(record, fig, key="han_uw", name="han-context-words")
with us_col:
    fig = score_bars(sentence_labels(record.query_labels), record.extras["sentence_scores"],
                     title="This document's sentences against u_s", value_name="uᵀu_s")
    st.plotly_chart(fig, key="han_us")
    export_buttons(record, fig, key="han_us", name="han-context-sentences")

st.divider()
st.subheader("Train your own")
train_your_own()
