"""Who shares keys and values: multi-head (MHA), multi-query (MQA) and grouped-query (GQA) attention, and
DeepSeek-V2's multi-head latent attention (MLA), whose KV cache is one low-rank latent per token.

Shapes: T queries, S keys, H query heads, K key/value heads (G = H / K queries per key/value head), d head
width, D model width, d_c the KV latent, d_cq the query latent, d_r the decoupled RoPE width.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax.numpy as jnp

from models import attention as core
from models.lm.layers import apply_rope

FLOAT32_BYTES = 4


def grouped_query_attention(q, k, v, mask=None):
    """Returns (output [..., H, T, d_v], weights [..., H, T, S]) of softmax(q kᵀ/√d) v, head h reading key/value
    head h // G (as Hugging Face's repeat_kv, without copying the keys).

    q [..., H, T, d]; k [..., K, S, d]; v [..., K, S, d_v]; K divides H: K = H is multi-head, K = 1
    multi-query attention. mask bool broadcastable to [..., H, T, S], True = allowed.
    """
    heads, kv_heads = q.shape[-3], k.shape[-3]
    if heads % kv_heads:
        raise ValueError(f"{kv_heads} key/value heads do not divide {heads} query heads")
    groups = heads // kv_heads
    lead, (t, s) = q.shape[:-3], (q.shape[-2], k.shape[-2])
    grouped = jnp.reshape(q, (*lead, kv_heads, groups, t, q.shape[-1]))  # [..., K, G, T, d]
    if mask is not None:
        mask = jnp.reshape(jnp.broadcast_to(mask, (*lead, heads, t, s)), (*lead, kv_heads, groups, t, s))
    out, weights = core.scaled_dot_product_attention(grouped, k[..., None, :, :], v[..., None, :, :], mask)
    return jnp.reshape(out, (*lead, heads, t, v.shape[-1])), jnp.reshape(weights, (*lead, heads, t, s))


def kv_cache_bytes(kv_heads: int, head_dim: int, value_dim: int | None = None) -> int:
    """Returns the float32 bytes one token adds to a layer's KV cache: K keys of width d and K values."""
    return kv_heads * (head_dim + (head_dim if value_dim is None else value_dim)) * FLOAT32_BYTES


# ------------------------------------------------------------------------------------------ MLA


class LatentWeights(NamedTuple):
    """One MLA layer's projections (DeepSeek-V2 §2.1): the down-projections to the latents, the
    up-projections per head, and the decoupled RoPE projections."""

    w_dq: jnp.ndarray  # [D, d_cq]      query down-projection
    w_uq: jnp.ndarray  # [d_cq, H, d]   query up-projection (content part)
    w_qr: jnp.ndarray  # [d_cq, H, d_r] query RoPE part, one per head
    w_dkv: jnp.ndarray  # [D, d_c]      KV down-projection: the latent c_kv is what is cached
    w_uk: jnp.ndarray  # [d_c, H, d]    key up-projection
    w_uv: jnp.ndarray  # [d_c, H, d_v]  value up-projection
    w_kr: jnp.ndarray  # [D, d_r]       key RoPE part, shared by all heads (cached beside the latent)


def mla_cache(x, w: LatentWeights, rope):
    """Returns the cache of tokens x [..., S, D]: (latent c_kv [..., S, d_c], RoPE key k_r [..., S, d_r]).

    rope: (cos, sin) [S, d_r] of the tokens' positions. Only these d_c + d_r numbers per token are kept.
    """
    return jnp.matmul(x, w.w_dkv), apply_rope(jnp.matmul(x, w.w_kr), *rope)


def mla_queries(x, w: LatentWeights, rope):
    """Returns (content queries [..., H, T, d], RoPE queries [..., H, T, d_r]) of tokens x [..., T, D]."""
    latent = jnp.matmul(x, w.w_dq)  # [..., T, d_cq]
    content = jnp.einsum("...tc,chd->...htd", latent, w.w_uq)
    return content, apply_rope(jnp.einsum("...tc,chr->...htr", latent, w.w_qr), *rope)


def mla_scale(w: LatentWeights) -> float:
    """Returns 1/√(d + d_r): the scores sum a content and a RoPE dot product."""
    return 1.0 / math.sqrt(w.w_uk.shape[-1] + w.w_kr.shape[-1])


def mla_attention(x_q, cache, w: LatentWeights, query_rope, mask=None, *, absorbed: bool = False):
    """Returns (output [..., H, T, d_v], weights [..., H, T, S]) of MLA for query tokens x_q [..., T, D] over a
    cache (latent [..., S, d_c], k_r [..., S, d_r]) from mla_cache.

    absorbed=False up-projects the latent into every head's keys and values (training's form). absorbed=True
    folds W_uk into the query (q W_ukᵀ · c_kv = q · c_kv W_uk) and W_uv after the weighted sum, so attention
    reads the latent itself (inference's form): the same weights and output, without per-head keys.
    mask bool broadcastable to [..., H, T, S].
    """
    latent, k_rope = cache
    q_content, q_rope = mla_queries(x_q, w, query_rope)
    rope_scores = jnp.matmul(q_rope, jnp.swapaxes(k_rope, -1, -2)[..., None, :, :])  # [..., H, T, S]
    if absorbed:
        q_latent = jnp.einsum("...htd,chd->...htc", q_content, w.w_uk)  # [..., H, T, d_c]
        content_scores = jnp.matmul(q_latent, jnp.swapaxes(latent, -1, -2)[..., None, :, :])
    else:
        keys = jnp.einsum("...sc,chd->...hsd", latent, w.w_uk)  # [..., H, S, d]
        content_scores = jnp.matmul(q_content, jnp.swapaxes(keys, -1, -2))
    weights = core.masked_softmax((content_scores + rope_scores) * mla_scale(w), mask)
    if absorbed:
        mixed = jnp.matmul(weights, latent[..., None, :, :])  # [..., H, T, d_c]
        return jnp.einsum("...htc,chd->...htd", mixed, w.w_uv), weights
    values = jnp.einsum("...sc,chd->...hsd", latent, w.w_uv)
    return core.context_vector(weights, values), weights


def mla_cache_bytes(w: LatentWeights) -> int:
    """Returns the float32 bytes one token adds to an MLA layer's cache: d_c + d_r."""
    return (w.w_dkv.shape[-1] + w.w_kr.shape[-1]) * FLOAT32_BYTES
