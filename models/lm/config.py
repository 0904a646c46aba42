"""The hyper-parameters of a decoder language model, read from a Hugging Face config.json.

One frozen ``LMConfig`` describes GPT-2, the Llama family (llama, mistral, qwen2, qwen3, phi3, olmo2),
Gemma 2 and 3 (text) and GPT-NeoX (Pythia). What differs between architectures is a row of
``ARCHITECTURES``: where positions come from, which norm and where it sits, which feed-forward network,
which projections carry biases, whether q and k are normalised (per head or whole), Gemma's scaled
embeddings and (1 + w) norms; numbers a model_type reads (soft-capping, partial rotary, the parallel
residual, Gemma 3's local RoPE) are fields. A computation-changing name that a model_type does not read
(``_OPTIONAL``) is refused, never ignored. ``LMConfig.from_hf`` checks every value before anything is allocated and
raises InputError with one line naming the first bad one. No jax here: the loader reads a
config and sizes a folder without importing Flax.

Hugging Face's configuration_<model_type>.py files (gpt2, llama, mistral, qwen2, qwen3, gemma2, gemma3,
phi3, gpt_neox, olmo2) are the reference for each name and default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from models.record import InputError
from models.text import N_, Notice


@dataclass(frozen=True)
class Architecture:
    """What one model_type means.  A flag is True/False, or the config key that decides it (False when absent)."""

    positions: str  # "learned" (a position table) or "rope"
    norm: str  # "layer" (LayerNorm with bias) or "rms" (RMSNorm)
    mlp: str  # "plain" (fc -> act -> proj) or "gated" (down(act(gate) * up))
    qkv_bias: bool | str
    o_bias: bool | str
    mlp_bias: bool | str
    qk_norm: str  # "": none; "head": RMSNorm of each head's q and k (Qwen3, Gemma 3); "all": of the whole
    # q and k projections (OLMo 2)
    tied_default: bool
    defaults: tuple[tuple[str, Any], ...]  # HF's defaults of the names this model_type reads
    norms: str = "pre"  # "pre": norm -> sublayer; "sandwich": norm -> sublayer -> norm (Gemma); "post": sublayer ->
    # norm (OLMo 2)
    embed_scale: bool = False  # embeddings multiplied by √hidden_size (Gemma)
    norm_offset: bool = False  # RMSNorm scales by (1 + weight) (Gemma); the loader adds the 1
    reads: tuple[str, ...] = ()  # the optional computation-changing names (_OPTIONAL) this model_type reads


_LLAMA_NAMES = (
    ("hidden_act", "silu"), ("max_position_embeddings", 2048), ("rms_norm_eps", 1e-6), ("rope_theta", 10000.0),
)
_GEMMA_NAMES = (
    ("intermediate_size", 9216), ("num_hidden_layers", 26), ("num_attention_heads", 8), ("num_key_value_heads", 4),
    ("head_dim", 256), ("hidden_activation", "gelu_pytorch_tanh"), ("rms_norm_eps", 1e-6),
    ("query_pre_attn_scalar", 256), ("sliding_window", 4096),
)
_GEMMA_READS = ("attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar")
ARCHITECTURES: dict[str, Architecture] = {
    "gpt2": Architecture(
        "learned", "layer", "plain", True, True, True, "", True,
        (("vocab_size", 50257), ("n_embd", 768), ("n_layer", 12), ("n_head", 12), ("n_positions", 1024),
         ("n_inner", None), ("layer_norm_epsilon", 1e-5), ("activation_function", "gelu_new")),
    ),
    "llama": Architecture(
        "rope", "rms", "gated", "attention_bias", "attention_bias", "mlp_bias", "", False,
        (("vocab_size", 32000), ("hidden_size", 4096), ("intermediate_size", 11008), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), *_LLAMA_NAMES),
    ),
    "mistral": Architecture(
        "rope", "rms", "gated", False, False, False, "", False,
        (("vocab_size", 32000), ("hidden_size", 4096), ("intermediate_size", 14336), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), ("num_key_value_heads", 8), *_LLAMA_NAMES),
    ),
    "qwen2": Architecture(
        "rope", "rms", "gated", True, False, False, "", False,
        (("vocab_size", 151936), ("hidden_size", 4096), ("intermediate_size", 22016), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), *_LLAMA_NAMES),
    ),
    "qwen3": Architecture(
        "rope", "rms", "gated", "attention_bias", "attention_bias", False, "head", False,
        (("vocab_size", 151936), ("hidden_size", 4096), ("intermediate_size", 22016), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), ("head_dim", 128), *_LLAMA_NAMES),
    ),
    # modeling_gemma2.py: (1 + w) RMSNorms before and after attention and the MLP, √d-scaled embeddings,
    # scale query_pre_attn_scalar^-1/2, tanh soft-capping of the scores and the logits.
    "gemma2": Architecture(
        "rope", "rms", "gated", "attention_bias", "attention_bias", False, "", True,
        (("vocab_size", 256000), ("hidden_size", 2304), *_GEMMA_NAMES, ("max_position_embeddings", 8192),
         ("rope_theta", 10000.0), ("attn_logit_softcapping", 50.0), ("final_logit_softcapping", 30.0)),
        norms="sandwich", embed_scale=True, norm_offset=True, reads=_GEMMA_READS,
    ),
    # modeling_gemma3.py (text): Gemma 2 plus per-head q/k norms and a RoPE base of its own on the local layers.
    "gemma3_text": Architecture(
        "rope", "rms", "gated", "attention_bias", "attention_bias", False, "head", True,
        (("vocab_size", 262208), ("hidden_size", 2304), *_GEMMA_NAMES, ("max_position_embeddings", 131072)),
        norms="sandwich", embed_scale=True, norm_offset=True, reads=(*_GEMMA_READS, "rope_local_base_freq"),
    ),
    # modeling_phi3.py: Llama with fused qkv_proj and gate_up_proj (the loader splits them).
    "phi3": Architecture(
        "rope", "rms", "gated", False, False, False, "", False,
        (("vocab_size", 32064), ("hidden_size", 3072), ("intermediate_size", 8192), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), ("hidden_act", "silu"), ("max_position_embeddings", 4096),
         ("rms_norm_eps", 1e-5), ("rope_theta", 10000.0)),
    ),
    # modeling_gpt_neox.py (Pythia): LayerNorms with biases, RoPE on the first rotary_pct of each head,
    # attention and MLP side by side (use_parallel_residual), fused query_key_value laid out per head.
    "gpt_neox": Architecture(
        "rope", "layer", "plain", "attention_bias", "attention_bias", True, "", False,
        (("vocab_size", 50432), ("hidden_size", 6144), ("intermediate_size", 24576), ("num_hidden_layers", 44),
         ("num_attention_heads", 64), ("hidden_act", "gelu"), ("max_position_embeddings", 2048),
         ("layer_norm_eps", 1e-5), ("attention_bias", True), ("use_parallel_residual", True)),
        reads=("use_parallel_residual", "rotary_pct"),
    ),
    # modeling_olmo2.py: norms after attention and after the MLP only, q/k RMSNorm over the whole projection.
    "olmo2": Architecture(
        "rope", "rms", "gated", "attention_bias", "attention_bias", False, "all", False,
        (("vocab_size", 50304), ("hidden_size", 4096), ("intermediate_size", 11008), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), ("hidden_act", "silu"), ("max_position_embeddings", 2048),
         ("rms_norm_eps", 1e-5), ("rope_theta", 10000.0)),
        norms="post",
    ),
}
# Names that change the computation where a model_type reads them, with the values that change nothing. A config
# holding one with another value, for a model_type that does not read it here, is refused rather than ignored.
_OPTIONAL: dict[str, tuple[Any, ...]] = {
    "attn_logit_softcapping": (None,), "final_logit_softcapping": (None,), "query_pre_attn_scalar": (None,),
    "rope_local_base_freq": (None,), "use_parallel_residual": (None, False), "rotary_pct": (None, 1, 1.0),
    "use_bidirectional_attention": (None, False), "clip_qkv": (None,), "qk_layernorm": (None, False),
    "use_qk_norm": (None, False), "embedding_multiplier": (None, 1, 1.0), "logits_scaling": (None, 1, 1.0),
    "residual_multiplier": (None, 1, 1.0), "attention_multiplier": (None,), "alibi": (None, False),
}
SUPPORTED = ", ".join(ARCHITECTURES)

# Hugging Face's activation names (transformers/activations.py ACT2FN) that we compute.
ACTIVATIONS = ("gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "quick_gelu", "relu", "silu", "swish")
# RoPE kinds (transformers/modeling_rope_utils.py) computed exactly here.
ROPE_KINDS = ("default", "linear", "llama3", "yarn")

# Our field names as each config.json spells them (for messages).
_HF_NAMES = {
    "gpt2": {"hidden_size": "n_embd", "num_layers": "n_layer", "num_heads": "n_head", "num_kv_heads": "n_head",
             "max_positions": "n_positions", "intermediate_size": "n_inner", "head_dim": "n_embd / n_head"},
    "llama": {"num_layers": "num_hidden_layers", "num_heads": "num_attention_heads",
              "num_kv_heads": "num_key_value_heads", "max_positions": "max_position_embeddings"},
}

# Upper bounds: larger values are not a model this app can hold, and a config asking for them
# would allocate without limit.
_LIMITS = {
    "vocab_size": 1_000_000, "hidden_size": 32_768, "num_layers": 512, "num_heads": 1_024, "num_kv_heads": 1_024,
    "head_dim": 2_048, "intermediate_size": 262_144, "max_positions": 1 << 24,
}
_MAX_LEARNED_POSITIONS = 131_072


@dataclass(frozen=True)
class LMConfig:
    """The hyper-parameters of one decoder LM (frozen and hashable: it doubles as a cache key).

    Sizes: D = hidden_size, H = num_heads query heads of head_dim each, num_kv_heads key/value
    heads (H / num_kv_heads query heads share one), F = intermediate_size, V = vocab_size.
    rope_scaling holds the extra parameters of rope_type as sorted (name, value) pairs.
    """

    model_type: str
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    max_positions: int
    norm_eps: float
    activation: str
    qkv_bias: bool
    o_bias: bool
    mlp_bias: bool
    tie_word_embeddings: bool
    rope_theta: float = 10000.0
    rope_type: str = "default"
    rope_scaling: tuple[tuple[str, float], ...] = ()
    scale_attn_weights: bool = True  # GPT-2: divide scores by sqrt(head_dim)
    scale_attn_by_inverse_layer_idx: bool = False  # GPT-2: and by layer index + 1
    sliding_window: int | None = None  # a key further back than this from its query gets weight 0 ...
    sliding_layers: tuple[int, ...] = ()  # ... on these layers
    bos_token_id: int | None = None
    eos_token_id: int | None = None
    rotary_dim: int | None = None  # RoPE turns the first rotary_dim dimensions of each head (None: all of them)
    parallel_residual: bool = False  # GPT-NeoX: x + attention(norm1(x)) + mlp(norm2(x))
    query_pre_attn_scalar: float | None = None  # Gemma: the scale is this^-1/2 instead of head_dim^-1/2
    attn_softcap: float | None = None  # Gemma 2: scores -> cap · tanh(scores / cap) before the softmax
    final_softcap: float | None = None  # Gemma 2: the same on the logits
    local_rope_theta: float | None = None  # Gemma 3: the sliding layers' RoPE (base, kind, parameters) ...
    local_rope_type: str = "default"
    local_rope_scaling: tuple[tuple[str, float], ...] = ()

    def __post_init__(self):
        if self.model_type not in ARCHITECTURES:
            raise InputError(Notice(N_("model_type {value} is not supported; supported: {supported}"),
                                    value=repr(self.model_type), supported=SUPPORTED))
        for name, high in _LIMITS.items():  # intermediate_size 0: no MLP (an attention-only model)
            _whole(self.hf_name(name), getattr(self, name), 0 if name == "intermediate_size" else 1, high)
        if self.num_heads % self.num_kv_heads:
            raise InputError(Notice(
                N_("num_key_value_heads {kv} does not divide num_attention_heads {heads}"),
                kv=self.num_kv_heads, heads=self.num_heads,
            ))
        if self.arch.positions == "learned":
            _whole("n_positions", self.max_positions, 1, _MAX_LEARNED_POSITIONS)
            if self.num_heads * self.head_dim != self.hidden_size:
                raise InputError(Notice(N_("n_embd {width} is not divisible by n_head {heads}"), width=self.hidden_size,
                                        heads=self.num_heads))
        elif self.head_dim % 2:
            raise InputError(Notice(N_("head_dim {dim} is odd; RoPE rotates pairs of dimensions"), dim=self.head_dim))
        elif self.rope_dim % 2 or not 0 < self.rope_dim <= self.head_dim:
            raise InputError(Notice(N_("partial rotary turns {dim} dimensions of each head; RoPE needs an even number "
                                       "from 2 to head_dim {head_dim}"), dim=self.rope_dim, head_dim=self.head_dim))
        if not _number(self.norm_eps) or not 0 < self.norm_eps < 1:
            name = {"gpt2": "layer_norm_epsilon", "gpt_neox": "layer_norm_eps"}.get(self.model_type, "rms_norm_eps")
            raise InputError(Notice(N_("{name} {value} is not a number between 0 and 1"), name=name, value=repr(self.norm_eps)))
        if self.activation not in ACTIVATIONS:
            raise InputError(Notice(N_("activation {value} is not supported; known: {known}"), value=repr(self.activation),
                                    known=", ".join(ACTIVATIONS)))
        ropes = [(self.rope_theta, self.rope_type, self.rope_scaling)]
        if self.local_rope_theta is not None:
            ropes.append((self.local_rope_theta, self.local_rope_type, self.local_rope_scaling))
        for theta, kind, scaling in ropes:
            if not _number(theta) or not 0 < theta < 1e12:
                raise InputError(Notice(N_("rope_theta {value} is not a positive number"), value=repr(theta)))
            if kind not in ROPE_KINDS:
                raise InputError(Notice(N_("rope_scaling type {value} is not supported; supported: {supported}"),
                                        value=repr(kind), supported=", ".join(ROPE_KINDS)))
            for name, value in scaling:
                if not _number(value) or not (0 < value < 1e9 or name == "truncate"):
                    raise InputError(Notice(N_("rope_scaling {name} {value} is not a positive number"), name=name,
                                            value=repr(value)))
        for name, value in (("query_pre_attn_scalar", self.query_pre_attn_scalar),
                            ("attn_logit_softcapping", self.attn_softcap),
                            ("final_logit_softcapping", self.final_softcap)):
            if value is not None and (not _number(value) or not 0 < value < 1e12):
                raise InputError(Notice(N_("{name} {value} is not a positive number"), name=name, value=repr(value)))
        if self.sliding_window is not None:
            _whole("sliding_window", self.sliding_window, 1, 1 << 30)
        for name in ("bos_token_id", "eos_token_id"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise InputError(Notice(N_("{name} {value} is not a whole number"), name=name, value=repr(value)))

    def hf_name(self, name: str) -> str:
        """Returns the config.json name of a field of this config (e.g. num_layers -> n_layer for GPT-2)."""
        return _HF_NAMES["gpt2" if self.model_type == "gpt2" else "llama"].get(name, name)

    @property
    def rope_dim(self) -> int:
        """The dimensions of each head that RoPE turns (the first ones; partial rotary turns fewer than head_dim)."""
        return self.head_dim if self.rotary_dim is None else self.rotary_dim

    @property
    def arch(self) -> Architecture:
        return ARCHITECTURES[self.model_type]

    @property
    def queries_per_kv(self) -> int:
        return self.num_heads // self.num_kv_heads

    @property
    def qk_norm(self) -> str:
        """"" (none), "head" (each head's q and k) or "all" (the whole q and k projections)."""
        return self.arch.qk_norm

    def rope_value(self, name: str, default: float | None = None, *, local: bool = False) -> float | None:
        """Returns one rope_scaling parameter (e.g. "factor") of the global (or the local layers') RoPE, or default."""
        return dict(self.local_rope_scaling if local else self.rope_scaling).get(name, default)

    def parameter_count(self) -> int:
        """Returns how many numbers the model holds (from the config alone, before allocation)."""
        d, f, hd = self.hidden_size, self.intermediate_size, self.head_dim
        q, kv = self.num_heads * hd, self.num_kv_heads * hd
        norm = 2 * d if self.arch.norm == "layer" else d
        qk_norm = {"": 0, "head": 2 * hd, "all": q + kv}[self.qk_norm]
        attn = d * (q + 2 * kv) + q * d + (q + 2 * kv) * self.qkv_bias + d * self.o_bias + qk_norm
        mlp = (3 if self.arch.mlp == "gated" else 2) * d * f + (f + d) * self.mlp_bias
        if self.arch.mlp == "gated" and self.mlp_bias:
            mlp += f
        per_layer = attn + mlp + {"pre": 2, "sandwich": 4, "post": 2}[self.arch.norms] * norm
        embeddings = self.vocab_size * d * (1 if self.tie_word_embeddings else 2)
        positions = self.max_positions * d if self.arch.positions == "learned" else 0
        return embeddings + positions + self.num_layers * per_layer + norm

    @classmethod
    def from_hf(cls, data: dict[str, Any]) -> LMConfig:
        """Returns the config of a Hugging Face config.json dict; InputError (one line) if a value is bad."""
        if not isinstance(data, dict):
            raise InputError(Notice(N_("config.json is not a JSON object")))
        model_type = data.get("model_type")
        if model_type not in ARCHITECTURES:
            raise InputError(Notice(N_("model_type {value} is not supported; supported: {supported}"),
                                    value=repr(model_type), supported=SUPPORTED))
        arch = ARCHITECTURES[model_type]
        for name, neutral in _OPTIONAL.items():
            value = data.get(name)
            if name not in arch.reads and not any(value is v or (_number(value) and value == v) for v in neutral):
                raise InputError(Notice(
                    N_("{name} {value} is not read by a {model_type} model here; it is not supported"),
                    name=name, value=repr(value), model_type=model_type,
                ))
        values = {**dict(arch.defaults), **{k: v for k, v in data.items() if v is not None or k == "head_dim"}}
        get = values.get
        if model_type == "gpt2":
            d, heads = get("n_embd"), get("n_head")
            _whole("n_embd", d, 1, _LIMITS["hidden_size"])
            _whole("n_head", heads, 1, _LIMITS["num_heads"])
            inner = get("n_inner")
            if get("reorder_and_upcast_attn", False) not in (False, True):
                raise InputError(Notice(N_("reorder_and_upcast_attn is not true or false")))
            common = dict(
                vocab_size=get("vocab_size"), hidden_size=d, num_layers=get("n_layer"), num_heads=heads,
                num_kv_heads=heads, head_dim=d // heads if d % heads == 0 else -1,
                intermediate_size=4 * d if inner is None else inner, max_positions=get("n_positions"),
                norm_eps=get("layer_norm_epsilon"), activation=get("activation_function"),
                scale_attn_weights=_flag(values, "scale_attn_weights", True),
                scale_attn_by_inverse_layer_idx=_flag(values, "scale_attn_by_inverse_layer_idx", False),
            )
            if common["head_dim"] == -1:
                raise InputError(Notice(N_("n_embd {width} is not divisible by n_head {heads}"), width=d, heads=heads))
            rope: dict[str, Any] = {}
        else:
            d, heads = get("hidden_size"), get("num_attention_heads")
            _whole("hidden_size", d, 1, _LIMITS["hidden_size"])
            _whole("num_attention_heads", heads, 1, _LIMITS["num_heads"])
            head_dim = get("head_dim")
            if head_dim is None:
                if d % heads:
                    raise InputError(Notice(N_("hidden_size {width} is not divisible by num_attention_heads {heads}"),
                                            width=d, heads=heads))
                head_dim = d // heads
            neox = model_type == "gpt_neox"
            common = dict(
                vocab_size=get("vocab_size"), hidden_size=d, num_layers=get("num_hidden_layers"), num_heads=heads,
                num_kv_heads=heads if neox else get("num_key_value_heads", heads), head_dim=head_dim,
                intermediate_size=get("intermediate_size"), max_positions=get("max_position_embeddings"),
                norm_eps=get("layer_norm_eps" if neox else "rms_norm_eps"),
                activation=get("hidden_activation" if arch.norm_offset else "hidden_act"),
                parallel_residual=neox and _flag(values, "use_parallel_residual", True),
                **_sliding(model_type, values, get("num_hidden_layers")),
            )
            if arch.norm_offset:  # Gemma
                if "sliding_window" in data and data["sliding_window"] is None:  # transformers refuses it too
                    _whole("sliding_window", None, 1, 1 << 30)
                common.update(query_pre_attn_scalar=get("query_pre_attn_scalar"),
                              attn_softcap=get("attn_logit_softcapping"), final_softcap=get("final_logit_softcapping"))
                if _flag(values, "use_bidirectional_attention", False):
                    raise InputError(Notice(N_("{name} {value} is not read by a {model_type} model here; it is not "
                                               "supported"), name="use_bidirectional_attention", value="True",
                                            model_type=model_type))
            rope = _model_rope(model_type, values, head_dim)
        return cls(
            model_type=model_type, **common,
            qkv_bias=_bias(values, arch.qkv_bias), o_bias=_bias(values, arch.o_bias),
            mlp_bias=_bias(values, arch.mlp_bias),
            tie_word_embeddings=_flag(values, "tie_word_embeddings", arch.tied_default),
            bos_token_id=_token_id(get("bos_token_id")), eos_token_id=_token_id(get("eos_token_id")),
            **rope,
        )

    def to_gpt2_hf(self) -> dict[str, Any]:
        """Returns the Hugging Face GPT-2 config.json dict of this config (GPT-2 only)."""
        if self.model_type != "gpt2":
            raise ValueError("only a GPT-2 config is written in GPT-2 form")
        return {
            "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": self.vocab_size,
            "n_embd": self.hidden_size, "n_layer": self.num_layers, "n_head": self.num_heads,
            "n_positions": self.max_positions, "n_inner": self.intermediate_size,
            "layer_norm_epsilon": self.norm_eps, "activation_function": self.activation,
            "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
            "scale_attn_weights": self.scale_attn_weights,
            "scale_attn_by_inverse_layer_idx": self.scale_attn_by_inverse_layer_idx,
            "reorder_and_upcast_attn": False, "tie_word_embeddings": self.tie_word_embeddings,
            "bos_token_id": self.bos_token_id, "eos_token_id": self.eos_token_id,
        }


def gpt2_config(*, vocab_size: int, n_embd: int, n_layer: int, n_head: int, n_positions: int, **extra: Any) -> LMConfig:
    """Returns a GPT-2 LMConfig from GPT-2's own names (for a model trained here)."""
    return LMConfig.from_hf({
        "model_type": "gpt2", "vocab_size": vocab_size, "n_embd": n_embd, "n_layer": n_layer, "n_head": n_head,
        "n_positions": n_positions, **extra,
    })


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(Notice(N_("{name} {value} is not a whole number from {low} to {high:,}"), name=name,
                                value=repr(value), low=low, high=high))


def _flag(values: dict, name: str, default: bool) -> bool:
    value = values.get(name, default)
    if not isinstance(value, bool):
        raise InputError(Notice(N_("{name} {value} is not true or false"), name=name, value=repr(value)))
    return value


def _bias(values: dict, rule: bool | str) -> bool:
    return rule if isinstance(rule, bool) else _flag(values, rule, False)


def _token_id(value: Any) -> Any:
    # Some configs give a list of ids (several end tokens); the first is the one we name.
    return value[0] if isinstance(value, list) and value else value


def _sliding(model_type: str, values: dict, num_layers: Any) -> dict[str, Any]:
    """Returns sliding_window and sliding_layers, as transformers reads them.

    Mistral and Phi-3 slide on every layer when sliding_window is set; Qwen2/3 only with use_sliding_window,
    on the layers layer_types marks "sliding_attention" (default: index >= max_window_layers); Gemma 2 and 3
    on the layers layer_types marks (default: all but every 2nd, or every sliding_window_pattern-th);
    Llama, GPT-NeoX and OLMo 2 never. Gemma 3's sliding layers are also the ones with the local RoPE.
    """
    window = values.get("sliding_window")
    gemma = model_type in ("gemma2", "gemma3_text")
    if model_type in ("llama", "gpt_neox", "olmo2") or (window is None and not gemma):
        return {"sliding_window": None, "sliding_layers": ()}
    _whole("num_hidden_layers", num_layers, 1, _LIMITS["num_layers"])
    if model_type in ("mistral", "phi3"):
        return {"sliding_window": window, "sliding_layers": tuple(range(num_layers))}
    types = values.get("layer_types")
    if gemma:  # Gemma 2 alternates local and global layers; Gemma 3 has 5 local ones per global one
        _whole("sliding_window", window, 1, 1 << 30)
        pattern = 2 if model_type == "gemma2" else values.get("sliding_window_pattern", 6)
        if types is None:
            _whole("sliding_window_pattern", pattern, 1, 1 << 20)
            types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(num_layers)]
    elif not _flag(values, "use_sliding_window", False):
        return {"sliding_window": None, "sliding_layers": ()}
    if types is None:
        first = values.get("max_window_layers", 28)
        _whole("max_window_layers", first, 0, 1 << 20)
        types = ["sliding_attention" if i >= first else "full_attention" for i in range(num_layers)]
    if not isinstance(types, list) or len(types) != num_layers or not set(types) <= {"sliding_attention", "full_attention"}:
        raise InputError(Notice(N_("layer_types is not one of 'full_attention' or 'sliding_attention' per layer")))
    layers = tuple(i for i, kind in enumerate(types) if kind == "sliding_attention")
    return {"sliding_window": window if layers else None, "sliding_layers": layers}


