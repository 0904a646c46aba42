"""The registry's entries for attention after 2017 (issue 57 §1): one Mechanism per variant, built by
models/variants/records.py on the Playground's query, keys and values.

models/registry.py appends VARIANT_MECHANISMS to MECHANISMS; the entries follow the rules written there. Each
takes the Playground's options (models/options.py QKV_OPTIONS) and its own, declared here.
"""

from __future__ import annotations

from models import options as o
from models import pages
from models.entry import Mechanism
from models.text import N_

_BUILDER = "models.variants.records:variant_record"
_SCORES = r"s_j = \frac{q^\top k_j}{\sqrt d}"

NUM_HEADS = o.Option(
    "num_heads", "int", default=4, low=1, high=8, step=1, label=N_("Query heads H"), help=N_("how many query heads")
)
KV_HEADS = o.Option(
    "kv_heads",
    "int",
    default=2,
    low=1,
    high=8,
    step=1,
    label=N_("Key/value heads K"),
    help=N_("how many key/value heads the query heads share (K divides H)"),
)
SLIDING_WINDOW = o.Option(
    "sliding_window",
    "int",
    default=3,
    low=1,
    high=32,
    step=1,
    label=N_("Sliding window W"),
    help=N_("a local layer's query reads the W most recent keys, itself included"),
)
NUM_LAYERS = o.Option(
    "num_layers",
    "int",
    default=6,
    low=1,
    high=12,
    step=1,
    label=N_("Layers"),
    help=N_("how many layers of the local/global pattern to show"),
)
LOCAL_PER_GLOBAL = o.Option(
    "local_per_global",
    "int",
    default=5,
    low=1,
    high=8,
    step=1,
    label=N_("Local layers per global layer"),
    help=N_("sliding-window layers before each global layer (Gemma 3: 5)"),
)
ROPE_FRACTION = o.Option(
    "rope_fraction",
    "float",
    default=0.75,
    low=0.0,
    high=1.0,
    step=0.125,
    label=N_("Share of frequencies kept p"),
    help=N_("p-RoPE keeps the highest share p of RoPE's frequencies (1 = RoPE, 0 = NoPE)"),
)
ROPE_BASE = o.Option(
    "rope_base",
    "float",
    default=10_000.0,
    low=2.0,
    high=1_000_000.0,
    step=1.0,
    label=N_("RoPE base"),
    help=N_("RoPE's base: frequencies θ_i = base^(−2i/d)"),
)
SINK_LOGIT = o.Option(
    "sink_logit",
    "float",
    default=1.0,
    low=-10.0,
    high=10.0,
    step=0.1,
    label=N_("Sink logit b"),
    help=N_("the learned logit in the softmax's denominator that no value answers"),
)
DIFF_LAYER = o.Option(
    "diff_layer",
    "int",
    default=1,
    low=1,
    high=64,
    step=1,
    label=N_("Layer l (from 1)"),
    help=N_("the layer whose λ_init = 0.8 − 0.6 exp(−0.3 (l − 1)) is used"),
)
BLOCK_SIZE = o.Option(
    "block_size",
    "int",
    default=2,
    low=1,
    high=32,
    step=1,
    label=N_("Key block size"),
    help=N_("how many keys the online softmax reads at a time"),
)


def _variant(variant: str, name: str, paper: str, formula: str, summary: str, *options: o.Option) -> Mechanism:
    return Mechanism(
        id=variant,
        name=name,
        paper=paper,
        formula=formula,
        page=pages.PLAYGROUND.file,
        summary=summary,
        family="variants",
        variant=variant,
        builder=_BUILDER,
        options=(*o.QKV_OPTIONS, *options),
        input="query",
        example={"query": "1.5,0.5"},
    )


