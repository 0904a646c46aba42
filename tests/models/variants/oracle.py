"""numpy oracles of the variants (float64, loops where a loop says the formula plainly): what
models/variants/ must equal. Written from the papers, not from the JAX code."""

from __future__ import annotations

import math

import numpy as np


def _masked_with_max(x, mask=None):
    """Returns (x as float64 with masked entries -inf, its row max [..., 1], 0 where a row is all masked)."""
    x = np.asarray(x, np.float64)
    if mask is not None:
        x = np.where(mask, x, -np.inf)
    top = np.max(x, axis=-1, keepdims=True)
    return x, np.where(np.isfinite(top), top, 0.0)


def softmax(x, mask=None):
    x, top = _masked_with_max(x, mask)
    e = np.exp(x - top)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def attention(q, k, v, mask=None):
    """softmax(q kᵀ/√d) v for one head: q [T, d], k [S, d], v [S, d_v] -> (out, weights)."""
    w = softmax(np.asarray(q, np.float64) @ np.asarray(k, np.float64).T / math.sqrt(q.shape[-1]), mask)
    return w @ v, w


def grouped(q, k, v):
    """Head by head: q [H, T, d], k, v [K, S, ·]; head h reads kv head h // (H / K)."""
    h, kv = q.shape[0], k.shape[0]
    outs, ws = zip(*(attention(q[i], k[i // (h // kv)], v[i // (h // kv)]) for i in range(h)))
    return np.stack(outs), np.stack(ws)


def rotate_pairs(x, positions, inv_freq):
    """RoPE as 2×2 rotations: pair m of a row is (x[m], x[m + d/2]), turned by angle pos · θ_m."""
    x = np.asarray(x, np.float64)
    out = x.copy()
    half = x.shape[-1] // 2
    for t, pos in enumerate(positions):
        for m in range(half):
            a = pos * float(inv_freq[m])
            c, s = math.cos(a), math.sin(a)
            x1, x2 = x[..., t, m], x[..., t, m + half]
            out[..., t, m], out[..., t, m + half] = c * x1 - s * x2, s * x1 + c * x2
    return out


def alibi_slopes(n):
    """Press et al.'s reference get_slopes."""

    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][: n - closest]


def mla(x_q, x_kv, w, q_pos, k_pos, inv_freq):
    """MLA head by head, keys and values up-projected: (out [H, T, d_v], weights [H, T, S])."""
    w = [np.asarray(a, np.float64) for a in w]
    w_dq, w_uq, w_qr, w_dkv, w_uk, w_uv, w_kr = w
    c_q, c_kv = x_q @ w_dq, x_kv @ w_dkv
    k_r = rotate_pairs(x_kv @ w_kr, k_pos, inv_freq)
    outs, weights = [], []
    for h in range(w_uq.shape[1]):
        q_c, q_r = c_q @ w_uq[:, h], rotate_pairs(c_q @ w_qr[:, h], q_pos, inv_freq)
        k_c, v = c_kv @ w_uk[:, h], c_kv @ w_uv[:, h]
        scores = (q_c @ k_c.T + q_r @ k_r.T) / math.sqrt(w_uk.shape[-1] + w_kr.shape[-1])
        a = softmax(scores)
        outs.append(a @ v)
        weights.append(a)
    return np.stack(outs), np.stack(weights)


def sigmoid_weights(scores, mask=None, bias=None):
    scores = np.asarray(scores, np.float64)
    allowed = np.ones(scores.shape, bool) if mask is None else np.broadcast_to(mask, scores.shape)
    if bias is None:
        bias = -np.log(scores.shape[-1])  # n: the sequence length
    return np.where(allowed, 1 / (1 + np.exp(-(scores + bias))), 0.0)


def sink_softmax(scores, sink):
    scores = np.asarray(scores, np.float64)
    e = np.exp(scores)
    return e / (np.exp(sink) + e.sum(-1, keepdims=True))


def differential(q, k, v, lam, layer, scale=None):
    """One head: q, k [·, 2d], v [S, 2d] -> (out, A)."""
    d = q.shape[-1] // 2
    a = softmax(q[:, :d] @ k[:, :d].T / math.sqrt(d)) - lam * softmax(q[:, d:] @ k[:, d:].T / math.sqrt(d))
    o = a @ v
    o = o / np.sqrt((o**2).mean(-1, keepdims=True) + 1e-5)
    if scale is not None:
        o = o * scale
    init = 0.8 - 0.6 * math.exp(-0.3 * (layer - 1))
    return (1 - init) * o, a


def phi(x):
    x = np.asarray(x, np.float64)
    return np.where(x > 0, x + 1.0, np.exp(x))


def linear_parallel(q, k, v, causal=True):
    t, s = q.shape[0], k.shape[0]
    w = np.zeros((t, s))
    for i in range(t):
        for j in range(s):
            if not causal or j <= i:
                w[i, j] = phi(q[i]) @ phi(k[j])
    w = w / w.sum(-1, keepdims=True)
    return w @ v, w


def linear_recurrent(q, k, v):
    state, z, outs = np.zeros((q.shape[1], v.shape[1])), np.zeros(q.shape[1]), []
    for i in range(q.shape[0]):
        state = state + np.outer(phi(k[i]), v[i])
        z = z + phi(k[i])
        outs.append(phi(q[i]) @ state / (phi(q[i]) @ z))
    return np.stack(outs), state, z


def logsumexp(x, mask=None):
    x, top = _masked_with_max(x, mask)
    with np.errstate(divide="ignore"):
        return (top + np.log(np.exp(x - top).sum(-1, keepdims=True)))[..., 0]
