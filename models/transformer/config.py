"""The hyper-parameters of a BERT encoder, without Flax (code that only runs a stored executable,
models/aot.py, reads them too)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import jax

# Activations a BERT config may name, with HF's meaning of each name.
ACTIVATIONS = {
    "gelu": lambda x: jax.nn.gelu(x, approximate=False),  # HF "gelu" is the exact erf form
    "gelu_new": lambda x: jax.nn.gelu(x, approximate=True),
    "gelu_pytorch_tanh": lambda x: jax.nn.gelu(x, approximate=True),
    "relu": jax.nn.relu,
}


# Upper bounds of a config's sizes: larger values are not a BERT this app can run (and a
# config.json asking for them would allocate without limit).
_SIZE_LIMITS = {
    "vocab_size": 1_000_000, "hidden_size": 8_192, "num_hidden_layers": 64, "num_attention_heads": 128,
    "intermediate_size": 65_536, "max_position_embeddings": 8_192, "type_vocab_size": 16,
}


@dataclass(frozen=True)
class BertConfig:
    """The hyper-parameters of a BERT encoder (the fields of HF's config.json we use).

    Frozen and hashable, so it doubles as a cache key.
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

    def __post_init__(self):
        for name, high in _SIZE_LIMITS.items():
            value = getattr(self, name)
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

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BertConfig:
        """Returns the config from a config.json dict; missing fields keep BERT's defaults."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