VARIANT_MECHANISMS: tuple[Mechanism, ...] = (
    _variant(
        "mha",
        N_("Multi-head attention (MHA)"),
        "Vaswani et al. (2017), Attention Is All You Need, §3.2.2",
        r"\alpha^{(h)} = \operatorname{softmax}\!\left(\frac{q_h K_h^\top}{\sqrt d}\right),\quad h = 1 \dots H",
        N_("Every head has its own queries, keys and values: H keys and H values per token in the cache."),
        NUM_HEADS,
    ),
    _variant(
        "mqa",
        N_("Multi-query attention (MQA)"),
        "Shazeer (2019), Fast Transformer Decoding: One Write-Head is All You Need",
        r"\alpha^{(h)} = \operatorname{softmax}\!\left(\frac{q_h K^\top}{\sqrt d}\right)",
        N_("All query heads share one key and one value head: the cache shrinks H times."),
        NUM_HEADS,
    ),
    _variant(
        "gqa",
        N_("Grouped-query attention (GQA)"),
        "Ainslie et al. (2023), GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints",
        r"\alpha^{(h)} = \operatorname{softmax}\!\left(\frac{q_h K_{g(h)}^\top}{\sqrt d}\right),\quad "
        r"g(h) = \lfloor h / G \rfloor,\ G = H / K",
        N_("Groups of G query heads share a key/value head: between MHA (K = H) and MQA (K = 1)."),
        NUM_HEADS,
        KV_HEADS,
    ),
    _variant(
        "mla",
        N_("Multi-head latent attention (MLA)"),
        "DeepSeek-AI (2024), DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model",
        r"c_j = W^{DKV} x_j,\ k_{h,j} = W^{UK}_h c_j,\ "
        r"s_{h,j} = \frac{q_h^\top W^{UK}_h c_j + q^{R\top}_h \operatorname{RoPE}(W^{KR} x_j)}{\sqrt{d + d_R}}",
        N_(
            "Keys and values are rebuilt from one small latent per token, which is all the cache holds; "
            "positions enter through a separate RoPE part, so W^UK can be folded into the query."
        ),
    ),
    _variant(
        "sliding-window",
        N_("Sliding-window attention"),
        "Beltagy, Peters & Cohan (2020), Longformer; Jiang et al. (2023), Mistral 7B",
        _SCORES + r",\quad \alpha = \operatorname{softmax}(s + M),\ M_{ij} = 0 \text{ if } 0 \le i - j < W "
        r"\text{ else } -\infty",
        N_("Each query reads only the W most recent keys: the cache and the cost stop growing with the length."),
        SLIDING_WINDOW,
    ),
    _variant(
        "local-global",
        N_("Alternating local and global layers"),
        "Gemma Team (2024), Gemma 2; Gemma Team (2025), Gemma 3 Technical Report",
        r"W_l = \begin{cases} \infty & (l + 1) \bmod (P + 1) = 0 \\ W & \text{otherwise} \end{cases}",
        N_("P sliding-window layers, then one global layer, repeated: most layers are cheap, a few see everything."),
        SLIDING_WINDOW,
        NUM_LAYERS,
        LOCAL_PER_GLOBAL,
    ),
    _variant(
        "alibi",
        N_("ALiBi (linear biases)"),
        "Press, Smith & Lewis (2022), Train Short, Test Long: Attention with Linear Biases Enables Input Length "
        "Extrapolation",
        _SCORES + r" - m_h\,(i - j),\quad m_h = 2^{-8h/H}",
        N_(
            "No position embeddings: each head subtracts a penalty growing linearly with the distance, at its "
            "own slope."
        ),
        NUM_HEADS,
    ),
    _variant(
        "rope",
        N_("Rotary positions (RoPE)"),
        "Su et al. (2021), RoFormer: Enhanced Transformer with Rotary Position Embedding",
        r"s_{ij} = \frac{(R_{\Theta, i}\, q)^\top (R_{\Theta, j}\, k_j)}{\sqrt d} = "
        r"\frac{q^\top R_{\Theta, j - i}\, k_j}{\sqrt d},\quad \theta_m = b^{-2m/d}",
        N_(
            "Query and key pairs are rotated by angles proportional to their positions, so a score depends "
            "on their distance."
        ),
        ROPE_BASE,
    ),
    _variant(
        "no-pe",
        N_("No positions (NoPE)"),
        "Kazemnejad et al. (2023), The Impact of Positional Encoding on Length Generalization in Transformers",
        _SCORES + r",\quad \alpha = \operatorname{softmax}(s + M_{\text{causal}})",
        N_("No position information at all: a causal decoder can still infer order from its mask."),
        ROPE_BASE,
    ),
    _variant(
        "p-rope",
        N_("p-RoPE (RoPE without its lowest frequencies)"),
        "Barbero et al. (2025), Round and Round We Go! What Makes Rotary Positional Encodings Useful?",
        r"\theta_m = \begin{cases} b^{-2m/d} & m < p\, d/2 \\ 0 & \text{otherwise} \end{cases}",
        N_("Only the highest share p of RoPE's frequencies rotate; the slowest pairs become pure content channels."),
        ROPE_FRACTION,
        ROPE_BASE,
    ),
    _variant(
        "sigmoid",
        N_("Sigmoid attention"),
        "Ramapuram et al. (2024), Theory, Analysis, and Best Practices for Sigmoid Self-Attention",
        r"\alpha_j = \sigma\!\left(s_j + b\right),\quad b = -\log n",
        N_(
            "Each weight is a sigmoid of its own score: the weights need not sum to 1. The bias −log n keeps "
            "their total near 1 at the start of training."
        ),
    ),
    _variant(
        "sink",
        N_("Softmax with a learned sink logit"),
        "OpenAI (2025), Introducing gpt-oss; Xiao et al. (2024), Efficient Streaming Language Models with Attention "
        "Sinks",
        r"\alpha_j = \frac{e^{s_j}}{e^{b} + \sum_{k} e^{s_k}}",
        N_(
            "One more logit b in the denominator, with no value: a head can put its attention on nothing "
            "instead of on the first token."
        ),
        SINK_LOGIT,
    ),
    _variant(
        "softmax1",
        N_("Softmax₁ (softmax plus one)"),
        "Miller (2023), Attention Is Off By One",
        r"\alpha_j = \frac{e^{s_j}}{1 + \sum_{k} e^{s_k}}",
        N_("The sink logit fixed at 0: when every score is low, the weights all go to 0."),
    ),
    _variant(
        "gated",
        N_("Gated attention"),
        "Qiu et al. (2025), Gated Attention for Large Language Models: Non-linearity, Sparsity, and "
        "Attention-Sink-Free",
        r"o = \sigma(w_g^\top x)\, \sum_j \alpha_j v_j,\quad \alpha = \operatorname{softmax}(s)",
        N_(
            "A sigmoid gate from the query token scales the head's output: shown here as the weights g·α, "
            "each value's share of the output."
        ),
    ),
    _variant(
        "differential",
        N_("Differential attention"),
        "Ye et al. (2025), Differential Transformer",
        r"A = \operatorname{softmax}\!\left(\frac{q_1 K_1^\top}{\sqrt d}\right) - \lambda\, "
        r"\operatorname{softmax}\!\left(\frac{q_2 K_2^\top}{\sqrt d}\right),\ "
        r"\lambda = e^{\lambda_{q1} \cdot \lambda_{k1}} - e^{\lambda_{q2} \cdot \lambda_{k2}} + \lambda_{\text{init}},"
        r"\ o = (1 - \lambda_{\text{init}}) \operatorname{RMSNorm}(A V)",
        N_(
            "Two maps from the two halves of q and k, the second subtracted: attention both put on irrelevant "
            "keys cancels. Weights may be negative."
        ),
        DIFF_LAYER,
    ),
    _variant(
        "linear",
        N_("Linear attention"),
        "Katharopoulos et al. (2020), Transformers are RNNs: Fast Autoregressive Transformers with Linear Attention",
        r"\alpha_j = \frac{\phi(q)^\top \phi(k_j)}{\sum_k \phi(q)^\top \phi(k_k)},\ \phi = \operatorname{elu} + 1;"
        r"\quad S_i = S_{i-1} + \phi(k_i) v_i^\top",
        N_(
            "A kernel φ(q)·φ(k) instead of exp(q·k): attention becomes a running sum, a fixed-size state "
            "instead of a growing cache."
        ),
    ),
    _variant(
        "online-softmax",
        N_("Online softmax (FlashAttention)"),
        "Milakov & Gimelshein (2018), Online Normalizer Calculation for Softmax; Dao et al. (2022), FlashAttention",
        r"m' = \max(m, \max_j s_j),\ \ell' = e^{m - m'} \ell + \sum_j e^{s_j - m'},\ "
        r"\alpha_j = e^{s_j - (m + \log \ell)}",
        N_(
            "Ordinary attention computed a block of keys at a time, keeping a running maximum and sum: the "
            "same weights, without holding them all."
        ),
        BLOCK_SIZE,
    ),
)

