"""A tiny decoder whose attention is one of the variants, chosen by name (issue 57 §2): the same width, layers and
budget for every variant, so that what differs between two trained models is the attention alone.

    x_0 = E[tokens] (+ P[positions] for "learned")
    x_{l+½} = x_l + W_O · attend_variant(LN(x_l)),   x_{l+1} = x_{l+½} + MLP(LN(x_{l+½}))
    logits = LN(x_L) U

`attend` calls the variant's functions of models/variants/ (heads, positions, normalisers, gated, differential,
linear). MLA's and differential attention's scores are restated here around one premasked softmax (`_softmax`:
the library's masked softmax gave NaN gradients in training); tests/models/variants/test_model.py holds them equal
to heads.mla_attention and a numpy forward. Why not models/lm/forward.py's decoder: its attention is the
softmax of q kᵀ with optional RoPE, and it has no seam for another normaliser, a gate, MLA's latent or two maps.

Shapes: B batch, T tokens, D width, H heads, K key/value heads, d head width, V vocabulary, L layers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models import attention as core
from models.variants import differential as diff
from models.variants import gated, heads, linear, normalisers, positions

FLOAT32_BYTES = 4
HIDDEN = -1e9  # a future key's score
MLA_LATENT, MLA_QUERY_LATENT, MLA_ROPE = 16, 16, 4  # d_c, d_cq, d_r: the cache is d_c + d_r per token


class Spec(NamedTuple):
    """What a variant changes: kind (softmax, mla, differential, linear), key/value heads (None: one per query
    head), where positions enter (rope, learned, none, alibi), how scores become weights, a head-wise gate."""

    kind: str = "softmax"
    kv_heads: int | None = None
    positions: str = "rope"
    normaliser: str = "softmax"
    gate: bool = False


VARIANTS: dict[str, Spec] = {
    "mha": Spec(),  # the baseline: multi-head softmax attention with RoPE
    "gqa": Spec(kv_heads=2),
    "mqa": Spec(kv_heads=1),
    "mla": Spec(kind="mla"),
    "learned": Spec(positions="learned"),
    "nope": Spec(positions="none"),
    "alibi": Spec(positions="alibi"),
    "sigmoid": Spec(normaliser="sigmoid"),
    "sink": Spec(normaliser="sink"),
    "softmax1": Spec(normaliser="softmax1"),
    "gated": Spec(gate=True),
    "differential": Spec(kind="differential"),
    "linear": Spec(kind="linear"),
}


@dataclass(frozen=True)
class VariantConfig:
    """Sizes of the decoder and its attention variant; frozen, so it doubles as a jit cache key."""

    variant: str = "mha"
    vocab: int = 64
    max_length: int = 128  # the learned position table: 4× the longest training sequence
    layers: int = 2
    heads: int = 4
    width: int = 32
    mlp: int = 64  # 0: attention only

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; one of {', '.join(VARIANTS)}")
        if self.width % self.heads:
            raise ValueError(f"width {self.width} is not a multiple of {self.heads} heads")

    @property
    def spec(self) -> Spec:
        return VARIANTS[self.variant]

    @property
    def head_dim(self) -> int:
        """Returns d = width / heads."""
        return self.width // self.heads

    @property
    def kv_heads(self) -> int:
        """Returns K, the key/value heads (differential: H/2 heads of width 2d)."""
        if self.spec.kind == "differential":
            return self.heads // 2
        return self.spec.kv_heads or self.heads


def _normal(rngs: nnx.Rngs, shape: tuple[int, ...], std: float) -> nnx.Param:
    return nnx.Param(std * jax.random.normal(rngs.params(), shape, jnp.float32))


class Layer(nnx.Module):
    """One block's parameters: the attention variant's projections, the MLP, two layer norms."""

    def __init__(self, cfg: VariantConfig, *, rngs: nnx.Rngs):
        spec, dm, h, d = cfg.spec, cfg.width, cfg.heads, cfg.head_dim
        self.norm_scale, self.norm_bias = nnx.Param(jnp.ones((dm,))), nnx.Param(jnp.zeros((dm,)))
        out_std = (h * d) ** -0.5 / math.sqrt(2 * cfg.layers)
        if spec.kind == "mla":
            self.w_dq = _normal(rngs, (dm, MLA_QUERY_LATENT), dm**-0.5)
            self.w_uq = _normal(rngs, (MLA_QUERY_LATENT, h, d), MLA_QUERY_LATENT**-0.5)
            self.w_qr = _normal(rngs, (MLA_QUERY_LATENT, h, MLA_ROPE), MLA_QUERY_LATENT**-0.5)
            self.w_dkv = _normal(rngs, (dm, MLA_LATENT), dm**-0.5)
            self.w_uk = _normal(rngs, (MLA_LATENT, h, d), MLA_LATENT**-0.5)
            self.w_uv = _normal(rngs, (MLA_LATENT, h, d), MLA_LATENT**-0.5)
            self.w_kr = _normal(rngs, (dm, MLA_ROPE), dm**-0.5)
        else:  # differential reads the same widths as H/2 heads of 2d
            kv = h * d if spec.kind == "differential" else cfg.kv_heads * d
            self.w_q = _normal(rngs, (dm, h * d), dm**-0.5)
            self.w_k = _normal(rngs, (dm, kv), dm**-0.5)
            self.w_v = _normal(rngs, (dm, kv), dm**-0.5)
        if spec.kind == "differential":
            half = h // 2
            self.lambdas = _normal(rngs, (4, half, d), 0.1)  # λ_q1, λ_k1, λ_q2, λ_k2 per head
            self.diff_norm = nnx.Param(jnp.ones((half, 1, 2 * d)))
        if spec.normaliser == "sink":
            self.sink = nnx.Param(jnp.zeros((h, 1, 1)))
        if spec.gate:
            self.w_gate = _normal(rngs, (dm, h), dm**-0.5)
        self.w_o = _normal(rngs, (h * d, dm), out_std)
        if cfg.mlp:
            self.mlp_scale, self.mlp_bias = nnx.Param(jnp.ones((dm,))), nnx.Param(jnp.zeros((dm,)))
            self.w_in = _normal(rngs, (dm, cfg.mlp), dm**-0.5)
            self.w_out = _normal(rngs, (cfg.mlp, dm), cfg.mlp**-0.5 / math.sqrt(2 * cfg.layers))


class VariantModel(nnx.Module):
    """Parameters of the whole decoder: embeddings, the layers, the final norm, the unembedding."""

    def __init__(self, cfg: VariantConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        self.token_embed = _normal(rngs, (cfg.vocab, cfg.width), 1.0)
        if cfg.spec.positions == "learned":
            self.position_embed = _normal(rngs, (cfg.max_length, cfg.width), 0.5)
        self.layers = nnx.List([Layer(cfg, rngs=rngs) for _ in range(cfg.layers)])
        self.final_scale, self.final_bias = nnx.Param(jnp.ones((cfg.width,))), nnx.Param(jnp.zeros((cfg.width,)))
        self.unembed = _normal(rngs, (cfg.width, cfg.vocab), cfg.width**-0.5)


# ----------------------------------------------------------------------- the forward


def _layer_norm(x, scale, bias, eps: float = 1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * scale[...] + bias[...]


def _heads(x, count: int):
    # [B, T, count·w] -> [B, count, T, w]
    b, t, _ = x.shape
    return jnp.transpose(x.reshape(b, t, count, -1), (0, 2, 1, 3))


def _rope(x, width: int):
    # RoPE on the last axis of x [..., T, width]; numpy tables (static T).
    return positions.rotate(x, np.arange(x.shape[-2]), positions.rope_inverse_frequencies(width))


def _softmax(scores, causal):
    """Returns core.masked_softmax of scores whose future keys are first set to HIDDEN: masked_softmax computes exp of
    the masked scores too, and one that overflows (a future key scoring 88 above the visible ones, as happened in
    training) gives a NaN gradient through its jnp.where."""
    return core.masked_softmax(jnp.where(causal, scores, HIDDEN), causal)


def attend(layer: Layer, cfg: VariantConfig, index: int, x):
    """Returns (each head's output [B, H', T, d'], weights [B, H', T, T]) of the layer's attention variant on
    normalised hidden states x [B, T, D], causal. H' = H heads of d, or H/2 heads of 2d (differential)."""
    spec, h, d, t = cfg.spec, cfg.heads, cfg.head_dim, x.shape[1]
    causal = np.tril(np.ones((t, t), bool))
    if spec.kind == "mla":  # heads.mla_attention's naive form, its softmax premasked (test_model.py: equal)
        w = heads.LatentWeights(*(getattr(layer, n)[...] for n in heads.LatentWeights._fields))
        rope = positions.rope_tables(np.arange(t), positions.rope_inverse_frequencies(MLA_ROPE))
        latent, k_rope = heads.mla_cache(x, w, rope)
        q_content, q_rope = heads.mla_queries(x, w, rope)
        keys = jnp.einsum("...sc,chd->...hsd", latent, w.w_uk)
        scores = jnp.matmul(q_content, jnp.swapaxes(keys, -1, -2)) + jnp.matmul(
            q_rope, jnp.swapaxes(k_rope, -1, -2)[:, None]
        )
        weights = _softmax(scores * heads.mla_scale(w), causal)
        return core.context_vector(weights, jnp.einsum("...sc,chd->...hsd", latent, w.w_uv)), weights
    q, k, v = (jnp.matmul(x, getattr(layer, n)[...]) for n in ("w_q", "w_k", "w_v"))
    if spec.kind == "differential":
        half = h // 2
        q, k, v = _heads(q, half), _heads(k, half), _heads(v, half)  # [B, H/2, T, 2d]
        q = jnp.concatenate([_rope(q[..., :d], d), _rope(q[..., d:], d)], -1)
        k = jnp.concatenate([_rope(k[..., :d], d), _rope(k[..., d:], d)], -1)
        lq1, lk1, lq2, lk2 = layer.lambdas[...]
        lam = diff.differential_lambda(lq1, lk1, lq2, lk2, diff.lambda_init(index + 1))[:, None, None]
        # diff.differential_attention, its two softmaxes premasked (test_model.py: equal)
        weights = _softmax(core.scaled_dot_scores(q[..., :d], k[..., :d]), causal) - lam * _softmax(
            core.scaled_dot_scores(q[..., d:], k[..., d:]), causal
        )
        out = diff.rms_norm(core.context_vector(weights, v), layer.diff_norm[...])
        return (1.0 - diff.lambda_init(index + 1)) * out, weights
    q, k, v = _heads(q, h), _heads(k, cfg.kv_heads), _heads(v, cfg.kv_heads)
    if spec.positions == "rope":
        q, k = _rope(q, d), _rope(k, d)
    if spec.kind == "linear":
        out, weights = linear.linear_attention(q, k, v)
    else:
        groups = h // cfg.kv_heads  # GQA as heads.grouped_query_attention (test_model.py holds them equal)
        k, v = jnp.repeat(k, groups, axis=1), jnp.repeat(v, groups, axis=1)
        scores = jnp.where(causal, core.scaled_dot_scores(q, k), HIDDEN)  # see _softmax
        if spec.positions == "alibi":
            scores = scores + positions.alibi_bias(positions.alibi_slopes(h), np.arange(t), np.arange(t))
        if spec.normaliser == "sigmoid":
            weights = normalisers.sigmoid_attention_weights(scores, causal)
        elif spec.normaliser == "sink":
            weights = normalisers.sink_softmax(scores, layer.sink[...], causal)
        elif spec.normaliser == "softmax1":
            weights = normalisers.softmax_one(scores, causal)
        else:
            weights = _softmax(scores, causal)
        out = core.context_vector(weights, v)
    if spec.gate:
        out = gated.gated_output(out, gated.gate_logits(x, layer.w_gate[...], h))
    return out, weights


