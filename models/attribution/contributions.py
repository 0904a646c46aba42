"""Attributions read from one attention layer's parts, the same maths for every transformer (jnp, one example).

Shapes: H query heads, K key/value heads (H = K·G; head h reads value head h // G), Q queries, S keys,
d head width, D model width, L layers. W_O [H·d, D] is the output projection as stored (x @ W_O).

- norm_based: ‖Σ_h α^h_ij f^h(x_j)‖, f^h(x_j) = (x_j W_V^h + b_V^h) W_O^h (Kobayashi et al. 2020, eq. 5:
  the value bias inside f, the output bias b_O left out).
- ALTI (Ferrando et al. 2022): the block output y_i = Σ_j T_i(x_j) + ε_i, each T_i(x_j) depending on token j
  only (the residual as δ_ij x_i, a post-norm's LayerNorm through its linear part); c_ij ∝ max(0, ‖y_i‖₁ −
  ‖y_i − T_i(x_j)‖₁), rows normalised; layers combined by rollout.
- value zeroing (Mohebbi et al. 2023): the cosine distance between token i's layer output with token j's value
  vectors zeroed and without, rows normalised.
- Chefer et al. (2021, "Generic attention-model explainability"): Ā = E_h (∇A ⊙ A)⁺, R ← R + Ā R from R = I.
"""

from __future__ import annotations

import jax.numpy as jnp

TINY = 1e-12  # guards a row of zeros against 0 / 0


def head_outputs(values, w_o, num_heads: int):
    """Returns f [H, S, D]: each head's value vectors through its slice of W_O.  values [K, S, d], w_o [H·d, D]."""
    kv, _, width = values.shape
    per_head = jnp.repeat(values, num_heads // kv, axis=0)  # head h reads value head h // G
    return jnp.einsum("hsd,hdD->hsD", per_head, w_o.reshape(num_heads, width, -1))


def weighted_vectors(maps, values, w_o):
    """Returns Σ_h α^h_ij f^h(x_j) [Q, S, D].  maps α [H, Q, S], values [K, S, d], w_o [H·d, D]."""
    return jnp.einsum("hqs,hsD->qsD", maps, head_outputs(values, w_o, maps.shape[0]))


def norm_based(maps, values, w_o):
    """Returns ‖Σ_h α^h_ij f^h(x_j)‖₂ [Q, S] (Kobayashi et al. 2020), values holding W_V's bias."""
    return jnp.linalg.norm(weighted_vectors(maps, values, w_o), axis=-1)


def alti_terms(maps, parts, w_o, residual=None):
    """Returns T'_ij = Σ_h α^h_ij u^h_j W_O^h + δ_ij x_i [Q, S, D] before any output norm.

    parts u [K, S, d]: the part of each value vector that depends on its token (bias terms removed);
    residual x [Q, D] with Q = S (self-attention), or None.
    """
    terms = weighted_vectors(maps, parts, w_o)
    if residual is not None:
        terms = terms + jnp.eye(terms.shape[0], dtype=terms.dtype)[:, :, None] * residual[:, None, :]
    return terms


def bias_through_heads(bias, w_o, num_heads: int):
    """Returns Σ_h c^h W_O^h [D] of a per-value-head constant c [K, d] (each row of α sums to 1)."""
    return jnp.sum(head_outputs(bias[:, None, :], w_o, num_heads)[:, 0], axis=0)


def through_layer_norm(terms, bias, scale, offset, eps: float):
    """Returns (T_ij [Q, S, D], ε_i [Q, D]) of LN(Σ_j T'_ij + b): LN's linear part γ ⊙ (t − mean t) / σ_i applied
    to each term, σ_i the standard deviation of the whole sum; ε_i = L_i(b) + β.  terms [Q, S, D], bias b [D]."""
    total = jnp.sum(terms, axis=1) + bias
    centred = total - jnp.mean(total, axis=-1, keepdims=True)
    sigma = jnp.sqrt(jnp.mean(centred * centred, axis=-1, keepdims=True) + eps)  # [Q, 1]

    def linear(t, s):
        return scale * (t - jnp.mean(t, axis=-1, keepdims=True)) / s

    return linear(terms, sigma[:, None]), linear(bias[None], sigma) + offset


def alti_contributions(terms, output):
    """Returns ALTI's c_ij [Q, S]: max(0, ‖y_i‖₁ − ‖y_i − T_ij‖₁), each row normalised to sum 1.
    terms [Q, S, D]; output y [Q, D], the block's output."""
    near = jnp.maximum(0.0, jnp.sum(jnp.abs(output), -1)[:, None] - jnp.sum(jnp.abs(output[:, None] - terms), -1))
    return near / jnp.maximum(jnp.sum(near, axis=-1, keepdims=True), TINY)


def rollout(layers):
    """Returns [L, Q, S]: at l, C^l C^(l-1) … C^0 (contributions to layer l's output from the input tokens).
    layers [L, S, S] (queries and keys are the same tokens)."""
    out, current = [], None
    for matrix in layers:  # over L matrices already computed, not over a model's layers
        current = matrix if current is None else matrix @ current
        out.append(current)
    return jnp.stack(out)


def cosine_distance(a, b):
    """Returns 1 − cos(a, b) over the last axis."""
    dot = jnp.sum(a * b, axis=-1)
    return 1.0 - dot / jnp.maximum(jnp.linalg.norm(a, axis=-1) * jnp.linalg.norm(b, axis=-1), TINY)


def value_zeroing(zeroed, output, normalise: bool = True):
    """Returns C_ij [Q, S] = cosine distance(ỹ_i^¬j, ỹ_i), rows normalised (Mohebbi et al. 2023).
    zeroed [S, Q, D]: the layer's output with key j's values zeroed (one row per j); output [Q, D]."""
    distance = jnp.maximum(cosine_distance(zeroed, output[None]), 0.0).T  # [Q, S]
    if not normalise:
        return distance
    return distance / jnp.maximum(jnp.sum(distance, axis=-1, keepdims=True), TINY)


def chefer_relevance(maps, grads):
    """Returns R [L, S, S]: R after each layer of R ← R + Ā R, R = I at the start, Ā = mean_h (∇A ⊙ A)⁺.
    maps, grads [L, H, S, S]: α and ∂target/∂α of every layer (self-attention)."""
    fused = jnp.mean(jnp.maximum(grads * maps, 0.0), axis=1)  # [L, S, S]
    current, out = jnp.eye(maps.shape[-1], dtype=maps.dtype), []
    for matrix in fused:
        current = current + matrix @ current
        out.append(current)
    return jnp.stack(out)
