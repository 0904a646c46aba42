"""A two-layer attention-only causal transformer (no MLPs), after Elhage et al. (2021).

    x_0 = E[tokens] + P[positions]
    x_{l+1} = x_l + Σ_h softmax_causal(Q_h K_hᵀ / √d) V_h W_O,h     with Q, K, V from LN(x_l)
    logits = LN(x_2) U

Each layer's heads read a layer norm of the residual stream and write back into it; there is
no MLP, so everything the model computes is attention and the paths through it. An induction
head needs both layers: a layer-0 head copies the previous token into each position, and a
layer-1 head's key reads it (K-composition), so it attends to "the token after an earlier
copy of me" and copies that token to the output.

The maths is in pure functions (``layer_norm``, ``causal_attention``, ``forward``); modules own
parameters only; ``apply`` is the jitted pure function of (params, tokens).
Shapes: B = batch, T = tokens, D = width, H = heads, d = D / H, V = vocabulary, L = layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models import padding
from models.induction.task import SEQUENCE_LENGTH, VOCAB

# Inputs are padded at the end to one of these lengths: causal attention never looks ahead,
# so padding changes nothing for the real positions, and only three shapes ever compile.
LENGTH_BUCKETS = (16, 32, SEQUENCE_LENGTH)
BATCH_BUCKETS = (1, 8, 64)


@dataclass(frozen=True)
class InductionConfig:
    """Sizes of the attention-only transformer; frozen, so it doubles as a cache key."""

    vocab: int = len(VOCAB)
    max_length: int = SEQUENCE_LENGTH
    layers: int = 2
    heads: int = 4
    width: int = 64

    def __post_init__(self):
        if self.width % self.heads:
            raise ValueError(f"width {self.width} is not a multiple of {self.heads} heads")

    @property
    def head_dim(self) -> int:
        """Returns d = width / heads."""
        return self.width // self.heads


PRESETS = {"induction": InductionConfig(), "tiny": InductionConfig(heads=2, width=16)}


def _normal(rngs: nnx.Rngs, shape: tuple[int, ...], std: float) -> nnx.Param:
    return nnx.Param(std * jax.random.normal(rngs.params(), shape, jnp.float32))


class AttentionLayer(nnx.Module):
    """One layer's parameters: its layer norm and every head's W_Q, W_K, W_V, W_O."""

    def __init__(self, cfg: InductionConfig, *, rngs: nnx.Rngs):
        d, h, k = cfg.width, cfg.heads, cfg.head_dim
        self.norm_scale = nnx.Param(jnp.ones((d,), jnp.float32))
        self.norm_bias = nnx.Param(jnp.zeros((d,), jnp.float32))
        self.w_q = _normal(rngs, (d, h, k), d**-0.5)  # [D, H, d]
        self.w_k = _normal(rngs, (d, h, k), d**-0.5)
        self.w_v = _normal(rngs, (d, h, k), d**-0.5)
        self.w_o = _normal(rngs, (h, k, d), (h * k) ** -0.5 / np.sqrt(2 * cfg.layers))  # [H, d, D]


class AttentionOnly(nnx.Module):
    """Parameters of the whole model: embeddings, the attention layers, the final norm, the unembedding."""

    def __init__(self, cfg: InductionConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        self.token_embed = _normal(rngs, (cfg.vocab, cfg.width), 0.5)  # [V, D]
        self.position_embed = _normal(rngs, (cfg.max_length, cfg.width), 0.5)  # [Tmax, D]
        self.layers = nnx.List([AttentionLayer(cfg, rngs=rngs) for _ in range(cfg.layers)])
        self.final_scale = nnx.Param(jnp.ones((cfg.width,), jnp.float32))
        self.final_bias = nnx.Param(jnp.zeros((cfg.width,), jnp.float32))
        self.unembed = _normal(rngs, (cfg.width, cfg.vocab), cfg.width**-0.5)  # [D, V]


# ----------------------------------------------------------------------- pure functions


def layer_norm(x, scale, bias, eps: float = 1e-5):
    """Returns (x − mean) / √(var + eps) · scale + bias over the last axis.  x [..., D]."""
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * scale + bias


def causal_attention(q, k):
    """Returns softmax(q kᵀ / √d) with keys after the query masked out: float32 [B, H, T, T].

    q, k [B, T, H, d]. Masked weights are exactly 0.
    """
    q, k = jnp.swapaxes(q, 1, 2), jnp.swapaxes(k, 1, 2)  # [B, H, T, d]: plain batched matmuls
    scores = jnp.matmul(q, jnp.swapaxes(k, -1, -2)) / jnp.sqrt(jnp.float32(q.shape[-1]))
    t = q.shape[2]
    allowed = jnp.tril(jnp.ones((t, t), bool))
    scores = jnp.where(allowed, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1)


def attention_layer(layer: AttentionLayer, x):
    """Returns (what the layer adds to the residual [B, T, D], its weights [B, H, T, T]).  x [B, T, D]."""
    normed = layer_norm(x, layer.norm_scale[...], layer.norm_bias[...])
    q = jnp.einsum("btd,dhk->bthk", normed, layer.w_q[...])
    k = jnp.einsum("btd,dhk->bthk", normed, layer.w_k[...])
    v = jnp.einsum("btd,dhk->bthk", normed, layer.w_v[...])
    weights = causal_attention(q, k)
    mixed = jnp.matmul(weights, jnp.swapaxes(v, 1, 2))  # [B, H, T, d]
    return jnp.einsum("bhqd,hdm->bqm", mixed, layer.w_o[...]), weights


def forward(model: AttentionOnly, tokens):
    """Returns (logits [B, T, V], attention [B, L, H, T, T]).  tokens int [B, T], T <= max_length."""
    t = tokens.shape[1]
    # A one-hot product, not a gather: on CPU the gather's gradient (a scatter-add) costs more
    # than the rest of the training step.
    x = jax.nn.one_hot(tokens, model.cfg.vocab, dtype=jnp.float32) @ model.token_embed[...]
    x = x + model.position_embed[...][:t][None]
    maps = []
    for layer in model.layers:
        delta, weights = attention_layer(layer, x)
        x = x + delta
        maps.append(weights)
    logits = layer_norm(x, model.final_scale[...], model.final_bias[...]) @ model.unembed[...]
    return logits, jnp.stack(maps, axis=1)


def make_model(cfg: InductionConfig, seed: int = 0) -> tuple[nnx.GraphDef, nnx.State]:
    """Returns (graphdef, params) of a freshly initialised model (split once)."""
    return nnx.split(AttentionOnly(cfg, rngs=nnx.Rngs(seed)))


def abstract_model(cfg: InductionConfig) -> tuple[nnx.GraphDef, nnx.State]:
    """Returns (graphdef, abstract params): shapes only, no initialiser runs (for loading)."""
    return nnx.split(nnx.eval_shape(lambda: AttentionOnly(cfg, rngs=nnx.Rngs(0))))


@partial(jax.jit, static_argnames=("graphdef",))
def apply(graphdef, params, tokens):
    """Returns (logits [B, T, V], attention [B, L, H, T, T]) — see forward."""
    return forward(nnx.merge(graphdef, params), tokens)


def pad_tokens(sequences: list[np.ndarray]) -> np.ndarray:
    """Returns int32 [rows, bucket]: the sequences padded at the end with [BOS] (id 0) to a length
    bucket, and with padding rows to a batch bucket. Causal attention keeps real positions exact."""
    width = padding.bucket(max(len(s) for s in sequences), LENGTH_BUCKETS)
    n = len(sequences)
    rows = padding.bucket(n, BATCH_BUCKETS) if n <= BATCH_BUCKETS[-1] else -(-n // BATCH_BUCKETS[-1]) * BATCH_BUCKETS[-1]
    out = np.zeros((rows, width), np.int32)
    for i, s in enumerate(sequences):
        out[i, : len(s)] = s
    return out
