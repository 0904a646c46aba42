"""Differential attention (Ye et al., ICLR 2025, the DIFF Transformer): two softmax maps, the second
subtracted with weight λ, so the noise both put on irrelevant keys cancels.

Each head splits its query and key into halves (q₁, q₂), (k₁, k₂) of width d and reads values of width 2d:
  A = softmax(q₁k₁ᵀ/√d) − λ softmax(q₂k₂ᵀ/√d),   head = (1 − λ_init) · RMSNorm(A V),
  λ = exp(λ_q1 · λ_k1) − exp(λ_q2 · λ_k2) + λ_init,   λ_init = 0.8 − 0.6 · exp(−0.3 (l − 1)),  l = 1, 2, …
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from models import attention as core

RMS_EPS = 1e-5


def lambda_init(layer: int) -> float:
    """Returns λ_init of layer l (counted from 1): 0.8 − 0.6 · exp(−0.3 (l − 1)), 0.2 in the first layer."""
    return 0.8 - 0.6 * math.exp(-0.3 * (layer - 1))


def differential_lambda(lambda_q1, lambda_k1, lambda_q2, lambda_k2, init: float):
    """Returns λ = exp(λ_q1 · λ_k1) − exp(λ_q2 · λ_k2) + λ_init; the four vectors [..., d] are learned per head."""
    dot1 = jnp.sum(lambda_q1 * lambda_k1, axis=-1)
    dot2 = jnp.sum(lambda_q2 * lambda_k2, axis=-1)
    return jnp.exp(dot1) - jnp.exp(dot2) + init


@jax.jit
def differential_weights(q, k, lam, mask=None):
    """Returns A = softmax(q₁k₁ᵀ/√d) − λ softmax(q₂k₂ᵀ/√d) [..., T, S]: q [..., T, 2d], k [..., S, 2d] split in
    halves; lam broadcastable to [..., T, S] (per head: [H, 1, 1]). A may be negative."""
    half = q.shape[-1] // 2
    first = core.masked_softmax(core.scaled_dot_scores(q[..., :half], k[..., :half]), mask)
    second = core.masked_softmax(core.scaled_dot_scores(q[..., half:], k[..., half:]), mask)
    return first - lam * second


def rms_norm(x, scale=None, eps: float = RMS_EPS):
    """Returns x / √(mean(x²) + ε) over the last axis, times scale [d] if given (the paper's per-head norm)."""
    normed = x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps)
    return normed if scale is None else normed * scale


def differential_attention(q, k, v, lam, layer: int, mask=None, norm_scale=None):
    """Returns (each head's output [..., T, 2d], A [..., T, S]): (1 − λ_init) · RMSNorm(A V).

    q [..., T, 2d], k [..., S, 2d], v [..., S, 2d]; lam as in differential_weights; layer l from 1.
    """
    weights = differential_weights(q, k, lam, mask)
    out = rms_norm(core.context_vector(weights, v), norm_scale)
    return (1.0 - lambda_init(layer)) * out, weights