def _model_rope(model_type: str, values: dict, head_dim: Any) -> dict[str, Any]:
    """Returns the RoPE fields of LMConfig: rope_theta, rope_type, rope_scaling, rotary_dim and Gemma 3's local ones.

    GPT-NeoX names its base rotary_emb_base and its partial factor rotary_pct (default 0.25); Phi-3 may turn part
    of each head too. Gemma 3 reads rope_parameters per layer type ({"full_attention": ..., "sliding_attention":
    ...}), or in 4.x form rope_theta (default 1e6) and rope_scaling for the global layers and rope_local_base_freq
    (default 1e4) for the local ones, as its configuration_gemma3.py converts them.
    """
    if model_type == "gemma3_text":
        params = values.get("rope_parameters")
        nested = isinstance(params, dict) and bool({"full_attention", "sliding_attention"} & set(params))
        full = (params.get("full_attention") if nested else params or values.get("rope_scaling")) or {}
        local = (params.get("sliding_attention") if nested else None) or {}
        if not isinstance(full, dict) or not isinstance(local, dict):
            raise InputError(Notice(N_("rope_scaling is not a JSON object")))
        fields = _rope(values, {"rope_theta": values.get("rope_theta", 1e6), **full})
        own = _rope(values, {"rope_theta": values.get("rope_local_base_freq", 1e4), **local})
        fields.pop("partial")
        return {**fields, "local_rope_theta": own["rope_theta"], "local_rope_type": own["rope_type"],
                "local_rope_scaling": own["rope_scaling"]}
    if model_type == "gpt_neox":
        params = values.get("rope_parameters") or values.get("rope_scaling") or {}
        if not isinstance(params, dict):
            raise InputError(Notice(N_("rope_scaling is not a JSON object")))
        params = {"rope_theta": values.get("rotary_emb_base", 10000.0),
                  "partial_rotary_factor": values.get("rotary_pct", 0.25), **params}
        fields = _rope(values, params, partial=True)
    else:
        fields = _rope(values, partial=model_type == "phi3")
    factor = fields.pop("partial")
    if factor != 1:
        if not _number(factor) or not 0 < factor < 1 or not isinstance(head_dim, int):
            raise InputError(Notice(N_("partial_rotary_factor {value} is not a number between 0 and 1"),
                                    value=repr(factor)))
        fields["rotary_dim"] = int(head_dim * factor)
    return fields


