"""The hyper-parameters of a decoder language model, read from a Hugging Face config.json.

One frozen ``LMConfig`` describes GPT-2 and the Llama family (llama, mistral, qwen2, qwen3).
What differs between architectures is a row of ``ARCHITECTURES``: where positions come from,
which norm, which feed-forward network, which projections carry biases, whether q and k are
normalised per head. ``LMConfig.from_hf`` checks every value before anything is allocated and
raises InputError with one line naming the first bad one. No jax here: the loader reads a
config and sizes a folder without importing Flax.

Hugging Face's configuration_gpt2.py, configuration_llama.py, configuration_mistral.py,
configuration_qwen2.py and configuration_qwen3.py are the reference for each name and default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from models.record import InputError
from models.text import N_, Notice


@dataclass(frozen=True)
class Architecture:
    """What one model_type means.  A bias flag is True/False, or the config key that decides it."""

    positions: str  # "learned" (a position table) or "rope"
    norm: str  # "layer" (LayerNorm with bias) or "rms" (RMSNorm)
    mlp: str  # "plain" (fc -> act -> proj) or "gated" (down(act(gate) * up))
    qkv_bias: bool | str
    o_bias: bool | str
    mlp_bias: bool | str
    qk_norm: bool  # RMSNorm of each head's q and k before RoPE (Qwen3)
    tied_default: bool
    defaults: tuple[tuple[str, Any], ...]  # HF's defaults of the names this model_type reads


_LLAMA_NAMES = (
    ("hidden_act", "silu"), ("max_position_embeddings", 2048), ("rms_norm_eps", 1e-6), ("rope_theta", 10000.0),
)
ARCHITECTURES: dict[str, Architecture] = {
    "gpt2": Architecture(
        "learned", "layer", "plain", True, True, True, False, True,
        (("vocab_size", 50257), ("n_embd", 768), ("n_layer", 12), ("n_head", 12), ("n_positions", 1024),
         ("n_inner", None), ("layer_norm_epsilon", 1e-5), ("activation_function", "gelu_new")),
    ),
    "llama": Architecture(
        "rope", "rms", "gated", "attention_bias", "attention_bias", "mlp_bias", False, False,
        (("vocab_size", 32000), ("hidden_size", 4096), ("intermediate_size", 11008), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), *_LLAMA_NAMES),
    ),
    "mistral": Architecture(
        "rope", "rms", "gated", False, False, False, False, False,
        (("vocab_size", 32000), ("hidden_size", 4096), ("intermediate_size", 14336), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), ("num_key_value_heads", 8), *_LLAMA_NAMES),
    ),
    "qwen2": Architecture(
        "rope", "rms", "gated", True, False, False, False, False,
        (("vocab_size", 151936), ("hidden_size", 4096), ("intermediate_size", 22016), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), *_LLAMA_NAMES),
    ),
    "qwen3": Architecture(
        "rope", "rms", "gated", "attention_bias", "attention_bias", False, True, False,
        (("vocab_size", 151936), ("hidden_size", 4096), ("intermediate_size", 22016), ("num_hidden_layers", 32),
         ("num_attention_heads", 32), ("head_dim", 128), *_LLAMA_NAMES),
    ),
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
        if not _number(self.norm_eps) or not 0 < self.norm_eps < 1:
            name = "layer_norm_epsilon" if self.model_type == "gpt2" else "rms_norm_eps"
            raise InputError(Notice(N_("{name} {value} is not a number between 0 and 1"), name=name, value=repr(self.norm_eps)))
        if self.activation not in ACTIVATIONS:
            raise InputError(Notice(N_("activation {value} is not supported; known: {known}"), value=repr(self.activation),
                                    known=", ".join(ACTIVATIONS)))
        if not _number(self.rope_theta) or not 0 < self.rope_theta < 1e12:
            raise InputError(Notice(N_("rope_theta {value} is not a positive number"), value=repr(self.rope_theta)))
        if self.rope_type not in ROPE_KINDS:
            raise InputError(Notice(N_("rope_scaling type {value} is not supported; supported: {supported}"),
                                    value=repr(self.rope_type), supported=", ".join(ROPE_KINDS)))
        for name, value in self.rope_scaling:
            if not _number(value) or not (0 < value < 1e9 or name == "truncate"):
                raise InputError(Notice(N_("rope_scaling {name} {value} is not a positive number"), name=name,
                                        value=repr(value)))
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
    def arch(self) -> Architecture:
        return ARCHITECTURES[self.model_type]

    @property
    def queries_per_kv(self) -> int:
        return self.num_heads // self.num_kv_heads

    @property
    def qk_norm(self) -> bool:
        return self.arch.qk_norm

    def rope_value(self, name: str, default: float | None = None) -> float | None:
        """Returns one rope_scaling parameter (e.g. "factor"), or default."""
        return dict(self.rope_scaling).get(name, default)

    def parameter_count(self) -> int:
        """Returns how many numbers the model holds (from the config alone, before allocation)."""
        d, f, hd = self.hidden_size, self.intermediate_size, self.head_dim
        q, kv = self.num_heads * hd, self.num_kv_heads * hd
        norm = 2 * d if self.arch.norm == "layer" else d
        attn = d * (q + 2 * kv) + q * d + (q + 2 * kv) * self.qkv_bias + d * self.o_bias + 2 * hd * self.qk_norm
        mlp = (3 if self.arch.mlp == "gated" else 2) * d * f + (f + d) * self.mlp_bias
        if self.arch.mlp == "gated" and self.mlp_bias:
            mlp += f
        per_layer = attn + mlp + 2 * norm
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
            common = dict(
                vocab_size=get("vocab_size"), hidden_size=d, num_layers=get("num_hidden_layers"), num_heads=heads,
                num_kv_heads=get("num_key_value_heads", heads), head_dim=head_dim,
                intermediate_size=get("intermediate_size"), max_positions=get("max_position_embeddings"),
                norm_eps=get("rms_norm_eps"), activation=get("hidden_act"),
                **_sliding(model_type, values, get("num_hidden_layers")),
            )
            rope = _rope(values)
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

    Mistral slides on every layer when sliding_window is set; Qwen2/3 only with use_sliding_window,
    on the layers layer_types marks "sliding_attention" (default: index >= max_window_layers);
    Llama never.
    """
    window = values.get("sliding_window")
    if model_type == "llama" or window is None:
        return {"sliding_window": None, "sliding_layers": ()}
    _whole("num_hidden_layers", num_layers, 1, _LIMITS["num_layers"])
    if model_type == "mistral":
        return {"sliding_window": window, "sliding_layers": tuple(range(num_layers))}
    if not _flag(values, "use_sliding_window", False):
        return {"sliding_window": None, "sliding_layers": ()}
    types = values.get("layer_types")
    if types is None:
        first = values.get("max_window_layers", 28)
        _whole("max_window_layers", first, 0, 1 << 20)
        types = ["sliding_attention" if i >= first else "full_attention" for i in range(num_layers)]
    if not isinstance(types, list) or len(types) != num_layers or not set(types) <= {"sliding_attention", "full_attention"}:
        raise InputError(Notice(N_("layer_types is not one of 'full_attention' or 'sliding_attention' per layer")))
    layers = tuple(i for i, kind in enumerate(types) if kind == "sliding_attention")
    return {"sliding_window": window if layers else None, "sliding_layers": layers}


def _rope(values: dict) -> dict[str, Any]:
    """Returns rope_theta, rope_type and rope_scaling from either config form.

    transformers 4.x writes ``rope_theta`` and ``rope_scaling`` ({"type" or "rope_type", ...});
    5.x writes ``rope_parameters`` ({"rope_type", "rope_theta", ...}). llama3 and yarn take
    original_max_position_embeddings from the top level or else max_position_embeddings, as
    transformers' standardize_rope_params does.
    """
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
    partial = params.pop("partial_rotary_factor", values.get("partial_rotary_factor", 1.0))
    if partial not in (None, 1, 1.0):
        raise InputError(Notice(N_("partial_rotary_factor {value} is not supported (only 1: RoPE on the whole head)"),
                                value=repr(partial)))
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
    return {"rope_theta": theta, "rope_type": kind, "rope_scaling": tuple(sorted(scaling))}


# The parameters each kind reads; the first _ROPE_REQUIRED of them must be given.
_ROPE_PARAMETERS = {
    "default": (),
    "linear": ("factor",),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor", "mscale",
             "mscale_all_dim", "truncate"),
}
_ROPE_REQUIRED = {"default": 0, "linear": 1, "llama3": 4, "yarn": 2}
