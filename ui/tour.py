"""The guided tour's content ("Start here"): ten steps in the order of the literature, from the
encoder–decoder's bottleneck to the general Query/Key/Value view, and the idea each full page shows.

Data only, and no streamlit: pages/start_here.py shows a step. Each step holds its texts (marked
with N_ for the catalogs and translated where shown), its formula in the paper's notation with a
legend of every symbol, one control, the record the control's value asks for (from the registry,
as the step's full page builds it), the figure drawn from that record, and the full page's
parameters that open it in the same state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import plotly.graph_objects as go

from models import registry
from models.record import AttentionRecord
from models.registry import get_mechanism
from ui import tour_figures as f
from ui.tour_figures import DATES, DOCUMENTS, KINDS
from viz.i18n_text import N_, Gettext


@dataclass(frozen=True)
class Control:
    """The step's one control: a choice among `choices` (what the URL and the builders see), shown
    by `labels` (texts marked for translation; a choice without one is shown as it is)."""

    label: str
    choices: tuple[str, ...]
    default: str
    labels: Mapping[str, str] = field(default_factory=dict)
    kind: str = "radio"  # "radio" or "select_slider"

    def read(self, value: object) -> str:
        """Returns `value` if it is one of the choices (a browser's value is checked here), else the default."""
        return value if isinstance(value, str) and value in self.choices else self.default


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    body: str  # at most about 120 words
    formula: str  # LaTeX, the paper's notation
    legend: tuple[tuple[str, str], ...]  # (symbol in LaTeX, what it is)
    control: Control
    see: str  # "What you should see"
    question: str
    answer: str
    page: str  # the full page (a registry Page file)
    record: Callable[[str], AttentionRecord]  # control value → record
    figure: Callable[[AttentionRecord, str, Gettext], go.Figure]  # (record, value, gettext) → figure
    page_params: Callable[[str], dict[str, str]]  # control value → the full page's URL parameters
    # On a phone the figure takes the screen's width rather than scrolling sideways at 600 px
    # (ui.widgets.show_figure's fit_phone): for figures drawn to be read at any width.
    fits_phone: bool = False




# ------------------------------------------------------------------ the steps

_H = (r"h_j", N_("the encoder's state at input character j (it has read the input up to j, and back from the end)"))
_S = (r"s_i", N_("the decoder's state when it writes output character i"))
_ALPHA = (r"\alpha_{ij}", N_("the weight output i gives input j; each row sums to 1"))
_C = (r"c_i", N_("the context vector: what the decoder reads from the input at step i"))

STEPS: tuple[Step, ...] = (
    Step(
        key="bottleneck",
        title=N_("The encoder–decoder and its bottleneck"),
        body=N_("Sutskever et al. (2014) read a sequence with one recurrent network, the encoder, and wrote the "
                "output with a second one, the decoder. The decoder sees the input only through one fixed vector "
                "c, usually the encoder's last state h_T. Whatever the input's length, everything the decoder "
                "needs must squeeze into c: a bottleneck. Long inputs suffer first. Attention removes it: at every "
                "output step the decoder builds its own context from all the encoder's states."),
        formula=r"h_t = f(x_t, h_{t-1}),\quad c = q(h_1, \dots, h_T) = h_T,\quad s_i = g(s_{i-1}, y_{i-1}, c)",
        legend=((r"x_t", N_("input character t; T characters in all")), (r"h_t", N_("the encoder's state after reading x_t")),
                (r"c", N_("the one context vector; q picks the last state h_T")),
                (r"s_i", N_("the decoder's state when it writes output character y_i")),
                (r"f, g", N_("the encoder's and the decoder's recurrent networks"))),
        control=Control(N_("The decoder reads"), ("last", "attention"), "last",
                        {"last": N_("c = h_T (no attention)"), "attention": N_("c_i = Σ_j α_ij h_j (attention)")}),
        see=N_("With c = h_T, every output character reads the same last column. With attention each output "
               "digit reads its own input characters: the year's digits the year, the day's the day."),
        question=N_("Why would a longer input hurt the model without attention more?"),
        answer=N_("Its c has a fixed size: the longer the input, the more must fit into the same vector, and the "
                  "earliest characters have passed through the most recurrent steps. The seq2seq page measures "
                  "exact match against input length for models with and without attention."),
        page=registry.SEQ2SEQ.file,
        record=f.bottleneck_record,
        figure=f.seq2seq_figure(N_("What the decoder reads at each output character")),
        # The page's bottleneck view, on the model the control names: without attention, or Bahdanau's.
        page_params=lambda value: {"s2s_variant": "no-attention" if value == "last" else "bahdanau",
                                   "s2s_view": "bottleneck", "s2s_text": DATES[0]},
        fits_phone=True,  # few, short columns, as on the seq2seq page
    ),
    Step(
        key="bahdanau",
        title=N_("Bahdanau: additive attention"),
        body=N_("Bahdanau, Cho and Bengio (2015) let the decoder look back. Before writing output i, it scores "
                "every encoder state h_j against its previous state s_{i−1} with a small network, turns the scores "
                "into weights α_ij by a softmax, and reads their weighted sum c_i. The weights are learned with "
                "the rest, from the outputs alone: nobody tells the model where to look. This model was trained "
                "here to write dates as YYYY-MM-DD."),
        formula=r"e_{ij} = v_a^\top \tanh(W_a s_{i-1} + U_a h_j),\quad \alpha_{ij} = \frac{\exp e_{ij}}"
                r"{\sum_k \exp e_{ik}},\quad c_i = \sum_j \alpha_{ij} h_j",
        legend=((r"e_{ij}", N_("the score of input j for output i (the alignment model a)")),
                (r"s_{i-1}", N_("the decoder's previous state")), _H, _ALPHA, _C,
                (r"W_a, U_a, v_a", N_("learned weights of the alignment model"))),
        control=Control(N_("Date"), DATES, DATES[0]),
        see=N_("Each output digit puts its weight on the characters it comes from: the year's digits on 2018, the "
               "day's on 9, the month's on May (spread over its letters) or on the digit 5. Where the year comes "
               "last in the input, the path jumps."),
        question=N_("Where does the month's digit look when the input says “May”?"),
        answer=N_("At the word May itself: the model learned to translate the month's name into 05 by looking at "
                  "its letters. For 2018-5-9 it looks at the digit 5."),
        page=registry.SEQ2SEQ.file,
        record=lambda value: f.seq2seq_record("bahdanau", value),
        figure=f.seq2seq_figure(N_("Bahdanau: α over the input")),
        page_params=lambda value: {"s2s_variant": "bahdanau", "s2s_text": value},
        fits_phone=True,  # few, short columns, as on the seq2seq page
    ),
    Step(
        key="hard-soft",
        title=N_("Hard and soft attention"),
        body=N_("Xu et al. (2015) caption images: for every word, the captioner attends over an 8×8 grid of image "
                "features a_i. Soft attention reads the expectation, the α-weighted average of all cells: smooth, "
                "trained by backpropagation. Hard attention reads one cell s_t drawn from α: a sharper choice, "
                "but sampling has no gradient, so it is trained with REINFORCE. This captioner was trained here "
                "on pictures of shapes."),
        formula=r"\text{soft: } z_t = \sum_i \alpha_{ti} a_i,\quad \text{hard: } s_t \sim "
                r"\operatorname{Categorical}(\alpha_t),\ z_t = a_{s_t}",
        legend=((r"a_i", N_("the image feature of grid cell i (64 cells)")),
                (r"\alpha_{ti}", N_("the weight of cell i when writing word t")),
                (r"z_t", N_("what the decoder reads for word t")),
                (r"s_t", N_("the one cell hard attention reads, drawn from α_t"))),
        control=Control(N_("Attention"), ("soft", "hard"), "soft", {"soft": N_("soft"), "hard": N_("hard")}),
        see=N_("For the words red and circle both look at the circle. Soft spreads its weight smoothly over the "
               "cells around it; hard draws single cells, marked where it read."),
        question=N_("Why can hard attention not be trained by plain backpropagation?"),
        answer=N_("Drawing a cell is not differentiable: a small change of α does not change the drawn cell "
                  "smoothly. REINFORCE estimates the gradient from the reward of the cells it drew."),
        page=registry.IMAGES.file,
        record=f.caption_record,
        figure=f.caption_figure,
        page_params=lambda value: {"img_view": "captioner", "show": value},
    ),
    Step(
        key="luong-global",
        title=N_("Luong: global attention and its four scores"),
        body=N_("Luong, Pham and Manning (2015) simplified Bahdanau's recipe. The decoder first updates its state h_t, "
                "then scores every source state h̄_s with one of three alignment functions (dot, general, concat), "
                "or, as a baseline, from its state alone (location). The context c_t and h_t make the attentional "
                "state h̃_t that predicts the next character. Global: every source position takes part."),
        # One score a line: the paper's cases block was 350 px wide, past the text column's ~300 px.
        formula=r"a_t(s) = \frac{\exp \operatorname{score}(h_t, \bar h_s)}{\sum_{s'} \exp \operatorname{score}(h_t, "
                r"\bar h_{s'})},\quad \operatorname{score}_{\text{dot}} = h_t^\top \bar h_s,\quad "
                r"\operatorname{score}_{\text{general}} = h_t^\top W_a \bar h_s,\quad "
                r"\operatorname{score}_{\text{concat}} = v_a^\top \tanh(W_a [h_t; \bar h_s]),\quad "
                r"a_t = \operatorname{softmax}(W_a h_t)\ \text{(location)}",
        legend=((r"h_t", N_("the decoder's current state (Luong scores from it, not from the previous one)")),
                (r"\bar h_s", N_("the encoder's state at source position s")),
                (r"a_t(s)", N_("the weight of source position s at target step t")),
                (r"W_a, v_a", N_("learned weights of the score")),
                (r"\tilde h_t = \tanh(W_c [c_t; h_t])", N_("the attentional state, from the context c_t and h_t"))),
        control=Control(N_("Score"), ("luong-dot", "luong-general", "luong-concat", "luong-location"), "luong-dot",
                        {"luong-dot": N_("dot"), "luong-general": N_("general"), "luong-concat": N_("concat"),
                         "luong-location": N_("location")}),
        see=N_("Dot, general and concat put the year's digits on 2018, and each finds its own way for the month "
               "and the day. Location never looks at the characters: it puts all four year digits on the input's "
               "last character."),
        question=N_("Which score has no learned parameters at all?"),
        answer=N_("Dot: h_tᵀh̄_s compares the two states directly. It works because encoder and decoder learn states "
                  "that are comparable."),
        page=registry.SEQ2SEQ.file,
        record=lambda value: f.seq2seq_record(value, DATES[0]),
        figure=f.seq2seq_figure(N_("Luong global: α over the input")),
        page_params=lambda value: {"s2s_variant": value, "s2s_text": DATES[0]},
        fits_phone=True,  # few, short columns, as on the seq2seq page
    ),
    Step(
        key="luong-local",
        title=N_("Luong: local attention (local-m, local-p)"),
        body=N_("Global attention scores every source position, which costs more as inputs grow. Local attention "
                "picks a centre p_t and looks only at the window [p_t − D, p_t + D], weighted by a Gaussian around "
                "p_t. Local-m assumes the input and output run in step (p_t = t); local-p predicts p_t from the "
                "decoder's state. In “9 May 2018” the year comes last but is written first: local-m's window cannot "
                "reach it."),
        # The variants' names small and in front: after local-p's centre, "(local-p)" made its line 312 px wide.
        formula=r"{\scriptsize\text{local-m: }} p_t = t,\quad {\scriptsize\text{local-p: }} p_t = S\,"
                r"\operatorname{sigmoid}(v_p^\top \tanh(W_p h_t)),\quad "
                r"a_t(s) = \operatorname{align}(h_t, \bar h_s)\, e^{-\frac{(s - p_t)^2}{2\sigma^2}},\ \sigma = \tfrac{D}{2}",
        legend=((r"p_t", N_("the window's centre at target step t")), (r"S", N_("the source's length")),
                (r"D", N_("the window's half-width (3 here)")),
                (r"\operatorname{align}", N_("global attention's weights, then cut to the window")),
                (r"W_p, v_p", N_("learned weights that predict the centre"))),
        control=Control(N_("Window centre"), ("local-m", "local-p"), "local-m",
                        {"local-m": N_("local-m: p_t = t"), "local-p": N_("local-p: p_t predicted")}),
        see=N_("Local-m's weights stay near the diagonal, on the day and month when it writes the year. Local-p "
               "moves its window to the year at the end of the input, then back."),
        question=N_("For which inputs is local-m's assumption right?"),
        answer=N_("For dates written year first, such as 2018-5-9 or 2018年5月9日: there the characters to copy come "
                  "in the order the output writes them."),
        page=registry.SEQ2SEQ.file,
        record=lambda value: f.seq2seq_record(value, DATES[1]),
        figure=f.seq2seq_figure(N_("Local attention: α over the input")),
        page_params=lambda value: {"s2s_variant": value, "s2s_text": DATES[1]},
        fits_phone=True,  # few, short columns, as on the seq2seq page
    ),
    Step(
        key="feedforward",
        title=N_("Attention in a feed-forward network"),
        body=N_("Raffel and Ellis (2015) attend without a query: each step t scores its own state h_t, and the "
                "softmax of those scores over time weights the sum c. No recurrence is needed. The task: in a "
                "long sequence of numbers two are marked; output their sum. The paper squashes the score with "
                "tanh, so no step can get more than e² ≈ 7.4 times the weight of another; an unbounded score has "
                "no such ceiling."),
        formula=r"e_t = a(h_t) = \tanh(W h_t + b),\quad \alpha_t = \frac{\exp e_t}{\sum_k \exp e_k},"
                r"\quad c = \sum_{t=1}^{T} \alpha_t h_t",
        legend=((r"h_t", N_("the state of step t, computed from that step alone")),
                (r"a", N_("the learned scoring function; no query")),
                (r"e_t", N_("the score of step t")), (r"\alpha_t", N_("the weight of step t; they sum to 1")),
                (r"c", N_("the weighted sum the output layers read")), (r"T", N_("the sequence's length"))),
        control=Control(N_("Sequence length T"), ("50", "200", "1000", "5000"), "1000", kind="select_slider"),
        see=N_("Both rows share one α scale. The unbounded score puts two tall spikes on the marked steps, most of "
               "the weight. Beside them the paper form's α is a nearly flat line close to the uniform 1/T: its peaks "
               "on the marked steps barely rise above it, and the longer T is, the lower they are."),
        question=N_("What is a uniform α at T = 1000, and why is it a useful yardstick?"),
        answer=N_("1/T = 0.001 on every step. A weight far above 1/T means the model singles the step out."),
        page=registry.FEEDFORWARD.file,
        record=f.feedforward_record,
        figure=f.feedforward_figure,
        page_params=lambda value: {"length": value},
        fits_phone=True,  # lines over time: they read at any width
    ),
    Step(
        key="hierarchical",
        title=N_("Hierarchical attention and its context vectors"),
        body=N_("Yang et al. (2016) classify documents with attention at two levels. Inside each sentence, words "
                "are weighed against a learned word context vector u_w; the weighted words make a sentence vector. "
                "Over the document, sentences are weighed against a sentence context vector u_s. These context "
                "vectors are parameters, a learned question such as “which word carries the opinion?”: they have "
                "nothing to do with the seq2seq context vector c, which is a weighted sum."),
        formula=r"u_{it} = \tanh(W_w h_{it} + b_w),\quad \alpha_{it} = \frac{\exp(u_{it}^\top u_w)}"
                r"{\sum_t \exp(u_{it}^\top u_w)},\quad s_i = \sum_t \alpha_{it} h_{it}",
        legend=((r"h_{it}", N_("the vector of word t in sentence i")),
                (r"u_w", N_("the word context vector: learned, the same for every document")),
                (r"\alpha_{it}", N_("the weight of word t within sentence i")),
                (r"s_i", N_("the sentence vector; sentences are weighed the same way against u_s")),
                (r"W_w, b_w", N_("learned weights"))),
        control=Control(N_("Document"), tuple(DOCUMENTS), "negative",
                        {"negative": N_("a rude waiter"), "positive": N_("a friendly waiter")}),
        see=N_("The sentence about the waiter gets most of the sentence weight, and inside it the opinion words "
               "(rude, friendly) the most word weight; the sentences about the table and the bus get little."),
        question=N_("Is u_w computed from the document?"),
        answer=N_("No. u_w is a learned parameter, fixed after training: every document's words are scored against "
                  "the same vector."),
        page=registry.HAN.file,
        record=lambda value: get_mechanism("han").build({"text": DOCUMENTS[value]}),
        figure=f.han_figure,
        page_params=lambda value: {"han_text": DOCUMENTS[value]},
        fits_phone=True,
    ),
    Step(
        key="self-attention",
        title=N_("Self-attention: Q = K = V"),
        body=N_("In self-attention a sequence attends to itself: the queries, the keys and the values all come "
                "from the same tokens X, through three learned projections. Every token scores every token, "
                "including itself, so each token's new vector mixes the tokens it finds relevant, with no "
                "recurrence. Here: a pretrained transformer (all-MiniLM-L6-v2, 6 layers × 12 heads) on one "
                "sentence; each layer shows its head that most attends to the previous token."),
        formula=r"Q = X W^Q,\ K = X W^K,\ V = X W^V,\quad A = \operatorname{softmax}\!\left(\frac{Q K^\top}"
                r"{\sqrt{d_k}}\right),\quad \operatorname{Attention}(Q, K, V) = A V",
        legend=((r"X", N_("the tokens' vectors, one row per token")),
                (r"Q, K, V", N_("queries, keys and values: all three from the same X")),
                (r"W^Q, W^K, W^V", N_("learned projections, one set per head")),
                (r"d_k", N_("the width of a key; dividing by √d_k keeps the scores from growing with it")),
                (r"A", N_("the attention weights, the map drawn here: a row per query token, each row sums to 1"))),
        control=Control(N_("Layer"), tuple(str(i) for i in range(6)), "0", kind="select_slider"),
        see=N_("A square map: rows and columns are the same tokens. In the head shown, most rows put their weight "
               "just left of the diagonal, on the previous token."),
        question=N_("Why is the map square?"),
        answer=N_("Because Q, K and V come from the same sequence: every token is a query once and a key once."),
        page=registry.SELF_ATTENTION.file,
        record=f.self_attention_record,
        figure=f.self_attention_figure,
        page_params=f.self_attention_params,
    ),
    Step(
        key="explanation",
        title=N_("Is attention an explanation?"),
        body=N_("A map of α invites a reading: the output came from where the weight is. Jain & Wallace (2019) "
                "tested that reading on models like Bahdanau's: for many inputs they found another attention α̃, far "
                "from α, that leaves the output the same. Wiegreffe & Pinter (2019) answered that a model need not "
                "be able to use any α: replace this date model's α by equal weights and its output falls apart. So "
                "α shows where a model reads, not always why it answers; the full page sets attribution methods "
                "beside α and scores each one against the date's true fields."),
        formula=r"\max_{\tilde\alpha}\ \operatorname{JSD}(\tilde\alpha, \alpha),"
                r"\quad \text{s.t. } \operatorname{TVD}\big(y(\tilde\alpha), y(\alpha)\big) \le 0.01",
        legend=((r"\alpha", N_("the model's own attention weights")),
                (r"\tilde\alpha", N_("another attention put in its place at one step")),
                (r"\operatorname{JSD}", N_("the Jensen–Shannon divergence: how far apart two distributions are")),
                (r"\operatorname{TVD}", N_("the total variation distance between the outputs' distributions"))),
        control=Control(N_("Test"), tuple(f.TESTS_2019), "adversary", f.TESTS_2019),
        see=N_("Adversarial: α̃ puts its weight on other characters, often on one, and the output stays "
               "2018-05-09. Uniform: with equal weights everywhere the output is no longer the date."),
        question=N_("If another α gives the same output, is α useless?"),
        answer=N_("No: the model still needs some attention (uniform α breaks it), and α̃ had to be searched for. "
                  "It means α alone does not prove why the output came out."),
        page=registry.EXPLANATION.file,
        record=f.explanation_record,
        figure=f.explanation_figure,
        page_params=lambda value: {"ex_test_model": "bahdanau", "ex_test": value},
    ),
    Step(
        key="transformer",
        title=N_("The Transformer's three attentions"),
        body=N_("Vaswani et al. (2017) built a translation model from attention alone. Its encoder lets the input "
                "attend to itself; its decoder lets the output written so far attend to itself, masked so that no "
                "position sees the future; and cross-attention lets each output position query the encoder's "
                "output, whose vectors serve as both keys and values. This small Transformer was trained here on "
                "the same date task as the seq2seq models."),
        formula=r"\text{encoder: } Q = K = V = X_s,\quad \text{decoder: } Q = K = V = X_t,\quad M_{ij} = -\infty\ (j > i),"
                r"\quad \text{cross: } Q = X_t,\; K = V = X_s",
        legend=((r"X_s", N_("the encoder's vectors of the input characters")),
                (r"X_t", N_("the decoder's vectors of the output written so far")),
                (r"M", N_("the mask added to the decoder's scores: the future gets −∞, so weight 0"))),
        control=Control(N_("Attention"), tuple(KINDS), "cross", KINDS),
        see=N_("Cross-attention: a path like Bahdanau's, output digits on input characters. Decoder: nothing "
               "above the diagonal. Encoder: a square map over the input."),
        question=N_("In cross-attention, why are K and V the same?"),
        answer=N_("Both are the encoder's output: the decoder asks where to look (scores against the keys) and reads "
                  "what is there (the values) from the same input positions."),
        page=registry.TRANSFORMER.file,
        record=f.transformer_record,
        figure=f.transformer_figure,
        page_params=f.transformer_params,
    ),
    Step(
        key="general",
        title=N_("The general view: Query, Key, Value"),
        body=N_("Every mechanism on this tour is the same three stages. A query is scored against each key by an "
                "alignment function (dot product, additive, …); the scores are normalised into weights, usually "
                "by a softmax; and the weights average the values that belong to the keys. The mechanisms differ "
                "in where Q, K and V come from, in the score, and in which keys are allowed. The temperature τ "
                "sharpens or flattens the softmax. The neuron view of the page Inside a language model takes the "
                "three stages apart in a real language model."),
        formula=r"\alpha_j = \frac{\exp(\operatorname{score}(q, k_j)/\tau)}{\sum_{j'} \exp(\operatorname{score}(q, k_{j'})/\tau)},"
                r"\quad \operatorname{Attention}(q, K, V) = \sum_j \alpha_j v_j",
        legend=((r"q", N_("the query: what is being looked for")), (r"k_j", N_("key j: what item j offers to be found by")),
                (r"v_j", N_("value j: what item j gives when it is chosen")),
                (r"\operatorname{score}", N_("the alignment function")), (r"\tau", N_("the temperature")),
                (r"\alpha_j", N_("the weight of item j; they sum to 1"))),
        control=Control(N_("Temperature τ"), ("0.1", "0.5", "1", "2", "5"), "1", kind="select_slider"),
        see=N_("At low τ most of the weight goes to cat, the key that scores highest against the query, and the "
               "rest to dog; at high τ the weights approach 1/5 each."),
        question=N_("In Bahdanau's model, what are the query, the keys and the values?"),
        answer=N_("The query is the decoder's state s_{i−1}; the keys and the values are both the encoder's states "
                  "h_j."),
        page=registry.PLAYGROUND.file,
        record=f.qkv_record,
        figure=f.qkv_figure,
        page_params=lambda value: {"mechanism": "qkv-dot", "temperature": value},
    ),
)