# The symbols of the variants' formulas, in ui/legend.py's form (symbol, meaning, size): for the page that shows them
# (ui.legend.symbol_legend).
VARIANT_LEGEND = (
    (
        r"q,\ k_j,\ v_j",
        N_("the query, key j and value j: the Playground's, the query at the last position"),
        N_("2 numbers each"),
    ),
    (r"s_j", N_("the score of key j: q·k_j/√d, divided by the temperature τ"), N_("a number per key")),
    (
        r"H,\ K,\ G",
        N_("query heads, key/value heads, and query heads per key/value head (G = H/K)"),
        N_("whole numbers"),
    ),
    (r"c_j", N_("MLA: the latent of token j, all its cache holds besides one RoPE key"), N_("d_c numbers")),
    (
        r"W^{DKV},\ W^{UK}_h,\ W^{KR}",
        N_("MLA: the down-projection to the latent, head h's key up-projection, the RoPE key's projection"),
        N_("matrices (seeded here, not learned)"),
    ),
    (r"W", N_("a sliding window: a query reads the W most recent keys, itself included"), N_("a whole number")),
    (r"m_h", N_("ALiBi: head h's slope, the penalty per token of distance"), N_("a number per head")),
    (
        r"\theta_m,\ b,\ p",
        N_("RoPE: the frequency of pair m, the base, and the share of frequencies p-RoPE keeps"),
        N_("numbers"),
    ),
    (r"b", N_("sigmoid: the bias −log n; sink: the logit in the denominator that no value answers"), N_("a number")),
    (r"\sigma", N_("the logistic sigmoid, 1/(1 + exp(−x))"), N_("a function")),
    (
        r"\lambda,\ \lambda_{\text{init}}",
        N_("differential: the weight of the second map, and its start value per layer"),
        N_("numbers"),
    ),
    (r"\phi", N_("linear attention's feature map, elu(x) + 1 > 0"), N_("a function")),
    (r"S_i", N_("linear attention's state after token i: the running sum of φ(k) vᵀ"), N_("d × d_v numbers")),
    (
        r"m,\ \ell",
        N_("online softmax: the running maximum and the running sum of exponentials"),
        N_("numbers per query"),
    ),
    (r"\alpha_j", N_("the weight of key j (sums to 1 only after a softmax)"), N_("a number per key")),
)
