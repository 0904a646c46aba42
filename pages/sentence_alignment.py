"""Sentence alignment: two sentences aligned token by token with pretrained contextual vectors."""

import streamlit as st

from models.registry import SENTENCE_ALIGNMENT, mechanisms_on_page
from models.transformer.alignment import DEFAULT_TEMPERATURES, SCORE_NAMES, best_pair_rows
from ui.legend import SENTENCE_ALIGNMENT_LEGEND, symbol_legend
from ui.links import bound, linked_text
from ui.model_folder import BERT_FOLDER, model_folder
from ui.router import start_page
from ui.story import page_header
from ui.widgets import checked, option_radio, option_slider, show_figure, show_notice
from viz.i18n_text import N_
from viz.transformer import alignment_figure

_ = start_page()
mechanism = mechanisms_on_page(SENTENCE_ALIGNMENT.file)[0]

# The scores' names (models/transformer/alignment.py's SCORE_NAMES) and the best-pair table's columns, for the catalog.
SCORE_LABELS = {"dot": N_("Dot product"), "scaled-dot": N_("Scaled dot product"), "cosine": N_("Cosine")}
PAIR_COLUMNS = {"sentence 1": N_("sentence 1"), "sentence 2": N_("sentence 2"), "α": "α", "score": N_("score"),
                "mutual": N_("mutual")}


@st.cache_data(show_spinner=False, max_entries=64)
def alignment(text: str, text_pair: str, score: str, window: int | None, temperature: float, model_dir: str = ""):
    """Returns the alignment record of two sentences with the default model or the user's encoder folder."""
    return mechanism.build({"text": text, "text_pair": text_pair, "score": score, "window": window,
                            "temperature": temperature, "model_dir": model_dir or None})


page_header(SENTENCE_ALIGNMENT, _(
    "Each sentence is encoded **on its own** by all-MiniLM-L6-v2; every token of sentence 1 is then "
    "scored against every token of sentence 2 with a score that has **no trained parameters**, and the "
    "scores are normalised into α. Paraphrases line up: *cat* finds *cat*, *mat* finds *rug*."
), title=_("Sentence-pair alignment with pretrained embeddings"))
st.info(_("all-MiniLM-L6-v2 is an English model: it reads English sentences. Other languages are cut into pieces "
          "it does not know ([UNK]), and their alignment means little."), icon=":material/translate:")
st.latex(mechanism.formula)
symbol_legend(SENTENCE_ALIGNMENT_LEGEND)

model_dir = model_folder(BERT_FOLDER, key="al_model_dir")
left, right = st.columns(2)
text_option, pair_option = mechanism.option("text"), mechanism.option("text_pair")
text = linked_text(left.text_input, _("Sentence 1 (rows)"), mechanism.example["text"], key="al_text",
                   max_chars=text_option.max_chars)
text_pair = linked_text(right.text_input, _("Sentence 2 (columns)"), mechanism.example["text_pair"], key="al_pair",
                        max_chars=pair_option.max_chars)

score_col, tau_col, window_col, d_col = st.columns([2, 2, 2, 2], vertical_alignment="bottom")
with score_col:
    score = option_radio(mechanism.option("score"), key="al_score", horizontal=True,
                         labels={k: _(SCORE_LABELS.get(k, v)) for k, v in SCORE_NAMES.items()})
with tau_col:
    temperature = option_slider(
        mechanism.option("temperature"), key=f"al_tau_{score}", value=DEFAULT_TEMPERATURES[score],
        help=_("α = softmax(score / τ). Cosine lies in [−1, 1], so it needs a small τ; the plain dot product of "
               "384-wide vectors is so large that τ = 1 makes α one-hot (the reason for √d scaling)."),
    )
window_mode = bound(window_col.radio, _("Window"), ("global", "local"), key="al_window_mode", horizontal=True,
                    format_func={"global": _("Global"), "local": _("Local (p_t = t·S/T)")}.get)
window = None
if window_mode == "local":
    with d_col:
        window = option_slider(mechanism.option("window"), key="al_window", value=2,
                               help=_("Only keys within [p_t − D, p_t + D] are allowed, weighted by a Gaussian "
                                      "with σ = D/2."))

if not text.strip() or not text_pair.strip():
    st.info(_("Type a sentence in both boxes to align them."), icon=":material/edit:")
    st.stop()

with st.spinner(_("Encoding both sentences…")):
    record = checked(alignment, text, text_pair, score, window, float(temperature), model_dir)

for notice in record.meta.get("notices", []):
    show_notice(notice, icon=":material/help:")
heat_col, pairs_col = st.columns([3, 2], gap="large")
with heat_col:
    where = _("global") if window is None else _("local, D = {window}").format(window=window)
    fig = alignment_figure(record, title=_("α: {score} score, τ = {tau}, {where}").format(
        score=_(SCORE_LABELS.get(score, score)).lower(), tau=f"{temperature:g}", where=where), gettext=_)
    show_figure(fig, record, key="al_heatmap", chart_key="al_chart", name=f"sentence-alignment-{score}")
with pairs_col:
    st.subheader(_("Best-aligned pairs"))
    st.caption(_("Each sentence-1 token with its highest-α sentence-2 token; mutual = each is the other's best "
                 "match."))
    rows = [{_(PAIR_COLUMNS.get(k, k)): v for k, v in row.items()} for row in best_pair_rows(record)]
    st.dataframe(rows, hide_index=True, width="stretch", key="al_pairs")