def forward(model: VariantModel, tokens):
    """Returns (logits [B, T, V], the maps: L arrays [B, H', T, T], the residual stream [L + 1, B, T, D])."""
    cfg = model.cfg
    x = jax.nn.one_hot(tokens, cfg.vocab, dtype=jnp.float32) @ model.token_embed[...]  # a gather's grad costs more
    if cfg.spec.positions == "learned":
        x = x + model.position_embed[...][: tokens.shape[1]][None]
    maps, stream = [], [x]
    for index, layer in enumerate(model.layers):
        out, weights = attend(layer, cfg, index, _layer_norm(x, layer.norm_scale, layer.norm_bias))
        b, hh, t, dv = out.shape
        x = x + jnp.matmul(jnp.transpose(out, (0, 2, 1, 3)).reshape(b, t, hh * dv), layer.w_o[...])
        if cfg.mlp:
            hidden = jax.nn.gelu(jnp.matmul(_layer_norm(x, layer.mlp_scale, layer.mlp_bias), layer.w_in[...]))
            x = x + jnp.matmul(hidden, layer.w_out[...])
        maps.append(weights)
        stream.append(x)
    logits = jnp.matmul(_layer_norm(x, model.final_scale, model.final_bias), model.unembed[...])
    return logits, tuple(maps), jnp.stack(stream)


