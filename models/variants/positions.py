"""Where positions enter attention after 2017: rotary positions (RoPE) and p-RoPE, none at all (NoPE),
ALiBi's linear biases, sliding windows and the alternation of local and global layers.

Masks and biases are built in numpy (a jnp op on a new shape would compile). Positions are token
indices: queries at query_positions [T], keys at key_positions [S].
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from models.lm.layers import apply_rope

ROPE_BASE = 10_000.0


def rope_inverse_frequencies(dim: int, base: float = ROPE_BASE, fraction: float = 1.0) -> np.ndarray:
    """Returns float32 [dim/2]: RoPE's θ_i = base^(−2i/dim), highest first, with only the highest
    round(fraction · dim/2) kept and the others set to 0 (those pairs are not rotated).

    fraction 1 is RoPE (Su et al. 2021); 0 is NoPE; between is p-RoPE (Barbero et al. 2025), which drops
    the lowest frequencies: they rotate so slowly that they act as content channels, now exactly so.
    """
    if dim % 2:
        raise ValueError(f"RoPE needs an even width, got {dim}")
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    kept = int(round(fraction * (dim // 2)))
    inv_freq[kept:] = 0.0
    return inv_freq.astype(np.float32)


def rope_tables(positions, inv_freq) -> tuple[np.ndarray, np.ndarray]:
    """Returns (cos, sin) float32 [T, dim] of positions [T]: the angles pos · θ_i, each twice (Hugging Face's
    halves convention: pair i is (x_i, x_{i + dim/2}))."""
    angles = np.asarray(positions, np.float64)[:, None] * np.asarray(inv_freq, np.float64)[None]
    angles = np.concatenate([angles, angles], axis=-1)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def rotate(x, positions, inv_freq):
    """Returns x [..., T, dim] with each pair rotated by its position's angles (apply_rope of models/lm)."""
    return apply_rope(jnp.asarray(x), *rope_tables(positions, inv_freq))


def alibi_slopes(num_heads: int) -> np.ndarray:
    """Returns float32 [H]: ALiBi's head slopes m_h (Press et al. 2022).

    For H a power of two, the geometric sequence 2^(−8/H), 2^(−16/H), …, 2^(−8); otherwise those of the
    largest power of two below H, then every other slope of the next power of two (their reference code).
    """

    def powers(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    below = 2 ** int(math.floor(math.log2(num_heads)))
    slopes = powers(below) + powers(2 * below)[0::2][: num_heads - below]
    return np.asarray(slopes, np.float32)


def alibi_bias(slopes, query_positions, key_positions) -> np.ndarray:
    """Returns float32 [H, T, S]: −m_h · |i − j|, added to the scores (on a causal mask, −m_h · (i − j))."""
    distance = np.abs(np.asarray(query_positions)[:, None] - np.asarray(key_positions)[None, :])
    return (-np.asarray(slopes, np.float32)[:, None, None] * distance[None]).astype(np.float32)


def sliding_window_mask(query_positions, key_positions, window: int | None) -> np.ndarray:
    """Returns bool [T, S]: causal, and on a sliding layer the key less than `window` tokens behind (0 ≤ i − j < W,
    as Mistral and Gemma count it); window None: causal only."""
    behind = np.asarray(query_positions)[:, None] - np.asarray(key_positions)[None, :]
    allowed = behind >= 0
    return allowed if window is None else allowed & (behind < window)


def layer_windows(num_layers: int, window: int, local_per_global: int) -> tuple[int | None, ...]:
    """Returns each layer's window: `local_per_global` sliding layers, then one global layer (None), repeated.

    Gemma 3 alternates 5 local and 1 global; Gemma 2 and gpt-oss 1 and 1.
    """
    period = local_per_global + 1
    return tuple(None if (layer + 1) % period == 0 else window for layer in range(num_layers))
