"""A decoder language model in flax.nnx (GPT-2 and the Llama family) that returns every attention map.

``DecoderLM`` owns parameters only, laid out the same way for every architecture (kernels stored
(in, out)); models/lm/loader.py maps each Hugging Face tensor name onto it. The maths lives in pure
functions: ``decoder_forward`` runs a merged module (training differentiates it), ``forward`` is
the jitted pure function of (graphdef, state, ids, mask) that the app, the CLI and the bench call,
and ``run`` pads token ids to length buckets so that a new length does not compile again.

Shapes: B batch, T (padded) tokens, D hidden, H query heads, K key/value heads, G = H / K query
heads per key/value head, d head_dim, F feed-forward width, V vocabulary, L layers.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.lm.config import LMConfig
from models.padding import bucket

# Length buckets: every input is padded up to one of these (masked), so a page compiles a few times.
LENGTH_BUCKETS = (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)

ACTIVATION_FUNCTIONS = {
    "gelu": functools.partial(jax.nn.gelu, approximate=False),  # HF "gelu" is the erf form
    "gelu_new": functools.partial(jax.nn.gelu, approximate=True),
    "gelu_fast": functools.partial(jax.nn.gelu, approximate=True),
    "gelu_pytorch_tanh": functools.partial(jax.nn.gelu, approximate=True),
    "quick_gelu": lambda x: x * jax.nn.sigmoid(1.702 * x),
    "relu": jax.nn.relu,
    "silu": jax.nn.silu,
    "swish": jax.nn.silu,
}

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
    """One block: norm, attention (q, k, v, o), norm, feed-forward (fc/proj or gate/up/down)."""

    def __init__(self, cfg: LMConfig, *, rngs: nnx.Rngs):
        d, hd, f = cfg.hidden_size, cfg.head_dim, cfg.intermediate_size
        layer_norm = cfg.arch.norm == "layer"
        residual_std = 0.02 / math.sqrt(2 * cfg.num_layers)  # GPT-2's scaled init of the residual outputs
        self.attn_norm = Norm(d, bias=layer_norm)
        self.q = Dense(d, cfg.num_heads * hd, bias=cfg.qkv_bias, rngs=rngs)
        self.k = Dense(d, cfg.num_kv_heads * hd, bias=cfg.qkv_bias, rngs=rngs)
        self.v = Dense(d, cfg.num_kv_heads * hd, bias=cfg.qkv_bias, rngs=rngs)
        self.o = Dense(cfg.num_heads * hd, d, bias=cfg.o_bias, rngs=rngs, std=residual_std)
        if cfg.qk_norm:
            self.q_norm = Norm(hd, bias=False)
            self.k_norm = Norm(hd, bias=False)
        self.mlp_norm = Norm(d, bias=layer_norm)
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


# ----------------------------------------------------------------------------- maths


def dense(layer: Dense, x):
    # x [..., in] -> [..., out]
    y = jnp.matmul(x, layer.kernel[...])
    return y if layer.bias is None else y + layer.bias[...]


def normalize(norm: Norm, x, eps: float):
    """Returns LayerNorm(x) (with a bias) or RMSNorm(x) (without), as PyTorch computes them in float32."""
    if norm.bias is None:
        return norm.scale[...] * (x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps))
    mean = jnp.mean(x, axis=-1, keepdims=True)
    centred = x - mean
    var = jnp.mean(centred * centred, axis=-1, keepdims=True)
    return centred * jax.lax.rsqrt(var + eps) * norm.scale[...] + norm.bias[...]


def rope_frequencies(cfg: LMConfig) -> tuple[np.ndarray, float]:
    """Returns (inverse frequencies [d/2] float32, attention factor) of the config's RoPE kind.

    After transformers' modeling_rope_utils.py: default, linear (positions / factor), llama3
    (long wavelengths slowed by factor, a smooth band between) and yarn (ramp between
    interpolation and extrapolation, cos and sin scaled by the attention factor).
    """
    dim, base = cfg.head_dim, float(cfg.rope_theta)
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    factor = float(cfg.rope_value("factor", 1.0))
    scaling = 1.0
    if cfg.rope_type == "linear":
        inv_freq = inv_freq / factor
    elif cfg.rope_type == "llama3":
        old = float(cfg.rope_value("original_max_position_embeddings"))
        low, high = float(cfg.rope_value("low_freq_factor")), float(cfg.rope_value("high_freq_factor"))
        wavelen = 2 * math.pi / inv_freq
        slowed = np.where(wavelen > old / low, inv_freq / factor, inv_freq)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * slowed / factor + smooth * slowed
        medium = (wavelen >= old / high) & (wavelen <= old / low)
        inv_freq = np.where(medium, smoothed, slowed)
    elif cfg.rope_type == "yarn":
        inv_freq, scaling = _yarn(cfg, dim, base, factor)
    return inv_freq.astype(np.float32), float(scaling)


def _yarn(cfg: LMConfig, dim: int, base: float, factor: float) -> tuple[np.ndarray, float]:
    original = float(cfg.rope_value("original_max_position_embeddings"))

    def mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    attention_factor = cfg.rope_value("attention_factor")
    if attention_factor is None:
        m, m_all = cfg.rope_value("mscale"), cfg.rope_value("mscale_all_dim")
        attention_factor = mscale(factor, m) / mscale(factor, m_all) if m and m_all else mscale(factor)
    beta_fast, beta_slow = float(cfg.rope_value("beta_fast", 32.0)), float(cfg.rope_value("beta_slow", 1.0))

    def correction_dim(rotations: float) -> float:
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if cfg.rope_value("truncate", 1.0):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extrapolation = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    interpolation = extrapolation / factor
    extrapolation_share = 1 - ramp
    inv_freq = interpolation * (1 - extrapolation_share) + extrapolation * extrapolation_share
    return inv_freq, float(attention_factor)


def rotate_half(x):
    # [..., d] -> [-x2, x1], Hugging Face's convention (the two halves, not interleaved pairs)
    half = x.shape[-1] // 2
    return jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply_rope(x, cos, sin):
    """Returns x rotated by position.  x [B, heads, T, d]; cos, sin [T, d]."""
    return x * cos + rotate_half(x) * sin


def _heads(x, heads: int, head_dim: int):
    # [B, T, heads·d] -> [B, T, heads, d]
    return x.reshape(x.shape[0], x.shape[1], heads, head_dim)


def attention_layer(layer: DecoderLayer, cfg: LMConfig, x, allowed, rope, layer_index: int):
    """Returns (output [B, T, D], probabilities [B, H, T, T]) of one layer's attention.

    x [B, T, D] (already normalised); allowed bool [B, 1, 1, T, T] (causal and real keys);
    rope (cos, sin) [T, d] or None. Grouped-query attention without copying keys: q is viewed
    as [B, K, G, T, d] against k [B, K, 1, d, T], and the probabilities reshape to one map
    per query head (head h reads key/value head h // G, as Hugging Face's repeat_kv).
    """
    b, t, _ = x.shape
    h, kv, hd = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
    q, k, v = _heads(dense(layer.q, x), h, hd), _heads(dense(layer.k, x), kv, hd), _heads(dense(layer.v, x), kv, hd)
    if cfg.qk_norm:
        q, k = normalize(layer.q_norm, q, cfg.norm_eps), normalize(layer.k_norm, k, cfg.norm_eps)
    q, k, v = (jnp.transpose(a, (0, 2, 1, 3)) for a in (q, k, v))  # [B, heads, T, d]
    if rope is not None:
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)
    scale = 1.0
    if cfg.scale_attn_weights:
        scale /= math.sqrt(hd)
    if cfg.scale_attn_by_inverse_layer_idx:
        scale /= layer_index + 1
    g = cfg.queries_per_kv
    q = q.reshape(b, kv, g, t, hd)
    scores = jnp.matmul(q, jnp.swapaxes(k, -1, -2)[:, :, None]) * jnp.float32(scale)  # [B, K, G, T, T]
    scores = jnp.where(allowed, scores, jnp.finfo(jnp.float32).min)
    exp = jnp.exp(scores - jnp.max(scores, axis=-1, keepdims=True))  # masked: exp underflows to exactly 0
    probs = exp * (1.0 / jnp.sum(exp, axis=-1, keepdims=True))
    context = jnp.matmul(probs, v[:, :, None])  # [B, K, G, T, d]
    merged = jnp.transpose(context.reshape(b, h, t, hd), (0, 2, 1, 3)).reshape(b, t, h * hd)
    return dense(layer.o, merged), probs.reshape(b, h, t, t)


def feed_forward(layer: DecoderLayer, cfg: LMConfig, x):
    """Returns the feed-forward output [B, T, D] of x [B, T, D] (already normalised)."""
    act = ACTIVATION_FUNCTIONS[cfg.activation]
    if cfg.arch.mlp == "gated":
        return dense(layer.down, act(dense(layer.gate, x)) * dense(layer.up, x))
    return dense(layer.proj, act(dense(layer.fc, x)))


def allowed_keys(cfg: LMConfig, key_mask):
    """Returns bool [B, 1, 1, T, T]: key j is visible from query i (j <= i, j real, inside any sliding window).

    key_mask bool [B, T], True for real tokens (padding sits at the end).
    """
    t = key_mask.shape[1]
    query = jax.lax.broadcasted_iota(jnp.int32, (t, t), 0)
    key = jax.lax.broadcasted_iota(jnp.int32, (t, t), 1)
    allowed = key <= query
    if cfg.sliding_window is not None:
        allowed &= query - key < cfg.sliding_window
    return (allowed[None] & key_mask[:, None, :])[:, None, None]


def decoder_forward(model: DecoderLM, ids, key_mask, *, logits: bool | str = True,
                    attention: bool | tuple[int, ...] = True, stack: bool = True):
    """Returns (logits [B, T, V] or None, attention [L', B, H, T, T] float32 or None).

    ids int32 [B, T]; key_mask bool [B, T], True for real tokens, padding at the end. Positions
    are 0..T-1. Attention above the diagonal and on padding keys is exactly 0. attention: True
    for every layer's maps (L' = L), a tuple of layer indices for those layers' only, False for none.
    logits "loss": instead of logits, each position's next-token loss in nats [B, T] (-log p of
    ids[:, t + 1]; 0 at the last position), without handing [B, T, V] back. stack=False: the
    maps as a tuple of L' arrays [B, H, T, T] (no copy into one array inside the computation).
    """
    cfg = model.config
    x = model.embed[...][ids]
    rope = None
    if cfg.arch.positions == "learned":
        # A length bucket may pass the table's end; only padding sits there (texts are cut to fit).
        positions = jnp.minimum(jnp.arange(ids.shape[1]), cfg.max_positions - 1)
        x = x + model.positions[...][positions][None]
    else:
        inv_freq, factor = rope_frequencies(cfg)
        angles = jnp.arange(ids.shape[1], dtype=jnp.float32)[:, None] * jnp.asarray(inv_freq)[None]  # [T, d/2]
        angles = jnp.concatenate([angles, angles], axis=-1)
        rope = (jnp.cos(angles) * factor, jnp.sin(angles) * factor)
    allowed = allowed_keys(cfg, key_mask)
    maps = []
    for index, layer in enumerate(model.layers):
        out, probs = attention_layer(layer, cfg, normalize(layer.attn_norm, x, cfg.norm_eps), allowed, rope, index)
        x = x + out
        x = x + feed_forward(layer, cfg, normalize(layer.mlp_norm, x, cfg.norm_eps))
        if attention is True or (attention and index in attention):
            maps.append(probs)
    result_logits = None
    if logits:
        x = normalize(model.final_norm, x, cfg.norm_eps)
        head = model.embed[...].T if cfg.tie_word_embeddings else model.lm_head.kernel[...]
        result_logits = jnp.matmul(x, head)
        if logits == "loss":
            log_probs = jax.nn.log_softmax(result_logits[:, :-1], axis=-1)
            picked = jnp.take_along_axis(log_probs, ids[:, 1:, None], axis=-1)[..., 0]
            result_logits = jnp.pad(-picked, ((0, 0), (0, 1)))
    if not maps:
        return result_logits, None
    return result_logits, (jnp.stack(maps) if stack else tuple(maps))


# ----------------------------------------------------------------------------- the jitted entry


@functools.partial(jax.jit, static_argnames=("graphdef", "logits", "attention"))
def forward(state, ids, key_mask, *, graphdef, logits: bool | str = True, attention: bool | tuple[int, ...] = True):
    """Returns decoder_forward's (logits, attention as a tuple of L' maps [B, H, T, T]) of nnx.merge(graphdef, state).

    A pure function of arrays, jitted once per (graphdef, shape): split the module once with
    nnx.split and pass the state; the merge happens while tracing only. The maps stay one buffer
    per layer, as XLA computed them: callers cut the padding off while copying them into one
    array (run), so stacking them here would copy every map twice.
    """
    return decoder_forward(nnx.merge(graphdef, state), ids, key_mask, logits=logits, attention=attention, stack=False)


def pad_ids(ids: np.ndarray, buckets=LENGTH_BUCKETS) -> tuple[np.ndarray, np.ndarray]:
    """Returns (ids int32 [B, T'], key_mask bool [B, T']) padded with zeros up to a length bucket.

    ids int [B, T]. numpy only: a jnp op on a new shape would compile.
    """
    ids = np.asarray(ids, dtype=np.int32)
    b, t = ids.shape
    padded = bucket(t, buckets)
    out = np.zeros((b, padded), np.int32)
    out[:, :t] = ids
    mask = np.zeros((b, padded), bool)
    mask[:, :t] = True
    return out, mask


def run(graphdef, state, ids: np.ndarray, *, logits: bool | str = True, attention: bool | tuple[int, ...] = True,
        buckets=LENGTH_BUCKETS):
    """Returns numpy (logits [B, T, V] or None, attention [L', B, H, T, T] or None) of token ids [B, T].

    The ids are padded to a length bucket and the outputs cut back to T; attention as in decoder_forward.
    """
    t = np.shape(ids)[1]
    padded, mask = pad_ids(ids, buckets)
    out_logits, maps = forward(state, padded, mask, graphdef=graphdef, logits=logits, attention=attention)
    out_logits = None if out_logits is None else np.asarray(out_logits)[:, :t]
    if maps is None:
        return out_logits, None
    stacked = np.empty((len(maps), padded.shape[0], maps[0].shape[1], t, t), np.float32)
    for index, layer in enumerate(maps):
        stacked[index] = np.asarray(layer)[:, :, :t, :t]
    return out_logits, stacked
