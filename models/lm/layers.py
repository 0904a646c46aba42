"""The decoder LM's maths in pure functions: dense layers, norms, RoPE, the feed-forward network, and the
rules of attention that a config fixes per layer (its scale and its sliding window).

models/lm/forward.py composes them into the one forward; nothing else writes a layer. The rules take
numpy or jax arrays alike (operators only), so that a view which shows one row in numpy (the neuron
view) applies the very rule the forward applied.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from models.lm.config import LMConfig

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


# ----------------------------------------------------------------------------- the rules of one layer


def attention_scale(cfg: LMConfig, layer: int) -> float:
    """Returns the factor of q · k in `layer`: 1/√d (GPT-2: unless scale_attn_weights is off; Gemma:
    query_pre_attn_scalar^-1/2), and 1/(layer + 1) where a GPT-2 config sets scale_attn_by_inverse_layer_idx."""
    if cfg.query_pre_attn_scalar is not None:
        return float(cfg.query_pre_attn_scalar) ** -0.5
    scale = 1.0 / math.sqrt(cfg.head_dim) if cfg.scale_attn_weights else 1.0
    return scale / (layer + 1) if cfg.scale_attn_by_inverse_layer_idx else scale


def softcap(x, cap: float | None):
    """Returns cap · tanh(x / cap) (Gemma 2's soft-capping of scores and logits), or x where cap is None.
    numpy or jax arrays alike."""
    if cap is None:
        return x
    tanh = np.tanh if isinstance(x, np.ndarray) else jnp.tanh
    return tanh(x / np.float32(cap)) * np.float32(cap)


def local_rope(cfg: LMConfig, layer: int) -> bool:
    """Returns whether `layer` turns q and k with the local RoPE (Gemma 3's sliding layers) rather than the global."""
    return cfg.local_rope_theta is not None and layer in cfg.sliding_layers


def layer_window(cfg: LMConfig, layer: int) -> int | None:
    """Returns the sliding window of `layer` (config.json's layer_types, or Qwen2's max_window_layers), or None."""
    return cfg.sliding_window if cfg.sliding_window is not None and layer in cfg.sliding_layers else None


def visible_keys(cfg: LMConfig, layer: int, query_positions, key_positions):
    """Returns bool [S, T]: a query at query_positions[i] may read the key at key_positions[j] in `layer`.

    Causal (the key is not later than the query) and, on a sliding layer, less than the window behind.
    query_positions int [S], key_positions int [T]: numpy or jax arrays.
    """
    behind = query_positions[:, None] - key_positions[None, :]
    allowed = behind >= 0
    window = layer_window(cfg, layer)
    return allowed if window is None else allowed & (behind < window)


# ----------------------------------------------------------------------------- layers


def dense(layer, x):
    # x [..., in] -> [..., out]
    y = jnp.matmul(x, layer.kernel[...])
    return y if layer.bias is None else y + layer.bias[...]


def normalize(norm, x, eps: float):
    """Returns LayerNorm(x) (with a bias) or RMSNorm(x) (without), as PyTorch computes them in float32.
    Gemma's (1 + w) scale is stored as such by the loader, so the formula is the same."""
    if norm.bias is None:
        return norm.scale[...] * (x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps))
    mean = jnp.mean(x, axis=-1, keepdims=True)
    centred = x - mean
    var = jnp.mean(centred * centred, axis=-1, keepdims=True)
    return centred * jax.lax.rsqrt(var + eps) * norm.scale[...] + norm.bias[...]


def feed_forward(layer, cfg: LMConfig, x):
    """Returns the feed-forward output [B, T, D] of x [B, T, D] (already normalised)."""
    act = ACTIVATION_FUNCTIONS[cfg.activation]
    if cfg.arch.mlp == "gated":
        return dense(layer.down, act(dense(layer.gate, x)) * dense(layer.up, x))
    return dense(layer.proj, act(dense(layer.fc, x)))


# ----------------------------------------------------------------------------- rotary positions


def rope_frequencies(cfg: LMConfig, local: bool = False) -> tuple[np.ndarray, float]:
    """Returns (inverse frequencies [r/2] float32, attention factor) of the config's RoPE kind (local: Gemma 3's
    local layers' own), r = cfg.rope_dim (the head's first r dimensions turn; all of them but in GPT-NeoX).

    After transformers' modeling_rope_utils.py: default, linear (positions / factor), llama3
    (long wavelengths slowed by factor, a smooth band between) and yarn (ramp between
    interpolation and extrapolation, cos and sin scaled by the attention factor).
    """
    dim = cfg.rope_dim
    base = float(cfg.local_rope_theta if local else cfg.rope_theta)
    kind = cfg.local_rope_type if local else cfg.rope_type
    value = functools.partial(cfg.rope_value, local=local)
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    factor = float(value("factor", 1.0))
    scaling = 1.0
    if kind == "linear":
        inv_freq = inv_freq / factor
    elif kind == "llama3":
        old = float(value("original_max_position_embeddings"))
        low, high = float(value("low_freq_factor")), float(value("high_freq_factor"))
        wavelen = 2 * math.pi / inv_freq
        slowed = np.where(wavelen > old / low, inv_freq / factor, inv_freq)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * slowed / factor + smooth * slowed
        medium = (wavelen >= old / high) & (wavelen <= old / low)
        inv_freq = np.where(medium, smoothed, slowed)
    elif kind == "yarn":
        inv_freq, scaling = _yarn(value, dim, base, factor)
    return inv_freq.astype(np.float32), float(scaling)


def _yarn(value, dim: int, base: float, factor: float) -> tuple[np.ndarray, float]:
    original = float(value("original_max_position_embeddings"))

    def mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    attention_factor = value("attention_factor")
    if attention_factor is None:
        m, m_all = value("mscale"), value("mscale_all_dim")
        attention_factor = mscale(factor, m) / mscale(factor, m_all) if m and m_all else mscale(factor)
    beta_fast, beta_slow = float(value("beta_fast", 32.0)), float(value("beta_slow", 1.0))

    def correction_dim(rotations: float) -> float:
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if value("truncate", 1.0):
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


def rope_tables(cfg: LMConfig, positions, local: bool = False):
    """Returns (cos, sin) [S, r] of positions int [S] (traced or not), or None for learned positions.
    r = cfg.rope_dim; local: Gemma 3's local layers' tables."""
    if cfg.arch.positions == "learned":
        return None
    inv_freq, factor = rope_frequencies(cfg, local)
    angles = jnp.asarray(positions).astype(jnp.float32)[:, None] * jnp.asarray(inv_freq)[None]  # [S, d/2]
    angles = jnp.concatenate([angles, angles], axis=-1)
    return jnp.cos(angles) * factor, jnp.sin(angles) * factor


def rotate_half(x):
    # [..., d] -> [-x2, x1], Hugging Face's convention (the two halves, not interleaved pairs)
    half = x.shape[-1] // 2
    return jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply_rope(x, cos, sin):
    """Returns x rotated by position.  x [B, heads, T, d]; cos, sin [T, r]: the first r dimensions turn, the rest
    pass unchanged (partial rotary, as GPT-NeoX and Phi-3 apply it)."""
    r = cos.shape[-1]
    if r == x.shape[-1]:
        return x * cos + rotate_half(x) * sin
    turned = x[..., :r] * cos + rotate_half(x[..., :r]) * sin
    return jnp.concatenate([turned, x[..., r:]], axis=-1)
