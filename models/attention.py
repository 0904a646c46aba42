"""The attention core: score functions, normalisation, windows, hard attention, multi-head.

Every function here is pure and batched: leading dimensions ("...") broadcast, and all
parameters are passed in. Notation follows the literature: ``s`` is the query (decoder
state), ``h`` the keys (encoder states), ``v`` the values.

Shapes in comments use  Tq = number of queries, Tk = number of keys, d = feature width.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

# Temperatures are clipped to this floor: below it scores/temperature overflows float32.
MIN_TEMPERATURE = 1e-4

SCORE_FUNCTIONS = ("dot", "scaled-dot", "general", "concat", "additive", "location", "cosine")


# ----------------------------------------------------------------------------- scores


@jax.jit
def dot_scores(s, h):
    """Returns s·h.  s [..., Tq, d], h [..., Tk, d] -> [..., Tq, Tk]."""
    return jnp.matmul(s, jnp.swapaxes(h, -1, -2))


@jax.jit
def scaled_dot_scores(s, h):
    """Returns s·h/√d.  s [..., Tq, d], h [..., Tk, d] -> [..., Tq, Tk]."""
    return dot_scores(s, h) / jnp.sqrt(jnp.asarray(s.shape[-1], s.dtype))


@jax.jit
def general_scores(s, h, w_a):
    """Returns sᵀ W_a h.  s [..., Tq, d_s], h [..., Tk, d_h], w_a [d_s, d_h] -> [..., Tq, Tk]."""
    return jnp.matmul(jnp.matmul(s, w_a), jnp.swapaxes(h, -1, -2))


@jax.jit
def concat_scores(s, h, w_a, v_a):
    """Returns vᵀ tanh(W_a [s; h]).

    s [..., Tq, d_s], h [..., Tk, d_h], w_a [d_a, d_s + d_h], v_a [d_a] -> [..., Tq, Tk].
    W_a [s; h] = W_s s + W_h h, so the two halves are projected once and broadcast.
    """
    d_s = s.shape[-1]
    proj_s = jnp.matmul(s, w_a[:, :d_s].T)  # [..., Tq, d_a]
    proj_h = jnp.matmul(h, w_a[:, d_s:].T)  # [..., Tk, d_a]
    hidden = jnp.tanh(proj_s[..., :, None, :] + proj_h[..., None, :, :])  # [..., Tq, Tk, d_a]
    return jnp.matmul(hidden, v_a)


@jax.jit
def additive_scores(s, h, w, u, v_a):
    """Returns vᵀ tanh(W s + U h) (Bahdanau).

    s [..., Tq, d_s], h [..., Tk, d_h], w [d_a, d_s], u [d_a, d_h], v_a [d_a] -> [..., Tq, Tk].
    """
    proj_s = jnp.matmul(s, w.T)  # [..., Tq, d_a]
    proj_h = jnp.matmul(h, u.T)  # [..., Tk, d_a]
    hidden = jnp.tanh(proj_s[..., :, None, :] + proj_h[..., None, :, :])
    return jnp.matmul(hidden, v_a)


@jax.jit
def location_scores(s, w_a):
    """Returns W_a s: one score per source position, from the query alone (Luong's location).

    s [..., Tq, d_s], w_a [S_max, d_s] -> [..., Tq, S_max]. Slice or mask to the real
    source length before normalising; softmax of these is Luong's a_t = softmax(W_a h_t).
    """
    return jnp.matmul(s, w_a.T)


@jax.jit
def cosine_scores(s, h):
    """Returns cos(s, h).  s [..., Tq, d], h [..., Tk, d] -> [..., Tq, Tk], in [-1, 1]."""
    eps = jnp.asarray(1e-8, s.dtype)
    s_unit = s / jnp.maximum(jnp.linalg.norm(s, axis=-1, keepdims=True), eps)
    h_unit = h / jnp.maximum(jnp.linalg.norm(h, axis=-1, keepdims=True), eps)
    return dot_scores(s_unit, h_unit)


# ------------------------------------------------------------------------ normalisation


@jax.jit
def masked_softmax(scores, mask=None, temperature=1.0):
    """Returns softmax(scores / temperature) over the last axis, with masked weights exactly 0.

    scores [..., Tk]; mask bool, broadcastable to scores, True = allowed. A row with no
    allowed key is all zeros (not NaN).
    """
    temperature = jnp.maximum(jnp.asarray(temperature, scores.dtype), MIN_TEMPERATURE)
    logits = scores / temperature
    if mask is None:  # fast path: no selects over a [.., Tq, Tk] mask
        exp = jnp.exp(logits - jnp.max(logits, axis=-1, keepdims=True))
        return exp / jnp.sum(exp, axis=-1, keepdims=True)
    mask = jnp.broadcast_to(mask, logits.shape)
    neg_inf = jnp.asarray(-jnp.inf, logits.dtype)
    row_max = jnp.max(jnp.where(mask, logits, neg_inf), axis=-1, keepdims=True)
    row_max = jnp.where(jnp.isfinite(row_max), row_max, 0.0)
    exp = jnp.where(mask, jnp.exp(jnp.where(mask, logits - row_max, 0.0)), 0.0)  # no inf under the mask: its gradient would be NaN
    total = jnp.sum(exp, axis=-1, keepdims=True)
    return exp / jnp.where(total > 0, total, 1.0)


def padding_mask(key_lengths, num_keys: int) -> np.ndarray:
    """Returns bool [B, 1, Tk]: True where key j < key_lengths[b]. Built in numpy (no compile)."""
    lengths = np.asarray(key_lengths).reshape(-1, 1, 1)
    return np.arange(num_keys)[None, None, :] < lengths


def causal_mask(num_queries: int, num_keys: int | None = None) -> np.ndarray:
    """Returns bool [Tq, Tk]: True where key j <= query i (no looking ahead)."""
    num_keys = num_queries if num_keys is None else num_keys
    return np.tril(np.ones((num_queries, num_keys), dtype=bool))


# ------------------------------------------------------------------------ local windows


def local_m_centers(num_queries: int) -> np.ndarray:
    """Returns float32 [Tq]: Luong's monotonic centres p_t = t."""
    return np.arange(num_queries, dtype=np.float32)


@jax.jit
def local_p_centers(s, w_p, v_p, source_length):
    """Returns [..., Tq]: Luong's predictive centres p_t = S · sigmoid(v_pᵀ tanh(W_p s)).

    s [..., Tq, d_s], w_p [d_p, d_s], v_p [d_p], source_length scalar or [...] (S).
    """
    gate = jax.nn.sigmoid(jnp.matmul(jnp.tanh(jnp.matmul(s, w_p.T)), v_p))  # [..., Tq]
    return jnp.asarray(source_length, s.dtype)[..., None] * gate


@partial(jax.jit, static_argnums=1)
def local_window_mask(centers, num_keys: int, half_width):
    """Returns bool [..., Tq, Tk]: True where p_t − D <= j <= p_t + D.

    centers [..., Tq] (float), num_keys Tk (static), half_width D (>= 0).
    """
    distance = jnp.abs(jnp.arange(num_keys) - centers[..., None])
    return distance <= half_width


@jax.jit
def gaussian_window(centers, positions, half_width):
    """Returns [..., Tq, Tk]: exp(−(j − p_t)² / (2σ²)) with σ = D/2.

    centers [..., Tq], positions [Tk] (source indices j), half_width D (> 0).
    """
    sigma = jnp.maximum(jnp.asarray(half_width, jnp.float32) / 2.0, 1e-6)
    diff = positions - centers[..., None]
    return jnp.exp(-(diff**2) / (2.0 * sigma**2))


@jax.jit
def local_attention_weights(scores, centers, half_width, mask=None, temperature=1.0):
    """Returns Luong's local weights: softmax over the window [p_t − D, p_t + D] × Gaussian.

    scores [..., Tq, Tk]; centers [..., Tq]; mask bool broadcastable to scores (padding).
    As in Luong et al. (2015, eq. 10) the Gaussian factor is applied after the softmax and
    the result is not renormalised, so a row sums to at most 1; keys outside the window
    (or masked) get exactly 0.
    """
    num_keys = scores.shape[-1]
    window = local_window_mask(jnp.asarray(centers, scores.dtype), num_keys, half_width)
    allowed = window if mask is None else jnp.logical_and(window, mask)
    align = masked_softmax(scores, allowed, temperature)
    positions = jnp.arange(num_keys, dtype=scores.dtype)
    return align * gaussian_window(jnp.asarray(centers, scores.dtype), positions, half_width)


# ------------------------------------------------------------------------ hard attention


@jax.jit
def hard_argmax(weights):
    """Returns the one-hot of argmax over the last axis (first index on ties). [..., Tk]."""
    return jax.nn.one_hot(jnp.argmax(weights, axis=-1), weights.shape[-1], dtype=weights.dtype)


def hard_sample(key, weights, num_samples: int):
    """Returns int32 [..., N]: N key indices drawn from Categorical(α) for every row.

    key: a jax PRNG key (explicit, so samples are reproducible); weights [..., Tk].
    Zero weights are never drawn (a row with no positive weight at all, which a softmax never
    gives, draws its last key).
    """
    return _hard_sample(key, weights, num_samples)


@partial(jax.jit, static_argnums=2)
def _hard_sample(key, weights, num_samples):
    # Inverse CDF: one uniform u per draw, and the drawn key is the number of cumulative weights
    # ≤ u·Σα (a binary search). A zero weight adds an empty interval, so it is never drawn. The
    # Gumbel-max trick (jax.random.categorical) needs Tk random numbers per draw instead of one:
    # 2,000 draws for each of a caption's 9 rows (8 words, <eos>) over 64 cells took 14.4 ms that
    # way, 1.0 ms this way, and a scene change on the images page draws them for every caption.
    weights = jnp.asarray(weights, jnp.float32)
    cdf = jnp.cumsum(jnp.maximum(weights, 0.0), axis=-1)  # [..., Tk]
    u = jax.random.uniform(key, (*weights.shape[:-1], num_samples)) * cdf[..., -1:]  # [..., N]
    rows = cdf.reshape(-1, cdf.shape[-1])
    search = jax.vmap(lambda c, x: jnp.searchsorted(c, x, side="right", method="scan_unrolled"))
    drawn = search(rows, u.reshape(rows.shape[0], -1)).reshape(u.shape)  # how many cdf values ≤ u
    # u·Σα can round up to Σα itself: such a draw goes to the last key with a positive weight.
    last = weights.shape[-1] - 1 - jnp.argmax(jnp.flip(weights > 0, axis=-1), axis=-1)
    return jnp.minimum(drawn, last[..., None]).astype(jnp.int32)


def sample_frequencies(samples, num_keys: int) -> np.ndarray:
    """Returns float32 [..., Tk]: how often each key was drawn, as a share of N samples.

    samples int [..., N]. The soft weights α are the expectation these converge to.
    """
    samples = np.asarray(samples)
    flat = samples.reshape(-1, samples.shape[-1])
    counts = np.stack([np.bincount(row, minlength=num_keys)[:num_keys] for row in flat])
    freq = counts.astype(np.float32) / max(samples.shape[-1], 1)
    return freq.reshape(*samples.shape[:-1], num_keys)


NORMALISATION_MODES = ("soft", "argmax", "sample")


def apply_mode(weights, mode: str, *, seed: int = 0, num_samples: int = 100) -> tuple[np.ndarray, np.ndarray | None]:
    """Returns (applied [n], samples [N] or None): the weights a context actually uses.

    weights α [n]. "soft": α itself; "argmax": its one-hot; "sample": the frequencies of
    N keys drawn from Categorical(α) with PRNG key `seed` (their expectation is α).
    """
    weights = np.asarray(weights, np.float32)
    if mode == "soft":
        return weights, None
    if mode == "argmax":
        return np.asarray(hard_argmax(weights), np.float32), None
    if mode != "sample":
        raise ValueError(f"unknown mode {mode!r}; choose one of {NORMALISATION_MODES}")
    drawn = np.asarray(hard_sample(jax.random.key(int(seed)), weights, int(num_samples)), np.int32)
    return sample_frequencies(drawn, weights.shape[-1]), drawn


# --------------------------------------------------------------- scaled dot-product


@jax.jit
def scaled_dot_product_attention(q, k, v, mask=None, temperature=1.0):
    """Returns (context [..., Tq, d_v], weights [..., Tq, Tk]) of softmax(QKᵀ/√d) V.

    q [..., Tq, d], k [..., Tk, d], v [..., Tk, d_v]; mask bool broadcastable to
    [..., Tq, Tk], True = allowed. Use the (B, H, T, d) layout for multi-head inputs.
    """
    scores = scaled_dot_scores(q, k)
    weights = masked_softmax(scores, mask, temperature)
    return context_vector(weights, v), weights


@jax.jit
def context_vector(weights, values):
    """Returns Σ_j α_ij v_j.  weights [..., Tq, Tk], values [..., Tk, d_v] -> [..., Tq, d_v]."""
    return jnp.matmul(weights, values)
