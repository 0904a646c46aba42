"""The app's pages, in the order of the sidebar: file, title and icon of each.

app.py builds st.navigation from PAGES; every registry entry names its page from here. Page titles are
extracted for translation from this file (tools/i18n.sh, `-k Page:2`).
"""

from __future__ import annotations

from models.entry import Page

__all__ = ["PAGES", "CORPUS", "EXPLANATION", "FEEDFORWARD", "HAN", "HOME", "IMAGES", "INDUCTION", "INSIDE_LM",
           "LANGUAGE_MODEL",
           "PLAYGROUND", "SELF_ATTENTION", "SENTENCE_ALIGNMENT", "SEQ2SEQ", "START_HERE", "TRANSFORMER"]

START_HERE = Page("pages/start_here.py", "Start here", ":material/school:")  # the guided tour (ui/tour.py)
HOME = Page("pages/home.py", "Home", ":material/home:", default=True)
PLAYGROUND = Page("pages/playground.py", "Playground: Q, K, V", ":material/tune:")
SELF_ATTENTION = Page("pages/self_attention.py", "Self-attention (MiniLM)", ":material/hub:")
SENTENCE_ALIGNMENT = Page("pages/sentence_alignment.py", "Sentence alignment (MiniLM)", ":material/compare_arrows:")
FEEDFORWARD = Page("pages/feedforward.py", "Feed-forward attention", ":material/timeline:")
SEQ2SEQ = Page("pages/seq2seq.py", "Seq2seq alignment", ":material/translate:")
HAN = Page("pages/han.py", "Hierarchical attention", ":material/account_tree:")
IMAGES = Page("pages/images.py", "Hard vs soft attention (images)", ":material/image:")
TRANSFORMER = Page("pages/transformer.py", "Transformer: three kinds of attention", ":material/swap_horiz:")
INDUCTION = Page("pages/induction.py", "Induction heads", ":material/repeat:")
LANGUAGE_MODEL = Page("pages/language_model.py", "Language model (GPT)", ":material/auto_stories:")
INSIDE_LM = Page("pages/inside_lm.py", "Inside a language model", ":material/biotech:")
CORPUS = Page("pages/corpus.py", "Many inputs: head statistics", ":material/scatter_plot:")
EXPLANATION = Page("pages/explanation.py", "Is attention an explanation?", ":material/fact_check:")

PAGES: tuple[Page, ...] = (
    START_HERE, HOME, PLAYGROUND, SEQ2SEQ, SENTENCE_ALIGNMENT, IMAGES, FEEDFORWARD, HAN, SELF_ATTENTION, EXPLANATION,
    TRANSFORMER, INDUCTION, LANGUAGE_MODEL, INSIDE_LM, CORPUS,
)  # roughly the order of the literature
