"""The hyper-parameters of a BERT-family encoder, without Flax (code that only runs a stored executable,
models/aot.py, reads them too).

One dataclass describes every family the encoder forward runs (models/transformer/model.py): BERT (and MiniLM),
RoBERTa, XLM-RoBERTa, DistilBERT, ELECTRA and ModernBERT. ``from_hf`` reads a config.json once into it: what
differs between the families is a handful of fields (where positions come from, pre- or post-norm, a gated
MLP, biases, local windows), so the forward branches on them statically instead of existing once per family.
A config option the forward does not implement is refused by name (UnsupportedOption), never ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import jax

# Activations a config may name, with HF's meaning of each name.
ACTIVATIONS = {
    "gelu": lambda x: jax.nn.gelu(x, approximate=False),  # HF "gelu" is the exact erf form
    "gelu_new": lambda x: jax.nn.gelu(x, approximate=True),
    "gelu_pytorch_tanh": lambda x: jax.nn.gelu(x, approximate=True),
    "relu": jax.nn.relu,
}

# Upper bounds of a config's sizes: larger values are not an encoder this app can run (and a
# config.json asking for them would allocate without limit).
_SIZE_LIMITS = {
    "vocab_size": 1_000_000, "hidden_size": 8_192, "num_hidden_layers": 64, "num_attention_heads": 128,
    "intermediate_size": 65_536, "max_position_embeddings": 8_192, "type_vocab_size": 16,
}
# How a family places tokens: learned absolute rows from 0 (BERT, ELECTRA, DistilBERT), learned rows from
# padding index + 1 (RoBERTa, XLM-R: HF's create_position_ids_from_input_ids), or rotary (ModernBERT).
POSITIONS = ("absolute", "roberta", "rope")
FULL, SLIDING = "full", "sliding"  # the attention of a layer: every key, or keys within `window` positions


class UnsupportedOption(ValueError):
    """A config.json option (or value) the encoder forward does not implement; the message names it."""


@dataclass(frozen=True)
class BertConfig:
    """The hyper-parameters of a BERT-family encoder; the defaults are BERT's.

    Frozen and hashable, so it doubles as a cache key (and a static argument of the jitted forward).
    model_type: the folder's family ("bert", "roberta", "xlm-roberta", "distilbert", "electra", "modernbert");
    embedding_size: the width of the embeddings, projected to hidden_size when they differ (ELECTRA; 0 = the
    same); positions: one of POSITIONS; sinusoidal_positions: a folder without a position table gets the
    fixed sinusoidal one (DistilBERT's sinusoidal_pos_embds); pre_norm: LayerNorm before each sub-layer and once at the end
    (ModernBERT) instead of after each residual sum; gated_mlp: GeGLU, act(x W_in) ⊙ (x W_gate);
    *_bias: whether those layers have biases; layer_types: FULL or SLIDING per layer (empty = all FULL);
    window: a sliding layer's keys are those within window positions of the query, both sides;
    rope_theta / local_rope_theta: the RoPE base of full and of sliding layers.
    """

    vocab_size: int = 30522
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"
    pad_token_id: int = 0
    model_type: str = "bert"
    embedding_size: int = 0
    positions: str = "absolute"
    sinusoidal_positions: bool = False
    pre_norm: bool = False
    gated_mlp: bool = False
    attention_bias: bool = True
    mlp_bias: bool = True
    norm_bias: bool = True
    layer_types: tuple[str, ...] = ()
    window: int = 0
    rope_theta: float = 10000.0
    local_rope_theta: float = 10000.0

    def __post_init__(self):
        for name, high in _SIZE_LIMITS.items():
            value = getattr(self, name)
            if name == "type_vocab_size" and value == 0:
                continue  # no token types (DistilBERT, ModernBERT)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise ValueError(f"{name}: {value!r} is not a whole number from 1 to {high:,}")
        if not isinstance(self.layer_norm_eps, (int, float)) or not 0 < self.layer_norm_eps < 1:
            raise ValueError(f"layer_norm_eps: {self.layer_norm_eps!r} is not a number between 0 and 1")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size {self.hidden_size} is not divisible by num_attention_heads {self.num_attention_heads}"
            )
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(f"hidden_act {self.hidden_act!r} is not supported; known: {', '.join(ACTIVATIONS)}")
        if self.positions not in POSITIONS:
            raise ValueError(f"positions {self.positions!r} is not one of {', '.join(POSITIONS)}")
        if isinstance(self.embedding_size, bool) or not isinstance(self.embedding_size, int) or not (
                0 <= self.embedding_size <= _SIZE_LIMITS["hidden_size"]):
            raise ValueError(f"embedding_size: {self.embedding_size!r} is not a whole number from 0 to 8,192")
        if self.layer_types and (len(self.layer_types) != self.num_hidden_layers
                                 or any(t not in (FULL, SLIDING) for t in self.layer_types)):
            raise ValueError(f"layer_types {list(self.layer_types)!r} is not one of '{FULL}'/'{SLIDING}' per layer")
        if not isinstance(self.pad_token_id, int) or not 0 <= self.pad_token_id < self.vocab_size:
            raise ValueError(f"pad_token_id: {self.pad_token_id!r} is not a token id below vocab_size {self.vocab_size}")
        if self.positions == "rope" and (self.head_dim % 2 or min(self.rope_theta, self.local_rope_theta) <= 0):
            raise ValueError("rotary positions need an even head width and positive rope thetas")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @property
    def embedding_width(self) -> int:
        """The width of the word embeddings (ELECTRA's embedding_size, else hidden_size)."""
        return self.embedding_size or self.hidden_size

    @property
    def position_offset(self) -> int:
        """The first position's row in the position table (RoBERTa: padding index + 1)."""
        return self.pad_token_id + 1 if self.positions == "roberta" else 0

    @property
    def max_tokens(self) -> int:
        """The most tokens one input may have (specials included)."""
        return self.max_position_embeddings - self.position_offset

    def layer_type(self, index: int) -> str:
        return self.layer_types[index] if self.layer_types else FULL

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BertConfig:
        """Returns the config from a dict of this class's own fields; missing fields keep BERT's defaults."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    @classmethod
    def from_hf(cls, data: dict[str, Any]) -> BertConfig:
        """Returns the config of a Hugging Face config.json of a supported family.

        Raises UnsupportedOption naming a model_type or an option the forward does not implement, ValueError
        (TypeError) for values out of range.
        """
        model_type = data.get("model_type")
        reader = _READERS.get(model_type)
        if reader is None:
            raise UnsupportedOption(f"model_type {model_type!r} is not a supported encoder "
                                    f"(supported: {', '.join(repr(t) for t in _READERS)})")
        if data.get("is_decoder") or data.get("add_cross_attention"):
            raise UnsupportedOption("is_decoder / add_cross_attention: a decoder is not an encoder this page runs")
        return cls(model_type=model_type, **reader(data))


def _activation(data: dict[str, Any], key: str, default: str = "gelu") -> str:
    act = data.get(key, default)
    if act not in ACTIVATIONS:
        raise UnsupportedOption(f"{key} {act!r} is not supported; known: {', '.join(ACTIVATIONS)}")
    return act


def _absolute_only(data: dict[str, Any]) -> None:
    kind = data.get("position_embedding_type", "absolute")
    if kind != "absolute":
        raise UnsupportedOption(f"position_embedding_type {kind!r} is not supported (only 'absolute')")


_BERT_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
              "max_position_embeddings", "type_vocab_size", "layer_norm_eps", "pad_token_id")


def _bert(data: dict[str, Any]) -> dict[str, Any]:
    _absolute_only(data)
    return {**{k: data[k] for k in _BERT_KEYS if k in data and data[k] is not None},
            "hidden_act": _activation(data, "hidden_act")}


def _roberta(data: dict[str, Any]) -> dict[str, Any]:
    return {**_bert(data), "positions": "roberta", "pad_token_id": data.get("pad_token_id", 1)}


def _electra(data: dict[str, Any]) -> dict[str, Any]:
    out = _bert(data)
    size = data.get("embedding_size", out.get("hidden_size", 128))
    return {**out, "embedding_size": 0 if size == out.get("hidden_size", 384) else size}


def _distilbert(data: dict[str, Any]) -> dict[str, Any]:
    # Sinusoidal positions are stored in the checkpoint as a table; a folder without one gets the
    # same table computed (models/transformer/checkpoint.py), as transformers' initialisation does.
    names = {"vocab_size": "vocab_size", "dim": "hidden_size", "n_layers": "num_hidden_layers",
             "n_heads": "num_attention_heads", "hidden_dim": "intermediate_size",
             "max_position_embeddings": "max_position_embeddings", "pad_token_id": "pad_token_id"}
    return {**{ours: data[hf] for hf, ours in names.items() if data.get(hf) is not None},
            "hidden_act": _activation(data, "activation"), "type_vocab_size": 0,
            "sinusoidal_positions": bool(data.get("sinusoidal_pos_embds", False))}


def _modernbert(data: dict[str, Any]) -> dict[str, Any]:
    for key in ("rope_scaling",):
        if data.get(key):
            raise UnsupportedOption(f"{key} {data[key]!r} is not supported (only plain RoPE)")
    layers = data.get("num_hidden_layers", 22)
    every = data.get("global_attn_every_n_layers", 3)
    hf_types = data.get("layer_types") or ["sliding_attention" if i % every else "full_attention" for i in range(layers)]
    kinds = {"full_attention": FULL, "sliding_attention": SLIDING}
    unknown = sorted({t for t in hf_types if t not in kinds}, key=str)
    if unknown:
        raise UnsupportedOption(f"layer_types {unknown!r} are not supported (only 'full_attention', 'sliding_attention')")
    thetas = {"full_attention": data.get("global_rope_theta", 160000.0),
              "sliding_attention": data.get("local_rope_theta", 10000.0)}
    for kind, params in (data.get("rope_parameters") or {}).items():
        if kind not in kinds or not isinstance(params, dict):
            raise UnsupportedOption(f"rope_parameters {kind!r} is not supported")
        if params.get("rope_type", "default") != "default":
            raise UnsupportedOption(f"rope_parameters[{kind!r}] rope_type {params['rope_type']!r} is not supported "
                                    "(only 'default')")
        thetas[kind] = params.get("rope_theta", thetas[kind])
    window = data.get("local_attention", 128)
    if isinstance(window, bool) or not isinstance(window, int) or window < 2:
        raise ValueError(f"local_attention: {window!r} is not a whole number of at least 2")
    keys = ("vocab_size", "hidden_size", "num_attention_heads", "intermediate_size", "max_position_embeddings",
            "pad_token_id")
    return {**{k: data[k] for k in keys if data.get(k) is not None}, "num_hidden_layers": layers,  # 22: HF's default
            "hidden_act": _activation(data, "hidden_activation"),
            "layer_norm_eps": data.get("norm_eps", 1e-5), "type_vocab_size": 0, "positions": "rope", "pre_norm": True,
            "gated_mlp": True, "attention_bias": bool(data.get("attention_bias", False)),
            "mlp_bias": bool(data.get("mlp_bias", False)), "norm_bias": bool(data.get("norm_bias", False)),
            "layer_types": tuple(kinds[t] for t in hf_types), "window": window // 2,
            "rope_theta": float(thetas["full_attention"]), "local_rope_theta": float(thetas["sliding_attention"])}


_READERS = {"bert": _bert, "roberta": _roberta, "xlm-roberta": _roberta, "distilbert": _distilbert,
            "electra": _electra, "modernbert": _modernbert}
