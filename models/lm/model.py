"""A decoder language model in flax.nnx (GPT-2, the Llama family, Phi-3, Gemma 2/3, GPT-NeoX, OLMo 2): the modules,
which own parameters only.

``DecoderLM`` is laid out the same way for every architecture (kernels stored (in, out));
models/lm/loader.py maps each Hugging Face tensor name onto it. The maths is elsewhere, in pure
functions: models/lm/layers.py (norms, RoPE, the feed-forward network, each layer's attention rules)
and models/lm/forward.py, the one forward every view calls (``decoder``), its jitted entries
(``forward``, ``captured``) and ``run``, which pads token ids to length buckets so that a new length
does not compile again. Those entry points are importable from here too, where callers have always
found them.

Shapes: B batch, T (padded) tokens, D hidden, H query heads, K key/value heads, d head_dim, F
feed-forward width, V vocabulary, L layers.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import nnx

from models.lm.config import LMConfig
from models.lm.forward import (  # noqa: F401 - the entry points callers import from here
    LENGTH_BUCKETS,
    decoder_forward,
    forward,
    pad_ids,
    run,
)

# ----------------------------------------------------------------------------- modules


def _normal(rngs: nnx.Rngs, shape: tuple[int, ...], std: float) -> nnx.Param:
    return nnx.Param(std * jax.random.normal(rngs.params(), shape, jnp.float32))


class Dense(nnx.Module):
    """x @ kernel [in, out] (+ bias [out])."""

    def __init__(self, fan_in: int, fan_out: int, *, bias: bool, rngs: nnx.Rngs, std: float = 0.02):
        self.kernel = _normal(rngs, (fan_in, fan_out), std)
        self.bias = nnx.Param(jnp.zeros((fan_out,), jnp.float32)) if bias else None


class Norm(nnx.Module):
    """LayerNorm (scale and bias) or RMSNorm (scale only) over the last axis."""

    def __init__(self, width: int, *, bias: bool):
        self.scale = nnx.Param(jnp.ones((width,), jnp.float32))
        self.bias = nnx.Param(jnp.zeros((width,), jnp.float32)) if bias else None


class DecoderLayer(nnx.Module):
    """One block: attention (q, k, v, o) and feed-forward (fc/proj or gate/up/down), each with a norm before it
    (attn_norm, mlp_norm), after it (post_attn_norm, post_mlp_norm) or both, as cfg.arch.norms says."""

    def __init__(self, cfg: LMConfig, *, rngs: nnx.Rngs):
        d, hd, f = cfg.hidden_size, cfg.head_dim, cfg.intermediate_size
        layer_norm = cfg.arch.norm == "layer"
        residual_std = 0.02 / math.sqrt(2 * cfg.num_layers)  # GPT-2's scaled init of the residual outputs
        if cfg.arch.norms != "post":
            self.attn_norm = Norm(d, bias=layer_norm)
        self.q = Dense(d, cfg.num_heads * hd, bias=cfg.qkv_bias, rngs=rngs)
        self.k = Dense(d, cfg.num_kv_heads * hd, bias=cfg.qkv_bias, rngs=rngs)
        self.v = Dense(d, cfg.num_kv_heads * hd, bias=cfg.qkv_bias, rngs=rngs)
        self.o = Dense(cfg.num_heads * hd, d, bias=cfg.o_bias, rngs=rngs, std=residual_std)
        if cfg.qk_norm:  # per head (width d) or over the whole projection (H·d and K·d)
            whole = cfg.qk_norm == "all"
            self.q_norm = Norm(cfg.num_heads * hd if whole else hd, bias=False)
            self.k_norm = Norm(cfg.num_kv_heads * hd if whole else hd, bias=False)
        if cfg.arch.norms != "post":
            self.mlp_norm = Norm(d, bias=layer_norm)
        if cfg.arch.norms != "pre":
            self.post_attn_norm = Norm(d, bias=layer_norm)
            self.post_mlp_norm = Norm(d, bias=layer_norm)
        if cfg.arch.mlp == "gated":
            self.gate = Dense(d, f, bias=cfg.mlp_bias, rngs=rngs)
            self.up = Dense(d, f, bias=cfg.mlp_bias, rngs=rngs)
            self.down = Dense(f, d, bias=cfg.mlp_bias, rngs=rngs, std=residual_std)
        else:
            self.fc = Dense(d, f, bias=cfg.mlp_bias, rngs=rngs)
            self.proj = Dense(f, d, bias=cfg.mlp_bias, rngs=rngs, std=residual_std)


class DecoderLM(nnx.Module):
    """Token embeddings (+ learned positions), L decoder layers, a final norm and the LM head."""

    def __init__(self, cfg: LMConfig, *, rngs: nnx.Rngs):
        self.config = cfg
        self.embed = _normal(rngs, (cfg.vocab_size, cfg.hidden_size), 0.02)
        if cfg.arch.positions == "learned":
            self.positions = _normal(rngs, (cfg.max_positions, cfg.hidden_size), 0.01)
        self.layers = nnx.List([DecoderLayer(cfg, rngs=rngs) for _ in range(cfg.num_layers)])
        self.final_norm = Norm(cfg.hidden_size, bias=cfg.arch.norm == "layer")
        if not cfg.tie_word_embeddings:
            self.lm_head = Dense(cfg.hidden_size, cfg.vocab_size, bias=False, rngs=rngs)

    def __call__(self, ids, key_mask):
        """Returns (logits [B, T, V], attention [L, B, H, T, T]); see decoder_forward."""
        return decoder_forward(self, ids, key_mask)