@partial(jax.jit, static_argnames=("graphdef",))
def run(graphdef, params, tokens):
    """Returns forward's (logits, maps, residual stream) of tokens int [B, T]: jitted once per shape."""
    return forward(nnx.merge(graphdef, params), tokens)


def masked_loss(model: VariantModel, tokens, targets, scored):
    """Returns the mean next-token cross-entropy over the scored positions."""
    logits, _, _ = forward(model, tokens)
    import optax

    losses = optax.softmax_cross_entropy_with_integer_labels(logits, targets)
    return jnp.sum(losses * scored) / jnp.maximum(jnp.sum(scored), 1)


def make_model(cfg: VariantConfig, seed: int = 0) -> tuple[nnx.GraphDef, nnx.State]:
    """Returns (graphdef, params) of a freshly initialised model (split once)."""
    return nnx.split(VariantModel(cfg, rngs=nnx.Rngs(seed)))


def cache_bytes(cfg: VariantConfig) -> tuple[int, int]:
    """Returns (float32 bytes each token adds to the KV cache, fixed state bytes), summed over the layers.

    Softmax kinds cache K keys and values per token (differential: H/2 heads of 2d, as many numbers as MHA); MLA
    its latent and RoPE key; linear attention caches nothing per token and keeps a state of d·d + d per head.
    """
    kind, layers, d = cfg.spec.kind, cfg.layers, cfg.head_dim
    if kind == "linear":
        return 0, layers * cfg.heads * linear.linear_state_size(d, d) * FLOAT32_BYTES
    if kind == "mla":
        return layers * (MLA_LATENT + MLA_ROPE) * FLOAT32_BYTES, 0
    if kind == "differential":
        return layers * heads.kv_cache_bytes(cfg.heads // 2, 2 * d), 0
    return layers * heads.kv_cache_bytes(cfg.kv_heads, d), 0
