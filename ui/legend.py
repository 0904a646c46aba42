"""The legends of the formulas the pages show, one table per mechanism, and the expander that shows one
under its formula: one row per symbol (the symbol in LaTeX, what it is in plain words, its shape)."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from ui.i18n import translator
from viz.formulas import legend_table
from viz.i18n_text import N_

Row = tuple[str, str, str]  # (symbol in LaTeX, what it is, its shape): texts marked with N_, translated where shown


def symbol_legend(rows: Sequence[Row], *, label: str | None = None, note: str | None = None) -> None:
    """Shows an expander ("What the symbols mean") holding the legend of `rows`, and `note` (translated) under it."""
    _ = translator()
    with st.expander(label or _("What the symbols mean")):
        st.markdown(legend_table([(symbol, _(what), _(shape)) for symbol, what, shape in rows],
                                 headers=(_("symbol"), _("what it is"), _("shape"))))
        if note:
            st.caption(note)


# Home's: the general view's symbols (q, k, v); the Playground's names the same symbols for its table.
GENERAL_LEGEND = (
    (r"q", N_("the query: what is being looked for"), N_("a vector of width d")),
    (r"k_j", N_("key j: what item j offers to be matched against"), N_("a vector of width d")),
    (r"v_j", N_("value j: what item j gives when it is chosen"), N_("a vector")),
    (r"\operatorname{score}(q, k_j)", N_("the alignment function: how well key j matches the query"),
     N_("a number")),
    (r"\tau", N_("the temperature: small sharpens α, large flattens it"), N_("a number > 0")),
    (r"\alpha_j", N_("the weight of item j; the weights sum to 1"), N_("a number in [0, 1]")),
    (r"c", N_("the output: the α-weighted sum of the values (the context vector)"), N_("a vector, like v_j")),
)

SELF_ATTENTION_LEGEND = (
    (r"X", N_("the token vectors entering the layer, one row per token"), N_("T × 384")),
    (r"T", N_("the number of tokens, [CLS] and [SEP] included"), N_("a whole number")),
    (r"W_i^Q,\ W_i^K,\ W_i^V", N_("head i's learned projections"), N_("384 × 32")),
    (r"Q_i,\ K_i,\ V_i", N_("head i's queries, keys and values: one row per token"), N_("T × 32")),
    (r"d_k", N_("the width of one head's queries and keys: 32 (384 split over 12 heads)"), N_("a number")),
    (r"\operatorname{softmax}", N_("taken along each row: every query's weights over the keys sum to 1"), N_("T × T")),
    (r"\operatorname{head}_i", N_("what head i passes on: each token's α-weighted sum of the values"), N_("T × 32")),
    (r"\text{[CLS]},\ \text{[SEP]}", N_("special tokens the tokenizer adds at the start and at the end (and between "
                                        "two sentences)"), N_("one token each")),
    (r"\#\#", N_("marks a word piece that continues the word before it: embeddings → em ##bed ##ding ##s"),
     N_("part of a token")),
)

ROLLOUT_LEGEND = (
    (r"A_l", N_("layer l's attention, its heads fused (mean, max or min)"), N_("T × T")),
    (r"I", N_("the identity: the residual connection, a token keeping itself"), N_("T × T")),
    (r"\operatorname{norm}", N_("divides each row by its sum, so rows sum to 1 again"), N_("T × T")),
    (r"R", N_("the rollout: the product of the layers' matrices, from the first layer up"), N_("T × T")),
    (r"x_j,\ h^L_i", N_("input token j, and token i after the last layer L"), N_("nodes of the graph")),
    (r"\operatorname{flow}", N_("the maximum flow from x_j to h^L_i through the layers' matrices"), N_("T × T")),
)

LANGUAGE_MODEL_LEGEND = (
    (r"\alpha^{(l,h)}", N_("the attention of head h in layer l: one row per query token"), N_("T × T")),
    (r"Q_h", N_("head h's queries, one row per token"), N_("T × d")),
    (r"K_{g(h)}", N_("the keys head h reads: its own, or its group's where heads share keys (Llama, Mistral, Qwen)"),
     N_("T × d")),
    (r"d", N_("the width of one head's queries and keys"), N_("a number")),
    (r"M", N_("the causal mask: −∞ above the diagonal, so a token never sees the tokens after it"), N_("T × T")),
    (r"g(h),\ G", N_("the key group of head h, and how many query heads share one group (1 in GPT-2)"),
     N_("whole numbers")),
    (r"T", N_("the number of tokens of the text"), N_("a whole number")),
)

INDUCTION_LEGEND = (
    (r"x_t", N_("the current token, at position t: the query's token"), N_("one token")),
    (r"x_s", N_("an earlier token equal to it (s < t): an earlier copy"), N_("one token")),
    (r"s + 1", N_("the position right after that copy: where an induction head looks"), N_("a position")),
    (r"\alpha_{t \to s+1}", N_("the attention of query t on key s + 1 (prefix matching: high for an induction head)"),
     N_("a number in [0, 1]")),
    (r"T", N_("the sequence length; a head that ignores content gives each key about 1/T"), N_("a whole number")),
    (r"\text{[BOS]}", N_("the token every sequence starts with"), N_("one token")),
    (r"r", N_("a random segment of tokens; [BOS] + r + r repeats it once"), N_("3–31 tokens")),
)

# The symbols of both formulas: (LaTeX, what it is, shape). T steps; the hidden layers are 100 wide.
FEEDFORWARD_LEGEND = (
    (r"x_t", N_("step t of the input: its value in [−1, 1] and its marker (1 on the two marked steps, else 0)"),
     N_("2 numbers")),
    (r"h_t", N_("step t's state, computed from x_t alone (h_t = LReLU(W x_t + b)); no recurrence"),
     N_("100 numbers")),
    (r"e_t", N_("the score of step t: squashed by tanh into [−1, 1] in the paper form, unbounded in the other"),
     N_("one number per step")),
    (r"W_{hc}, b_{hc}, w, b", N_("learned weights of the scoring function; no query takes part"),
     N_("100 numbers and one")),
    (r"\alpha", N_("the weights of the T steps; they sum to 1"), N_("T numbers")),
    (r"c", N_("the weighted sum of the states, which the output layers turn into the predicted sum"),
     N_("100 numbers")),
    (r"T", N_("the sequence's length (2 to 10,000 here)"), N_("one number")),
)

# The symbols of the formula: (LaTeX, what it is, shape). Word pieces are MiniLM's (384 numbers each);
# the GRUs are 48 wide each way, the attention layers 64.
HAN_LEGEND = (
    (r"h_{it}", N_("word t of sentence i as the word-level GRU read it, both directions"), N_("96 numbers")),
    (r"W_w, b_w", N_("learned weights of the word attention layer"), N_("64 × 96 and 64 numbers")),
    (r"u_{it}", N_("word t's key: h_it through one layer"), N_("64 numbers")),
    (r"u_w", N_("the word context vector: a learned question (“which word carries the opinion?”), the same for "
                "every document; not computed from the text"), N_("64 numbers")),
    (r"\alpha_{it}", N_("the weight of word t within sentence i; each sentence's weights sum to 1"),
     N_("one number per word")),
    (r"s_i", N_("sentence i's vector: the α-weighted sum of its words"), N_("96 numbers")),
    (r"h_i, u_i", N_("sentence i as the sentence-level GRU read it, and its key"), N_("96 and 64 numbers")),
    (r"u_s", N_("the sentence context vector, learned like u_w"), N_("64 numbers")),
    (r"\alpha_i", N_("the weight of sentence i in the document; they sum to 1"), N_("one number per sentence")),
    (r"v", N_("the document's vector, which the classifier reads"), N_("96 numbers")),
)

# The symbols of the two captioners' formulas: (LaTeX, what it is, shape). 64 cells = the 8 × 8 grid.
SOFT_LEGEND = (
    (r"a_i", N_("the image feature of grid cell i, from the convolutional encoder (32 channels and the cell's row "
                "and column)"), N_("34 numbers; 64 cells")),
    (r"h_{t-1}", N_("the decoder's state before it writes word t"), N_("64 numbers")),
    (r"E y_{t-1}", N_("the embedding of the word written before"), N_("16 numbers")),
    (r"W, U, v", N_("learned weights of the scoring network"), N_("matrices; v has 32 numbers")),
    (r"e_{ti}", N_("the score of cell i for word t"), N_("one number per cell")),
    (r"\alpha_t", N_("the weights of the 64 cells for word t; they sum to 1"), N_("64 numbers")),
    (r"\beta_t", N_("a learned gate between 0 and 1: how much of the image the decoder takes in at word t"),
     N_("one number")),
    (r"z_t", N_("what the decoder reads for word t: the α-weighted average of the cells, scaled by β_t"),
     N_("34 numbers")),
)

HARD_LEGEND = (
    (r"s_t", N_("the one cell hard attention reads for word t, drawn at random with the probabilities α_t"),
     N_("a cell number, 0 to 63")),
    (r"p(y \mid s)", N_("the probability of the right caption y when the model reads the drawn cells s"),
     N_("one number")),
    (r"\nabla", N_("the gradient estimate the training follows (REINFORCE: drawing a cell has no gradient)"),
     N_("one per weight")),
    (r"\lambda_r", N_("the weight of the REINFORCE term"), N_("one number, set before training")),
    (r"b", N_("the baseline: a moving average of log p(y | s) over training, subtracted so that only draws "
              "better than usual are rewarded"), N_("one number")),
    (r"\lambda_e", N_("the weight of the entropy bonus"), N_("one number, set before training")),
    (r"H[s]", N_("the entropy of α_t: large when the weight is spread; the bonus keeps the model trying other "
                 "cells"), N_("one number per word")),
)

PATCH_LEGEND = (
    (r"x_j", N_("patch j's features: its mean colour (red, green, blue) and its position (row, column), centred"),
     N_("5 numbers")),
    (r"x_q", N_("the query patch's features (the patch outlined in the picture)"), N_("5 numbers")),
    (r"d", N_("the number of features, 5; dividing by √d keeps the scores from growing with it"), N_("one number")),
    (r"\tau", N_("the temperature: small τ sharpens α onto the most similar patches, large τ flattens it"),
     N_("one number")),
    (r"\alpha_{qj}", N_("the weight patch q gives patch j; they sum to 1 over all patches"),
     N_("one number per patch")),
)

TRANSFORMER_LEGEND = (
    (r"Q_s,\ K_s", N_("the encoder's queries and keys, one row per input character"), N_("S × d_k")),
    (r"Q_t,\ K_t", N_("the decoder's queries and keys, one row per output position (<s> first)"), N_("T × d_k")),
    (r"S,\ T", N_("the number of input characters and of output positions"), N_("whole numbers")),
    (r"d_k", N_("the width of one head's queries and keys: 16 (width 64 split over 4 heads)"), N_("a number")),
    (r"M", N_("the causal mask: −∞ above the diagonal (j > i), so position i never sees a later one"),
     N_("T × T")),
    (r"\alpha^{enc},\ \alpha^{dec},\ \alpha^{cross}", N_("the three kinds of attention weights; each row sums to 1"),
     N_("S × S, T × T, T × S")),
    (r"\text{<s>}", N_("the start token the decoder reads first"), N_("one token")),
)

# The symbols of the page, in the general view's notation (Home's): the papers' own names are mapped once.
PLAYGROUND_LEGEND = (
    (r"q", N_("the query, set by the two sliders"), N_("2 numbers")),
    (r"k_j", N_("key j: columns k1, k2 of row j of the table"), N_("2 numbers")),
    (r"v_j", N_("value j: columns v1, v2 of row j"), N_("2 numbers")),
    (r"\operatorname{score}(q, k_j)", N_("how well key j matches the query (the score function picked below)"),
     N_("a number per key")),
    (r"d", N_("the width of the query and the keys"), N_("2 here")),
    (r"W_a, W, U, v_a, v", N_("the scores' parameters, hand-set here (not learned)"), N_("small matrices and vectors")),
    (r"\tau", N_("the temperature: the scores are divided by τ before the softmax"), N_("a number > 0")),
    (r"\alpha_j", N_("the weight of key j; the weights sum to 1"), N_("a number per key")),
    (r"c", N_("the output: the α-weighted sum of the values"), N_("2 numbers")),
)

SENTENCE_ALIGNMENT_LEGEND = (
    (r"x_t", N_("the vector of token t of sentence 1 (a row); the query"), N_("384 numbers")),
    (r"y_s", N_("the vector of token s of sentence 2 (a column); a key"), N_("384 numbers")),
    (r"\operatorname{score}", N_("dot product, dot product divided by √d, or cosine: no trained parameters"),
     N_("a number per (t, s)")),
    (r"d", N_("the vectors' width"), N_("384")),
    (r"\tau", N_("the temperature: the scores are divided by τ before the softmax"), N_("a number > 0")),
    (r"\alpha_{ts}", N_("the weight row t gives column s; each row sums to 1"), N_("a number per (t, s)")),
    (r"T,\ S", N_("the number of tokens of sentence 1 and of sentence 2"), N_("whole numbers")),
    (r"p_t", N_("local window only: the window's centre in sentence 2 for row t"), N_("a position")),
)

# pages/seq2seq.py
# The symbols of the variants' formulas: what each is, and its shape (E: the encoder GRU's width per direction).
SEQ2SEQ_LEGEND = (
    (r"h_j,\ \bar h_s", N_("the encoder's state at input character j (Luong: s); forward and backward GRU joined"),
     N_("a vector of 2E numbers")),
    (r"s_{i-1}", N_("Bahdanau: the decoder's state before it writes output character i (the query)"), N_("a vector")),
    (r"h_t", N_("Luong: the decoder's state at output step t (the query)"), N_("a vector")),
    (r"e_{ij}", N_("the score of input j for output i"), N_("a number per (i, j)")),
    (r"\alpha_{ij},\ a_t(s)", N_("the weight output i (t) gives input j (s); each row sums to 1"),
     N_("a number per (i, j)")),
    (r"c,\ c_i,\ c_t", N_("the context vector the decoder reads: one for the whole input without attention, one "
                          "per output step with it"), N_("a vector of 2E numbers")),
    (r"\tilde h_t", N_("Luong's attentional state, from c_t and h_t; it predicts the next character"), N_("a vector")),
    (r"p_t", N_("the centre of the local window at output step t"), N_("a position")),
    (r"D", N_("the window's half-width: positions [p_t − D, p_t + D] are allowed"), N_("a whole number")),
    (r"\sigma", N_("the Gaussian's width around p_t, D/2"), N_("a number")),
    (r"S,\ T", N_("the input's length (Luong: S; Sutskever: T)"), N_("a whole number")),
    (r"W_a, U_a, v_a, W_p, v_p, W_c, W_s", N_("learned weights"), N_("matrices and vectors")),
    (r"y_{i-1}", N_("the output character written at the step before"), N_("a character")),
)
