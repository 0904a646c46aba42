"""FlashAttention's online softmax (Milakov & Gimelshein 2018; Dao et al. 2022): ordinary attention computed
one block of keys at a time, with a running maximum m, a running denominator ℓ and a running weighted sum, so
the [T, S] weights are never held. It keeps the log-sum-exp L = m + log ℓ of every row, from which the weights
are exactly α_ij = exp(s_ij − L_i) (how FlashAttention's backward pass recomputes them).

  m' = max(m, max_j s_j),  ℓ' = e^{m − m'} ℓ + Σ_j e^{s_j − m'},  o' = e^{m − m'} o + Σ_j e^{s_j − m'} v_j
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("block_size", "query_block"))
def online_softmax_attention(q, k, v, mask=None, *, block_size: int, query_block: int | None = None):
    """Returns (output [..., T, d_v], log-sum-exp L [..., T]) of softmax(q kᵀ/√d) v, keys read block_size at a
    time (the last block padded and masked), queries query_block at a time (None: all at once).

    q [..., T, d], k [..., S, d], v [..., S, d_v]; mask bool broadcastable to [..., T, S]. A row with no
    allowed key has output 0 and L = −∞.
    """
    t = q.shape[-2]
    full = None if mask is None else jnp.broadcast_to(mask, (*q.shape[:-1], k.shape[-2]))
    if query_block is None or query_block >= t:
        return _key_blocks(q, k, v, full, block_size)
    parts = [
        _key_blocks(
            q[..., i : i + query_block, :],
            k,
            v,
            None if full is None else full[..., i : i + query_block, :],
            block_size,
        )
        for i in range(0, t, query_block)
    ]
    return jnp.concatenate([p[0] for p in parts], axis=-2), jnp.concatenate([p[1] for p in parts], axis=-1)


def _key_blocks(q, k, v, mask, block_size: int):
    s = k.shape[-2]
    blocks = -(-s // block_size)
    pad = blocks * block_size - s
    allowed = jnp.ones((*q.shape[:-1], s), bool) if mask is None else mask
    allowed = jnp.pad(allowed, [(0, 0)] * (allowed.ndim - 1) + [(0, pad)])  # padded keys: never allowed
    k = jnp.pad(k, [(0, 0)] * (k.ndim - 2) + [(0, pad), (0, 0)])
    v = jnp.pad(v, [(0, 0)] * (v.ndim - 2) + [(0, pad), (0, 0)])
    scale = 1.0 / jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))

    def step(carry, index):
        top, total, acc = carry
        start = index * block_size
        k_block = jax.lax.dynamic_slice_in_dim(k, start, block_size, axis=-2)
        v_block = jax.lax.dynamic_slice_in_dim(v, start, block_size, axis=-2)
        ok = jax.lax.dynamic_slice_in_dim(allowed, start, block_size, axis=-1)
        scores = jnp.where(ok, jnp.matmul(q, jnp.swapaxes(k_block, -1, -2)) * scale, -jnp.inf)  # [..., T, b]
        new_top = jnp.maximum(top, jnp.max(scores, axis=-1))
        safe = jnp.where(jnp.isfinite(new_top), new_top, 0.0)  # no key allowed yet: keep everything at 0
        correction = jnp.exp(top - safe)
        exp = jnp.exp(scores - safe[..., None])
        total = total * correction + jnp.sum(exp, axis=-1)
        acc = acc * correction[..., None] + jnp.matmul(exp, v_block)
        return (new_top, total, acc), None

    start = (
        jnp.full(q.shape[:-1], -jnp.inf, q.dtype),
        jnp.zeros(q.shape[:-1], q.dtype),
        jnp.zeros((*q.shape[:-1], v.shape[-1]), q.dtype),
    )
    (top, total, acc), _ = jax.lax.scan(step, start, jnp.arange(blocks))
    out = acc / jnp.where(total > 0, total, 1.0)[..., None]
    return out, top + jnp.log(total)


@jax.jit
def weights_from_lse(scores, lse, mask=None):
    """Returns α = exp(s − L) [..., T, S] of scores [..., T, S] and the kept log-sum-exp L [..., T]."""
    weights = jnp.exp(scores - lse[..., None])
    return weights if mask is None else jnp.where(mask, weights, 0.0)
