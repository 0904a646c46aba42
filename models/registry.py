"""The mechanism registry: the one seam between the families and everything that shows them.

Every mechanism is one ``Mechanism`` entry in MECHANISMS: its id, name, paper, LaTeX formula,
page, the family package that computes it, the variant of that family, the options it takes
(models/options.py: name, kind, range, default, help) and its builder. The home page lists
the entries; the pages take widget ranges and defaults from the options and call ``build``;
the CLI makes its flags from the options. Builders are "module:function" strings imported
only when used, so listing the catalogue stays cheap.

A builder is ``builder(mechanism, options) -> AttentionRecord``: options hold a typed value
for every declared option (already checked by ``Mechanism.read``), and the family reads its
variant from ``mechanism.variant``. A batch builder takes a list of option dicts. Bad input
raises models.record.InputError with one line.

Training entry points are registered in TRAINERS: ``python -m models.train FAMILY ...``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from models import options as o
from models import pages
from models import registry_translation as translation
from models.entry import Mechanism, Page  # noqa: F401  (Page and Mechanism are read from here too)
from models.pages import *  # noqa: F403  (registry.PAGES, registry.HOME, … are read from here too)
from models.registry_explanation import EXPLANATION_MECHANISMS
from models.registry_lm import LM_MECHANISMS
from models.registry_variants import VARIANT_MECHANISMS
from models.registry_vit import VIT_MECHANISMS
from models.text import N_

EXAMPLE_IMAGE = "docs/examples/scene.png"

_VASWANI = "Vaswani et al. (2017), Attention Is All You Need"


def _encdec(variant: str, name: str, formula: str, summary: str) -> Mechanism:
    # The date model trained here, or with --model-dir a Marian, T5, BART or mBART folder (registry_translation.py).
    return Mechanism(
        id=f"transformer-{variant}", name=name, paper=_VASWANI, formula=formula, page=pages.TRANSFORMER.file,
        summary=summary, family="encdec", variant=variant, builder=translation.BUILDER,
        batch_builder=translation.BATCH_BUILDER, options=(*o.ENCDEC_OPTIONS, *translation.TRANSLATION_OPTIONS),
        example={"text": "9 May 2018"},
    )

# ------------------------------------------------------------------ the catalogue

_QKV_BUILDER = "models.playground.records:qkv_record"
_QKV_PAPER = "Vaswani et al. (2017) §3.2; Luong et al. (2015) §3.1"  # the general view: q, k, v
_BAHDANAU = "Bahdanau, Cho & Bengio (2015), Neural Machine Translation by Jointly Learning to Align and Translate"
_LUONG = "Luong, Pham & Manning (2015), Effective Approaches to Attention-based Neural Machine Translation"
_LUONG_STATE = r",\quad \tilde h_t = \tanh(W_c [c_t; h_t])"
_LOCAL = r",\quad a_t(s) = \operatorname{align}(h_t, \bar h_s)\, e^{-(s - p_t)^2 / 2\sigma^2},\ \sigma = D/2"
_DATE = {"text": "Wednesday, May 9, 2018"}  # one of the training formats (models/seq2seq/task.py)


def _qkv(variant: str, name: str, paper: str, formula: str, summary: str) -> Mechanism:
    return Mechanism(
        id=f"qkv-{variant}", name=name, paper=paper, formula=formula, page=pages.PLAYGROUND.file, summary=summary,
        family="playground", variant=variant, builder=_QKV_BUILDER, options=o.QKV_OPTIONS, input="query",
    )


def _seq2seq(variant: str, name: str, paper: str, formula: str, summary: str, options=o.SEQ2SEQ_OPTIONS) -> Mechanism:
    return Mechanism(
        id=variant, name=name, paper=paper, formula=formula, page=pages.SEQ2SEQ.file, summary=summary, family="seq2seq",
        variant=variant, builder="models.seq2seq.records:seq2seq_record",
        batch_builder="models.seq2seq.records:seq2seq_records", options=options, example=_DATE,
    )


def _feedforward(variant: str, name: str, formula: str, summary: str, paper_note: str = "") -> Mechanism:
    return Mechanism(
        id="feedforward" if variant == "paper" else f"feedforward-{variant}", name=name, paper=_RAFFEL,
        paper_note=paper_note, formula=formula, page=pages.FEEDFORWARD.file, summary=summary, family="feedforward",
        variant=variant, builder="models.feedforward.records:addition_record", options=o.FEEDFORWARD_OPTIONS, input="seed",
    )


_RAFFEL = "Raffel & Ellis (2015), Feed-Forward Networks with Attention Can Solve Some Long-Term Memory Problems"
_SUTSKEVER = "Sutskever, Vinyals & Le (2014), Sequence to Sequence Learning with Neural Networks"
_NO_ATTENTION_OPTIONS = tuple(opt for opt in o.SEQ2SEQ_OPTIONS if opt.name != "window")  # no window: no α
_ONE_CONTEXT = r",\quad s_i = f(s_{i-1}, y_{i-1}, c),\quad s_0 = \tanh(W_s c)"


MECHANISMS: tuple[Mechanism, ...] = (
    _qkv("dot", N_("Dot-product score"), _QKV_PAPER, r"\operatorname{score}(s, h) = s^\top h",
         N_("A query scored against each key by their dot product.")),
    _qkv("scaled-dot", N_("Scaled dot-product score"), "Vaswani et al. (2017), Attention Is All You Need",
         r"\operatorname{score}(s, h) = \frac{s^\top h}{\sqrt{d}}",
         N_("The dot product divided by √d, so scores do not grow with the width d.")),
    _qkv("general", N_("General (bilinear) score"), _LUONG.replace("Neural Machine Translation", "NMT"),
         r"\operatorname{score}(s, h) = s^\top W_a\, h",
         N_("A bilinear form: W_a decides which query features match which key features.")),
    _qkv("concat", N_("Concat score"), _LUONG.replace("Neural Machine Translation", "NMT"),
         r"\operatorname{score}(s, h) = v_a^\top \tanh\!\left(W_a [s; h]\right)",
         N_("A one-layer network over the concatenated query and key.")),
    _qkv("additive", N_("Additive score"), _BAHDANAU, r"\operatorname{score}(s, h) = v^\top \tanh(W s + U h)",
         N_("Bahdanau's additive score: query and key projected, added, squashed, read out.")),
    _qkv("location", N_("Location score"), _LUONG.replace("Neural Machine Translation", "NMT"),
         r"a = \operatorname{softmax}(W_a s)",
         N_("Scores from the query alone, one per position: the keys' contents are ignored.")),
    _qkv("cosine", N_("Cosine score"), "Graves, Wayne & Danihelka (2014), Neural Turing Machines (content addressing)",
         r"\operatorname{score}(s, h) = \frac{s^\top h}{\lVert s\rVert\,\lVert h\rVert}",
         N_("The angle between query and key, blind to their lengths.")),
    _seq2seq("bahdanau", N_("Bahdanau (additive)"), _BAHDANAU,
             r"e_{ij} = v_a^\top \tanh(W_a s_{i-1} + U_a h_j),\quad \alpha_{ij} = \operatorname{softmax}_j(e_{ij})",
             N_("Scores each input character from the previous decoder state s_{i−1}; the context feeds the next state.")),
    _seq2seq("luong-dot", N_("Luong global, dot"), _LUONG, r"\operatorname{score}(h_t, \bar h_s) = h_t^\top \bar h_s" + _LUONG_STATE,
             N_("Global attention scored from the current state h_t by a plain dot product.")),
    _seq2seq("luong-general", N_("Luong global, general"), _LUONG,
             r"\operatorname{score}(h_t, \bar h_s) = h_t^\top W_a \bar h_s" + _LUONG_STATE,
             N_("Global attention with a learned bilinear score.")),
    _seq2seq("luong-concat", N_("Luong global, concat"), _LUONG,
             r"\operatorname{score}(h_t, \bar h_s) = v_a^\top \tanh(W_a [h_t; \bar h_s])" + _LUONG_STATE,
             N_("Global attention scored by a one-layer network over the state and each input state.")),
    _seq2seq("luong-location", N_("Luong global, location"), _LUONG, r"a_t = \operatorname{softmax}(W_a h_t)" + _LUONG_STATE,
             N_("Weights from the decoder state alone, one per input position: the input's content is never looked at.")),
    _seq2seq("local-m", N_("Luong local-m (monotonic)"), _LUONG, r"p_t = t" + _LOCAL,
             N_("A window of ±D around p_t = t: right when input and output run in the same order, blind otherwise.")),
    _seq2seq("local-p", N_("Luong local-p (predictive)"), _LUONG,
             r"p_t = S \cdot \operatorname{sigmoid}(v_p^\top \tanh(W_p h_t))" + _LOCAL,
             N_("A window of ±D around a predicted centre p_t: it learns where to look, then looks closely.")),
    _seq2seq("no-attention", N_("No attention (last state)"), _SUTSKEVER, r"c = h_T" + _ONE_CONTEXT,
             N_("No attention: one context vector c = h_T, the last input character's state, for every output step."),
             _NO_ATTENTION_OPTIONS),
    _seq2seq("no-attention-mean", N_("No attention (mean of states)"), _SUTSKEVER,
             r"c = \tfrac{1}{T} \textstyle\sum_j h_j" + _ONE_CONTEXT,
             N_("No attention: one context vector c, the mean of the input's states, for every output step."),
             _NO_ATTENTION_OPTIONS),
    Mechanism(
        id="sentence-alignment",
        name=N_("Sentence-pair alignment with pretrained embeddings"),
        paper="Luong, Pham & Manning (2015)",
        paper_note=N_("their scores and local windows, over the contextual vectors of all-MiniLM-L6-v2"),
        formula=r"\alpha_{ts} = \operatorname{softmax}_s\!\left(\frac{\operatorname{score}(x_t, y_s)}{\tau}\right),"
        r"\quad \operatorname{score} \in \{x^\top y,\ \tfrac{x^\top y}{\sqrt{d}},\ \cos(x, y)\},\quad p_t = t\,S/T",
        page=pages.SENTENCE_ALIGNMENT.file,
        summary=N_("Each token of sentence 1 scored against each token of sentence 2 by pretrained contextual vectors: no trained parameters."),
        family="transformer", variant="alignment", builder="models.transformer.alignment:alignment_record",
        options=(
            o.TEXT.with_(max_chars=2_000, required=False, help=N_("sentence 1 (rows)")),
            o.TEXT_PAIR.with_(max_chars=2_000, help=N_("sentence 2 (columns)")),
            o.Option("score", "choice", default="cosine", choices=(N_("dot"), N_("scaled-dot"), N_("cosine")), label=N_("Score"),
                     help=N_("parameter-free score")),
            o.WINDOW.with_(default=None, low=0, high=20, label=N_("Half-width D"),
                           help=N_("local window half-width D around p_t = t·S/T (default: global)")),
            o.TEMPERATURE.with_(default=None, low=0.01, high=5.0, step=0.01,
                                help=N_("softmax temperature τ (default: 1, or 0.05 for cosine)")),
            o.MODEL_DIR,
        ),
        example={"text": "The cat sat on the mat", "text_pair": "A cat was sitting on the rug"},
    ),
    Mechanism(
        id="soft",
        name=N_("Soft (deterministic) attention over an image"),
        paper="Xu et al. (2015), Show, Attend and Tell (§4.2)",
        formula=r"e_{ti} = v^\top \tanh(W [h_{t-1}; E y_{t-1}] + U a_i),\quad \alpha_t = \operatorname{softmax}(e_t),\quad z_t = \beta_t \textstyle\sum_i \alpha_{ti} a_i",
        page=pages.IMAGES.file,
        summary=N_("A captioner reads the α-weighted average of an 8×8 grid of image features for every word it writes."),
        family="captioner", variant="soft", builder="models.captioner.records:caption_record",
        options=(o.IMAGE_FILE, o.CAPTION_TEMPERATURE.with_(label=N_("Temperature τ"))), input="image",
        example={"image": EXAMPLE_IMAGE},
    ),
    Mechanism(
        id="hard",
        name=N_("Hard (stochastic) attention over an image"),
        paper="Xu et al. (2015), Show, Attend and Tell (§4.1)",
        formula=r"s_t \sim \operatorname{Categorical}(\alpha_t),\quad z_t = a_{s_t};\quad \nabla \approx \nabla \log p(y \mid s) + \lambda_r (\log p(y \mid s) - b)\, \nabla \log p(s) + \lambda_e \nabla H[s]",
        page=pages.IMAGES.file,
        summary=N_("The captioner reads one grid cell drawn from α per word, trained with REINFORCE; many draws converge to α."),
        family="captioner", variant="hard", builder="models.captioner.records:caption_record",
        options=(
            o.IMAGE_FILE, o.CAPTION_TEMPERATURE,
            o.SAMPLES.with_(default=20, low=0, label=N_("Samples N per word"),
                            help=N_("extra locations drawn from α for every word (0: none)")),
            o.SEED.with_(help=N_("seeds the decoder's location draws and the extra samples")),
            o.MODE.with_(default="sample", choices=(N_("sample"), N_("argmax")), label=N_("Hard decoder reads"),
                         help=N_("how the decoder picks its cell: a sample from α, or the argmax")),
        ),
        input="image", example={"image": EXAMPLE_IMAGE},
    ),
    Mechanism(
        id="patch-self-attention",
        name=N_("Self-attention over photo patches (no learned weights)"),
        paper="Vaswani et al. (2017) §3.2.1",
        paper_note=N_("with Q = K = V = the patches' features"),
        formula=r"\alpha_{qj} = \operatorname{softmax}_j\!\left(\frac{x_q^\top x_j}{\sqrt{d}\,\tau}\right),\quad x_j = [\text{mean colour}_j, \text{position}_j]",
        page=pages.IMAGES.file,
        summary=N_("One patch of any photo attends to all patches by colour and position similarity: no training, no semantics."),
        family="captioner", builder="models.captioner.patches:patch_record",
        options=(
            o.IMAGE_FILE,
            o.Option("patch", "int", default=32, low=4, high=64, step=4, label=N_("Patch size (px)"), help=N_("patch size in px")),
            o.Option("query_patch", "pair", default=(0, 0), help=N_("the query patch as row,col (e.g. 2,3)")),
            o.TEMPERATURE.with_(default=0.02, low=0.01, high=2.0, step=0.01),  # 0.1 gives nearly uniform α (pages/images.py)
            o.MODE, o.SAMPLES, o.SEED,
        ),
        input="image", example={"image": EXAMPLE_IMAGE},
    ),
    _feedforward("paper", N_("Feed-forward attention (paper form)"),
                 r"e_t = \tanh(W_{hc} h_t + b_{hc}),\quad \alpha = \operatorname{softmax}(e),\quad c = \textstyle\sum_t \alpha_t h_t",
                 N_("Each step scores itself, with no query: a tanh-bounded score, so α stays nearly flat on long sequences.")),
    _feedforward("unbounded", N_("Feed-forward attention (unbounded score)"),
                 r"e_t = w^\top h_t + b,\quad \alpha = \operatorname{softmax}(e),\quad c = \textstyle\sum_t \alpha_t h_t",
                 N_("The same network with a linear score: α can put nearly all its mass on the two marked steps."),
                 N_("with the tanh removed from the score")),
    Mechanism(
        id="han",
        name=N_("Hierarchical attention with context vectors"),
        paper="Yang et al. (2016), Hierarchical Attention Networks for Document Classification",
        formula=r"u_{it} = \tanh(W_w h_{it} + b_w),\quad \alpha_{it} = \frac{\exp(u_{it}^\top u_w)}{\sum_t \exp(u_{it}^\top u_w)},"
        r"\quad s_i = \textstyle\sum_t \alpha_{it} h_{it};\quad \alpha_i = \operatorname{softmax}_i(u_i^\top u_s),\quad v = \textstyle\sum_i \alpha_i h_i",
        page=pages.HAN.file,
        summary=N_("Word attention inside each sentence, then sentence attention over the document, each against a learned context vector."),
        family="han", builder="models.han.records:han_record", batch_builder="models.han.records:han_records",
        options=(o.TEXT.with_(max_chars=20_000, help=N_("a document of a few sentences")),),
        example={"text": "We went there on a Friday. The waiter was rude and slow. We took the bus home."},
    ),
    Mechanism(
        id="transformer",
        name=N_("Scaled dot-product multi-head self-attention"),
        paper="Vaswani et al. (2017), Attention Is All You Need",
        formula=r"\operatorname{head}_i = \operatorname{softmax}\!\left(\frac{Q_i K_i^\top}{\sqrt{d_k}}\right) V_i,"
        r"\quad Q_i = X W_i^Q,\; K_i = X W_i^K,\; V_i = X W_i^V",
        page=pages.SELF_ATTENTION.file,
        summary=N_("Every token of a pretrained transformer (all-MiniLM-L6-v2) attends to every token: 6 layers × 12 heads."),
        family="transformer", variant="self-attention", builder="models.transformer.records:transformer_record",
        batch_builder="models.transformer.records:transformer_records",
        record_size="models.transformer.records:transformer_record_size",
        options=(o.TEXT.with_(max_chars=20_000), o.TEXT_PAIR.with_(max_chars=20_000), o.MODEL_DIR),
        example={"text": "The cat sat on the mat."},
    ),
)

MECHANISMS = MECHANISMS + (
    Mechanism(
        id="transformer-rollout",
        name=N_("Attention rollout and attention flow"),
        paper="Abnar & Zuidema (2020), Quantifying Attention Flow in Transformers",
        formula=r"\tilde A_l = \operatorname{norm}\!\left(\tfrac12 A_l + \tfrac12 I\right),\quad "
        r"R = \tilde A_L \cdots \tilde A_1;\quad \operatorname{flow}(j \to i) = \operatorname{maxflow}_{\tilde A}(x_j, h^L_i)",
        page=pages.SELF_ATTENTION.file,
        summary=N_("How much of each top-layer token traces back to each input token, through every layer's heads and the residual."),
        family="transformer", variant="rollout", builder="models.transformer.records:rollout_record",
        options=(
            o.TEXT.with_(max_chars=20_000), o.TEXT_PAIR.with_(max_chars=20_000),
            o.Option("method", "choice", default="rollout", choices=(N_("rollout"), N_("flow")), label=N_("Method"),
                     help=N_("rollout (product of the layers) or flow (max-flow; up to 40 tokens)")),
            o.Option("fusion", "choice", default="mean", choices=(N_("mean"), N_("max"), N_("min")), label=N_("Head fusion"),
                     help=N_("how each layer's heads are fused before the residual is added")),
            o.MODEL_DIR,
        ),
        example={"text": "The cat sat on the mat."},
    ),
    _encdec("encoder", N_("Transformer encoder self-attention"),
            r"\alpha^{enc} = \operatorname{softmax}\!\left(\frac{Q_s K_s^\top}{\sqrt{d_k}}\right)",
            N_("Inside the source: every input character attends to every input character.")),
    _encdec("decoder", N_("Transformer masked decoder self-attention"),
            r"\alpha^{dec} = \operatorname{softmax}\!\left(\frac{Q_t K_t^\top}{\sqrt{d_k}} + M\right),\ M_{ij} = -\infty \text{ for } j > i",
            N_("Inside the target: each output character attends only to the characters already written.")),
    _encdec("cross", N_("Transformer encoder–decoder (cross) attention"),
            r"\alpha^{cross} = \operatorname{softmax}\!\left(\frac{Q_t K_s^\top}{\sqrt{d_k}}\right)",
            N_("Between them: each output character's query against the encoded input characters.")),
    Mechanism(
        id="induction",
        name=N_("Induction heads in an attention-only transformer"),
        paper="Olsson et al. (2022), In-context Learning and Induction Heads; Elhage et al. (2021)",
        formula=r"\text{prefix matching}: \ \alpha_{t \to s+1} \text{ where } x_s = x_t,\ s < t",
        page=pages.INDUCTION.file,
        summary=N_("A two-layer attention-only transformer learns to find the earlier copy of the current token and copy what came next."),
        family="induction", builder="models.induction.records:induction_record",
        options=(
            o.TEXT.with_(required=False, max_chars=2_000,
                         help=N_("a token sequence from the model's vocabulary (default: a generated [BOS] + r + r)")),
            o.SEED.with_(help=N_("seed of the generated repeated sequence")),
            o.Option("length", "int", default=63, low=3, high=63, step=2, label=N_("Length"),
                     help=N_("length of the generated [BOS] + r + r, [BOS] included: 1 + 2r tokens, so odd "
                        "(an even length gives the odd one below it)")),
            o.Option("step", "int", low=0, high=1_000_000, help=N_("a training-step snapshot instead of the final weights")),
        ),
        example={"seed": 0},
    ),
)

MECHANISMS = MECHANISMS + LM_MECHANISMS + (  # models/registry_lm.py
    Mechanism(
        id="corpus",
        name=N_("Head statistics over a corpus"),
        paper="Clark et al. (2019), What Does BERT Look At?; Yeh et al. (2023), AttentionViz",
        formula=r"\bar s_{l,h} = \tfrac{1}{N} \textstyle\sum_{n=1}^{N} s\big(\alpha^{(l,h)}(x_n)\big),\quad "
        r"s \in \{H(\alpha),\ \text{previous},\ \text{duplicate},\ \text{induction},\ \text{distance}, \dots\}",
        page=pages.CORPUS.file,
        summary=N_("Every head's attention statistics (entropy, previous-token, duplicate and induction scores, "
                   "shares on special tokens, distance) as mean and spread over many texts."),
        family="corpus", builder="models.corpus.cli:corpus_record",
        options=(
            o.Option("corpus", "path", help=N_("a UTF-8 text file, one text per line, or a CSV with a column "
                                               "(default: the bundled sample of 60 sentences)")),
            o.Option("column", "text", max_chars=200, help=N_("the CSV column that holds the texts")),
            o.Option("model", "choice", default="transformer", choices=("transformer", "lm"), label=N_("Model"),
                     help=N_("transformer: MiniLM or a BERT-family folder; lm: the GPT trained here or a GPT-2/Llama "
                             "folder")),
            o.MODEL_DIR,
            o.Option("limit", "int", low=1, high=10**9, help=N_("read at most this many texts")),
            o.Option("max_batch_mb", "float", low=1, high=65_536,
                     help=N_("the attention maps one batch holds at most, in MB (default 256)")),
        ),
        input="corpus", example={"model": "lm", "limit": 8},
    ),
)

MECHANISMS = MECHANISMS + VIT_MECHANISMS  # models/registry_vit.py

MECHANISMS = MECHANISMS + VARIANT_MECHANISMS  # models/registry_variants.py

MECHANISMS = MECHANISMS + EXPLANATION_MECHANISMS  # models/registry_explanation.py

TRAINERS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "seq2seq": ("models.seq2seq.train", "character-level date normalisation with Bahdanau/Luong attention"),
    "captioner": ("models.captioner.train", "Show, Attend and Tell on the scene world, soft or hard attention"),
    "feedforward": ("models.feedforward.train", "feed-forward attention (Raffel & Ellis) on the addition problem"),
    "han": ("models.han.train", "hierarchical attention network (Yang et al.) on generated reviews"),
    "encdec": ("models.encdec.train", "a Transformer encoder–decoder (Vaswani et al.) on the date task"),
    "induction": ("models.induction.train", "a two-layer attention-only transformer on repeated sequences"),
    "lm": ("models.lm.train", "a small GPT-2 on the Python documentation (Debian's python3-doc)"),
    "variants": ("models.variants.train", "tiny decoders, one per attention variant, on MQAR and induction"),
})

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
        raise KeyError(f"unknown mechanism {mechanism_id!r}; known: {', '.join(mechanism_ids())}") from None


def mechanisms_on_page(page_file: str) -> list[Mechanism]:
    """Returns the mechanisms shown on one page, in catalogue order."""
    return [m for m in MECHANISMS if m.page == page_file]


def mechanism_of(family: str, variant: str | None = None) -> Mechanism:
    """Returns the entry of a family's variant (the inverse of Mechanism.family/variant)."""
    for m in MECHANISMS:
        if m.family == family and m.variant == variant:
            return m
    raise KeyError(f"no mechanism for family {family!r}, variant {variant!r}")


def all_options() -> dict[str, o.Option]:
    """Returns {option name: its first declaration} over every mechanism (the CLI's flags)."""
    out: dict[str, o.Option] = {}
    for m in MECHANISMS:
        for option in m.options:
            out.setdefault(option.name, option)
    return out



def example_options(mechanism: Mechanism) -> dict:
    """Returns a mechanism's registry example as build options, its example image's path made
    absolute (examples name files inside the repository)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    return {k: str(root / v) if k in ("image", "model_dir") else v for k, v in mechanism.example.items()}


def warm(page_file: str) -> list[str]:
    """Builds every mechanism of a page once on its example input; returns the ids that built.

    The first use of a variant in a process loads its weights and its compiled executable (from
    JAX's cache on disk, or compiles it): 20–30 ms with a warm disk cache, about 0.7 s without.
    Warming a page's variants ahead (ui.widgets.warm_in_background) moves that cost off the
    first switch between them. A variant that fails here is skipped: its page reports the error
    in one line when it is used.
    """
    built = []
    for mechanism in mechanisms_on_page(page_file):
        try:
            mechanism.build(example_options(mechanism))
        except Exception:  # noqa: BLE001 (the page reports it when the variant is used)
            continue
        built.append(mechanism.id)
    return built