def _rope(values: dict, params: dict | None = None, *, partial: bool = False) -> dict[str, Any]:
    """Returns rope_theta, rope_type, rope_scaling and partial (the partial rotary factor) from either config form.

    transformers 4.x writes ``rope_theta`` and ``rope_scaling`` ({"type" or "rope_type", ...});
    5.x writes ``rope_parameters`` ({"rope_type", "rope_theta", ...}). llama3 and yarn take
    original_max_position_embeddings from the top level or else max_position_embeddings, as
    transformers' standardize_rope_params does. params: the dict to read instead (Gemma 3, GPT-NeoX);
    partial: whether this model_type turns part of each head (else a partial_rotary_factor other than 1 is refused).
    """
    if params is None:
        params = values.get("rope_parameters")
        if params is None:
            params = values.get("rope_scaling") or {}
    if not isinstance(params, dict):
        raise InputError(Notice(N_("rope_scaling is not a JSON object")))
    params = dict(params)
    theta = params.pop("rope_theta", None)
    theta = values.get("rope_theta", 10000.0) if theta is None else theta
    kind = params.pop("rope_type", None) or params.pop("type", None) or "default"
    params.pop("type", None)
    if not isinstance(kind, str) or kind not in ROPE_KINDS:
        raise InputError(Notice(N_("rope_scaling type {value} is not supported; supported: {supported}"),
                                value=repr(kind), supported=", ".join(ROPE_KINDS)))
    factor = params.pop("partial_rotary_factor", values.get("partial_rotary_factor", 1.0))
    factor = 1.0 if factor is None else factor
    if factor != 1 and not partial:
        raise InputError(Notice(N_("partial_rotary_factor {value} is not supported (only 1: RoPE on the whole head)"),
                                value=repr(factor)))
    if kind in ("llama3", "yarn"):
        original = values.get("original_max_position_embeddings")
        if original is not None:
            params["original_max_position_embeddings"] = original
        params.setdefault("original_max_position_embeddings", values.get("max_position_embeddings"))
    scaling = []
    for name, value in params.items():
        if value is None:
            continue
        if name not in _ROPE_PARAMETERS[kind]:
            raise InputError(Notice(N_("rope_scaling {name} is not used by rope type {kind} here"), name=repr(name),
                                    kind=repr(kind)))
        if name == "truncate":
            if not isinstance(value, bool):
                raise InputError(Notice(N_("rope_scaling truncate {value} is not true or false"), value=repr(value)))
            value = float(value)
        scaling.append((name, value))
    for name in _ROPE_PARAMETERS[kind][:_ROPE_REQUIRED[kind]]:
        if name not in dict(scaling):
            raise InputError(Notice(N_("rope_scaling of type {kind} needs {name}"), kind=repr(kind), name=repr(name)))
    return {"rope_theta": theta, "rope_type": kind, "rope_scaling": tuple(sorted(scaling)), "partial": factor}


# The parameters each kind reads; the first _ROPE_REQUIRED of them must be given.
_ROPE_PARAMETERS = {
    "default": (),
    "linear": ("factor",),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor", "mscale",
             "mscale_all_dim", "truncate"),
}
_ROPE_REQUIRED = {"default": 0, "linear": 1, "llama3": 4, "yarn": 2}
