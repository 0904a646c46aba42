"""Hierarchical attention (Yang et al., 2016): word attention inside sentences, sentence attention over the document."""

import streamlit as st

from models.han.records import context_word_record, default_predictor, probability_record, sentence_score_record
from models.registry import HAN, mechanisms_on_page
from ui.han import compare_documents, english_notice, show_analysis, train_your_own
from ui.legend import HAN_LEGEND, symbol_legend
from ui.links import linked_text
from ui.router import start_page
from ui.story import page_header
from ui.widgets import checked, show_figure
from viz.formulas import formula_lines
from viz.han import probability_bars, score_bars, sentence_labels
from viz.i18n_text import N_

_ = start_page()


DEFAULT_TEXT = (
    "We went there on a Friday evening with my sister. The table by the window was free. "
    "The waiter forgot our order twice and was rude when we asked about it. "
    "We took the bus home afterwards."
)
DEFAULT_TEXT_B = (
    "We went there on a Friday evening with my sister. The table by the window was free. "
    "The waiter was friendly and brought our order quickly. "
    "We took the bus home afterwards."
)
TOP_WORDS = 15
# The committed model's heads and classes, shown translated (the record and its exports keep English).
HEAD_NAMES = {"sentiment": N_("sentiment"), "topic": N_("topic")}
CLASS_NAMES = {"negative": N_("negative"), "positive": N_("positive"), "quality": N_("quality"),
               "service": N_("service"), "price": N_("price"), "ambience": N_("ambience")}
mechanism = mechanisms_on_page(HAN.file)[0]


def named(names: dict[str, str], value: str) -> str:
    """Returns a head's or class's name in the session's language (a name not listed, as it is)."""
    return _(names[value]) if value in names else value


@st.cache_data(max_entries=64, show_spinner=False)
def analyse(text: str):
    return mechanism.build({"text": text})


@st.cache_data(show_spinner=False)
def context_words(k: int):
    return context_word_record(mechanism.id, default_predictor(), k)


page_header(HAN, _(
    "A hierarchical attention network reads a document twice over. Inside each sentence, word attention "
    "weighs the words against a learned **word context vector u_w** and sums them into a sentence vector; "
    "over the document, sentence attention weighs the sentences against a learned **sentence context "
    "vector u_s**. This one was trained here on generated reviews of products, hotels, apps, films, services, "
    "travel and restaurants, where only the opinion sentences tell the **sentiment** and the **topic** (quality, "
    "service, price, ambience); the neutral ones are full of colours, numbers and objects, and some reviews have "
    "no opinion at all, for which it learnt to spread its sentence attention evenly."
))
english_notice()
st.latex(formula_lines(mechanism.formula))  # one clause per line: on one line it ran past the column's edge
symbol_legend(HAN_LEGEND)
st.caption(mechanism.citation(_) + ". " + _("Word vectors: MiniLM's contextual token vectors (frozen, each sentence read "
                                      "alone); a word's α is the sum of its word pieces' α."))

text = linked_text(st.text_area, _("Type or paste a document of several sentences"), DEFAULT_TEXT, key="han_text",
                   height=110, max_chars=mechanism.option("text").max_chars)
with st.spinner(_("Reading…")):
    record = checked(analyse, text)

st.subheader(_("Prediction"))
if record.meta.get("outside_language"):  # e.g. "positive 61 %" on a Chinese review: no finding
    st.warning(_("Outside what the model knows: this text is mostly Chinese, Japanese or Korean characters, and "
                 "the model reads English. The probabilities below are what it computes, not a judgement of the "
                 "text."), icon=":material/translate:")
heads = record.meta["heads"]
for column, head in zip(st.columns(len(heads), gap="large"), heads):
    with column:
        probabilities = probability_record(record, head)
        predicted = record.meta["prediction"][head]
        fig = probability_bars([named(CLASS_NAMES, c) for c in probabilities.key_labels], probabilities.weights,
                               title=f"{named(HEAD_NAMES, head)}: {named(CLASS_NAMES, predicted)}", gettext=_)
        show_figure(fig, probabilities, key=f"han_probs_{head}", name=f"han-{head}-probabilities", fit_phone=True)

st.subheader(_("Where the network looked"))
show_analysis(record, key="han_main", name="han-attention")

st.subheader(_("The learned context vectors"))
st.markdown(_(
    "u_w and u_s are parameters, learned like any weight: a word's score is u_itᵀu_w with "
    "u_it = tanh(W_w h_it + b_w), and the softmax of the scores is α. **Left:** the words of 40 generated reviews "
    "(never trained on), each scored against u_w in its own sentence, highest score per word: the words the word "
    "level looks for, and those it ignores. **Right:** this document's sentences scored against u_s (before the "
    "softmax)."
))
uw_col, us_col = st.columns(2, gap="large")
with uw_col:
    words = context_words(TOP_WORDS)
    fig = score_bars(words.key_labels, words.weights, title=_("Top and bottom {count} words against u_w").format(count=TOP_WORDS),
                     value_name="uᵀu_w", gettext=_)
    show_figure(fig, words, key="han_uw", name="han-context-words", fit_phone=True)
with us_col:
    sentences = sentence_score_record(record)
    fig = score_bars(sentence_labels(sentences.key_labels), sentences.weights,
                     title=_("This document's sentences against u_s"), value_name="uᵀu_s", gettext=_)
    show_figure(fig, sentences, key="han_us", name="han-context-sentences")

st.subheader(_("Compare two documents"))
st.markdown(_(
    "The same network on the document above (A) and on a second one (B): B's attention, then B − A for the "
    "sentences and for every word's share of the document (α_i · α_it), over the sentences and words both "
    "share, in order. A sentence or word only one document has is left blank and marked."
))
compare_documents(record, analyse, DEFAULT_TEXT_B)

st.divider()
st.subheader(_("Train your own"))
train_your_own()
