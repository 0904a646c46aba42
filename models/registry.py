"""The mechanism registry: one entry per mechanism, read by the home page, the pages and the CLI.

Adding a mechanism is one ``Mechanism`` entry here plus its code. Builders are named as
"module:function" strings and imported only when used, so listing the catalogue stays cheap.

A builder takes a dict of options (the CLI's flags, e.g. {"text": ..., "seed": ...}) and
returns one AttentionRecord; it raises models.record.InputError for bad user input.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from models.record import AttentionRecord


@dataclass(frozen=True)
class Page:
    """One page of the app: its file in pages/, its title and its URL path (= the file stem)."""

    file: str
    title: str
    icon: str
    default: bool = False

    @property
    def url_path(self) -> str:
        return self.file.removeprefix("pages/").removesuffix(".py")


@dataclass(frozen=True)
class Mechanism:
    """One attention mechanism of the catalogue.

    input_field: the option one line of a CLI --input-file fills ("text", "image", "query").
    """

    id: str
    name: str
    paper: str
    formula: str  # LaTeX, rendered with st.latex
    page: str  # a Page.file
    summary: str
    builder: str  # "module:function", (options) -> AttentionRecord
    input_field: str = "text"
    batch_builder: str | None = None  # "module:function", (list of options) -> list of records

    def build(self, options: Mapping[str, Any]) -> AttentionRecord:
        """Returns the record for one input."""
        return _resolve(self.builder)(dict(options))

    def build_many(self, options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
        """Returns one record per input, batched where the mechanism supports it."""
        if self.batch_builder:
            return _resolve(self.batch_builder)([dict(o) for o in options_list])
        return [self.build(o) for o in options_list]


def _resolve(path: str) -> Callable:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


HOME = Page("pages/home.py", "Home", ":material/home:", default=True)
PLAYGROUND = Page("pages/playground.py", "Playground: Q, K, V", ":material/tune:")
SELF_ATTENTION = Page("pages/self_attention.py", "Self-attention (MiniLM)", ":material/hub:")
SENTENCE_ALIGNMENT = Page("pages/sentence_alignment.py", "Sentence alignment (MiniLM)", ":material/compare_arrows:")
FEEDFORWARD = Page("pages/feedforward.py", "Feed-forward attention", ":material/timeline:")
SEQ2SEQ = Page("pages/seq2seq.py", "Seq2seq alignment", ":material/translate:")
HAN = Page("pages/han.py", "Hierarchical attention", ":material/account_tree:")
IMAGES = Page("pages/images.py", "Hard vs soft attention (images)", ":material/image:")

PAGES: tuple[Page, ...] = (
    HOME, PLAYGROUND, SEQ2SEQ, SENTENCE_ALIGNMENT, IMAGES, FEEDFORWARD, HAN, SELF_ATTENTION
)  # roughly the order of the literature

_QKV_BUILDER = "models.playground.records:qkv_record"
_QKV_PAPER = "The general view: Vaswani et al. (2017) §3.2; Luong et al. (2015) §3.1"

MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism(
        id="qkv-dot",
        name="Dot-product score",
        paper=_QKV_PAPER,
        formula=r"\operatorname{score}(s, h) = s^\top h",
        page=PLAYGROUND.file,
        summary="A query scored against each key by their dot product.",
        builder=_QKV_BUILDER,
        input_field="query",
    ),
    Mechanism(
        id="qkv-scaled-dot",
        name="Scaled dot-product score",
        paper="Vaswani et al. (2017), Attention Is All You Need",
        formula=r"\operatorname{score}(s, h) = \frac{s^\top h}{\sqrt{d}}",
        page=PLAYGROUND.file,
        summary="The dot product divided by √d, so scores do not grow with the width d.",
        builder=_QKV_BUILDER,
        input_field="query",
    ),
    Mechanism(
        id="qkv-general",
        name="General (bilinear) score",
        paper="Luong, Pham & Manning (2015), Effective Approaches to Attention-based NMT",
        formula=r"\operatorname{score}(s, h) = s^\top W_a\, h",
        page=PLAYGROUND.file,
        summary="A bilinear form: W_a decides which query features match which key features.",
        builder=_QKV_BUILDER,
        input_field="query",
    ),
    Mechanism(
        id="qkv-concat",
        name="Concat score",
        paper="Luong, Pham & Manning (2015), Effective Approaches to Attention-based NMT",
        formula=r"\operatorname{score}(s, h) = v_a^\top \tanh\!\left(W_a [s; h]\right)",
        page=PLAYGROUND.file,
        summary="A one-layer network over the concatenated query and key.",
        builder=_QKV_BUILDER,
        input_field="query",
    ),
    Mechanism(
        id="qkv-additive",
        name="Additive score",
        paper="Bahdanau, Cho & Bengio (2015), Neural Machine Translation by Jointly Learning to Align and Translate",
        formula=r"\operatorname{score}(s, h) = v^\top \tanh(W s + U h)",
        page=PLAYGROUND.file,
        summary="Bahdanau's additive score: query and key projected, added, squashed, read out.",
        builder=_QKV_BUILDER,
        input_field="query",
    ),
    Mechanism(
        id="qkv-location",
        name="Location score",
        paper="Luong, Pham & Manning (2015), Effective Approaches to Attention-based NMT",
        formula=r"a = \operatorname{softmax}(W_a s)",
        page=PLAYGROUND.file,
        summary="Scores from the query alone, one per position: the keys' contents are ignored.",
        builder=_QKV_BUILDER,
        input_field="query",
    ),
    Mechanism(
        id="qkv-cosine",
        name="Cosine score",
        paper="Graves, Wayne & Danihelka (2014), Neural Turing Machines (content addressing)",
        formula=r"\operatorname{score}(s, h) = \frac{s^\top h}{\lVert s\rVert\,\lVert h\rVert}",
        page=PLAYGROUND.file,
        summary="The angle between query and key, blind to their lengths.",
        builder=_QKV_BUILDER,
        input_field="query",
    ),
    Mechanism(
        id="feedforward",
        name="Feed-forward attention (paper form)",
        paper="Raffel & Ellis (2015), Feed-Forward Networks with Attention Can Solve Some Long-Term Memory Problems",
        formula=r"e_t = \tanh(W_{hc} h_t + b_{hc}),\quad \alpha = \operatorname{softmax}(e),\quad c = \textstyle\sum_t \alpha_t h_t",
        page=FEEDFORWARD.file,
        summary="Each step scores itself, with no query: a tanh-bounded score, so α stays nearly flat on long sequences.",
        builder="models.feedforward.model:addition_record",
        input_field="seed",
    ),
    Mechanism(
        id="feedforward-unbounded",
        name="Feed-forward attention (unbounded score)",
        paper="Raffel & Ellis (2015), with the tanh removed from the score",
        formula=r"e_t = w^\top h_t + b,\quad \alpha = \operatorname{softmax}(e),\quad c = \textstyle\sum_t \alpha_t h_t",
        page=FEEDFORWARD.file,
        summary="The same network with a linear score: α can put nearly all its mass on the two marked steps.",
        builder="models.feedforward.model:addition_record",
        input_field="seed",
    ),
    Mechanism(
        id="transformer",
        name="Scaled dot-product multi-head self-attention",
        paper="Vaswani et al. (2017), Attention Is All You Need",
        formula=r"\operatorname{head}_i = \operatorname{softmax}\!\left(\frac{Q_i K_i^\top}{\sqrt{d_k}}\right) V_i,"
        r"\quad Q_i = X W_i^Q,\; K_i = X W_i^K,\; V_i = X W_i^V",
        page=SELF_ATTENTION.file,
        summary="Every token of a pretrained transformer (all-MiniLM-L6-v2) attends to every token: 6 layers × 12 heads.",
        builder="models.transformer.records:transformer_record",
        batch_builder="models.transformer.records:transformer_records",
        input_field="text",
    ),
)

_SEQ2SEQ_BUILDER = "models.seq2seq.records:seq2seq_record"
_SEQ2SEQ_BATCH = "models.seq2seq.records:seq2seq_records"
_BAHDANAU = "Bahdanau, Cho & Bengio (2015), Neural Machine Translation by Jointly Learning to Align and Translate"
_LUONG = "Luong, Pham & Manning (2015), Effective Approaches to Attention-based Neural Machine Translation"
_LUONG_STATE = r",\quad \tilde h_t = \tanh(W_c [c_t; h_t])"
_LOCAL = r",\quad a_t(s) = \operatorname{align}(h_t, \bar h_s)\, e^{-(s - p_t)^2 / 2\sigma^2},\ \sigma = D/2"


def _seq2seq(id: str, name: str, paper: str, formula: str, summary: str) -> Mechanism:
    return Mechanism(
        id=id, name=name, paper=paper, formula=formula, page=SEQ2SEQ.file, summary=summary,
        builder=_SEQ2SEQ_BUILDER, batch_builder=_SEQ2SEQ_BATCH,
    )


MECHANISMS = MECHANISMS + (
    _seq2seq(
        "bahdanau", "Bahdanau (additive)", _BAHDANAU,
        r"e_{ij} = v_a^\top \tanh(W_a s_{i-1} + U_a h_j),\quad \alpha_{ij} = \operatorname{softmax}_j(e_{ij})",
        "Scores each input character from the previous decoder state s_{i−1}; the context feeds the next state.",
    ),
    _seq2seq(
        "luong-dot", "Luong global, dot", _LUONG,
        r"\operatorname{score}(h_t, \bar h_s) = h_t^\top \bar h_s" + _LUONG_STATE,
        "Global attention scored from the current state h_t by a plain dot product.",
    ),
    _seq2seq(
        "luong-general", "Luong global, general", _LUONG,
        r"\operatorname{score}(h_t, \bar h_s) = h_t^\top W_a \bar h_s" + _LUONG_STATE,
        "Global attention with a learned bilinear score.",
    ),
    _seq2seq(
        "luong-concat", "Luong global, concat", _LUONG,
        r"\operatorname{score}(h_t, \bar h_s) = v_a^\top \tanh(W_a [h_t; \bar h_s])" + _LUONG_STATE,
        "Global attention scored by a one-layer network over the state and each input state.",
    ),
    _seq2seq(
        "luong-location", "Luong global, location", _LUONG,
        r"a_t = \operatorname{softmax}(W_a h_t)" + _LUONG_STATE,
        "Weights from the decoder state alone, one per input position: the input's content is never looked at.",
    ),
    _seq2seq(
        "local-m", "Luong local-m (monotonic)", _LUONG,
        r"p_t = t" + _LOCAL,
        "A window of ±D around p_t = t: right when input and output run in the same order, blind otherwise.",
    ),
    _seq2seq(
        "local-p", "Luong local-p (predictive)", _LUONG,
        r"p_t = S \cdot \operatorname{sigmoid}(v_p^\top \tanh(W_p h_t))" + _LOCAL,
        "A window of ±D around a predicted centre p_t: it learns where to look, then looks closely.",
    ),
    Mechanism(
        id="han",
        name="Hierarchical attention with context vectors",
        paper="Yang et al. (2016), Hierarchical Attention Networks for Document Classification",
        formula=r"u_{it} = \tanh(W_w h_{it} + b_w),\quad \alpha_{it} = \frac{\exp(u_{it}^\top u_w)}{\sum_t \exp(u_{it}^\top u_w)},"
        r"\quad s_i = \textstyle\sum_t \alpha_{it} h_{it};\quad \alpha_i = \operatorname{softmax}_i(u_i^\top u_s),\quad v = \textstyle\sum_i \alpha_i h_i",
        page=HAN.file,
        summary="Word attention inside each sentence, then sentence attention over the document, each against a learned context vector.",
        builder="models.han.model:han_record",
        batch_builder="models.han.model:han_records",
        input_field="text",
    ),
)

MECHANISMS = MECHANISMS + (
    Mechanism(
        id="sentence-alignment",
        name="Sentence-pair alignment with pretrained embeddings",
        paper="Luong, Pham & Manning (2015) scores and local windows over the contextual vectors of all-MiniLM-L6-v2",
        formula=r"\alpha_{ts} = \operatorname{softmax}_s\!\left(\frac{\operatorname{score}(x_t, y_s)}{\tau}\right),"
        r"\quad \operatorname{score} \in \{x^\top y,\ \tfrac{x^\top y}{\sqrt{d}},\ \cos(x, y)\},\quad p_t = t\,S/T",
        page=SENTENCE_ALIGNMENT.file,
        summary="Each token of sentence 1 scored against each token of sentence 2 by pretrained contextual vectors: no trained parameters.",
        builder="models.transformer.alignment:alignment_record",
        input_field="text",
    ),
)

# Issue 5: hard vs soft attention on images (models/captioner/, models/captioner/patches.py).
MECHANISMS = MECHANISMS + (
    Mechanism(
        id="soft",
        name="Soft (deterministic) attention over an image",
        paper="Xu et al. (2015), Show, Attend and Tell (§4.2)",
        formula=r"e_{ti} = v^\top \tanh(W [h_{t-1}; E y_{t-1}] + U a_i),\quad \alpha_t = \operatorname{softmax}(e_t),\quad z_t = \beta_t \textstyle\sum_i \alpha_{ti} a_i",
        page=IMAGES.file,
        summary="A captioner reads the α-weighted average of an 8×8 grid of image features for every word it writes.",
        builder="models.captioner.records:soft_record",
        input_field="image",
    ),
    Mechanism(
        id="hard",
        name="Hard (stochastic) attention over an image",
        paper="Xu et al. (2015), Show, Attend and Tell (§4.1)",
        formula=r"s_t \sim \operatorname{Categorical}(\alpha_t),\quad z_t = a_{s_t};\quad \nabla \approx \nabla \log p(y \mid s) + \lambda_r (\log p(y \mid s) - b)\, \nabla \log p(s) + \lambda_e \nabla H[s]",
        page=IMAGES.file,
        summary="The captioner reads one grid cell drawn from α per word, trained with REINFORCE; many draws converge to α.",
        builder="models.captioner.records:hard_record",
        input_field="image",
    ),
    Mechanism(
        id="patch-self-attention",
        name="Self-attention over photo patches (no learned weights)",
        paper="Vaswani et al. (2017) §3.2.1 with Q = K = V = patch features",
        formula=r"\alpha_{qj} = \operatorname{softmax}_j\!\left(\frac{x_q^\top x_j}{\sqrt{d}\,\tau}\right),\quad x_j = [\text{mean colour}_j, \text{position}_j]",
        page=IMAGES.file,
        summary="One patch of any photo attends to all patches by colour and position similarity: no training, no semantics.",
        builder="models.captioner.patches:patch_record",
        input_field="image",
    ),
)

_BY_ID = {m.id: m for m in MECHANISMS}
assert len(_BY_ID) == len(MECHANISMS), "mechanism ids must be unique"


def mechanism_ids() -> list[str]:
    """Returns every registered mechanism id, in catalogue order."""
    return [m.id for m in MECHANISMS]


def get_mechanism(mechanism_id: str) -> Mechanism:
    """Returns the entry for an id; raises KeyError naming the known ids."""
    try:
        return _BY_ID[mechanism_id]
    except KeyError:
        raise KeyError(
            f"unknown mechanism {mechanism_id!r}; known: {', '.join(mechanism_ids())}"
        ) from None


def mechanisms_on_page(page_file: str) -> list[Mechanism]:
    """Returns the mechanisms shown on one page."""
    return [m for m in MECHANISMS if m.page == page_file]
