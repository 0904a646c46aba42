"""The per-layer formulas against numpy loops written from the papers' equations, on random arrays."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.attribution import contributions as c


def random_layer(seed: int, heads=4, kv=2, queries=5, keys=5, width=3):
    rng = np.random.default_rng(seed)
    maps = rng.random((heads, queries, keys))
    maps /= maps.sum(-1, keepdims=True)
    values = rng.standard_normal((kv, keys, width))
    w_o = rng.standard_normal((heads * width, 6))
    return maps.astype(np.float32), values.astype(np.float32), w_o.astype(np.float32)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_norm_based_is_the_norm_of_the_head_sum(seed):
    maps, values, w_o = random_layer(seed)
    heads, width = maps.shape[0], values.shape[-1]
    expected = np.zeros(maps.shape[1:])
    for i in range(maps.shape[1]):
        for j in range(maps.shape[2]):
            total = sum(maps[h, i, j] * values[h // 2, j] @ w_o[h * width : (h + 1) * width] for h in range(heads))
            expected[i, j] = np.linalg.norm(total)
    np.testing.assert_allclose(c.norm_based(maps, values, w_o), expected, rtol=1e-5, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_alti_terms_rebuild_a_layer_norm_block(seed, post_norm):
    maps, values, w_o = random_layer(seed)
    rng = np.random.default_rng(seed + 1)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    value_bias = rng.standard_normal((2, 3)).astype(np.float32)
    b_o, scale, offset = (rng.standard_normal(6).astype(np.float32) for _ in range(3))
    v = values + value_bias[:, None]  # what a forward computes: x W_V + b_V
    heads = np.stack([maps[h] @ v[h // 2] for h in range(4)])  # [H, Q, d]
    summed = np.concatenate(list(heads), axis=-1) @ w_o + b_o + x
    terms = c.alti_terms(maps, values, w_o, x)
    bias = c.bias_through_heads(value_bias, w_o, 4) + b_o
    if post_norm:
        mean, var = summed.mean(-1, keepdims=True), summed.var(-1, keepdims=True)
        output = (summed - mean) / np.sqrt(var + 1e-12) * scale + offset
        terms, epsilon = c.through_layer_norm(terms, bias, scale, offset, 1e-12)
        rebuilt = np.sum(terms, axis=1) + epsilon
    else:
        output, rebuilt = summed, np.sum(terms, axis=1) + bias
    np.testing.assert_allclose(rebuilt, output, atol=1e-5)
    contributions = np.asarray(c.alti_contributions(terms, jnp.asarray(output)))
    expected = np.zeros((5, 5))
    for i in range(5):
        for j in range(5):
            expected[i, j] = max(0.0, np.abs(output[i]).sum() - np.abs(output[i] - np.asarray(terms[i, j])).sum())
    total = expected.sum(-1, keepdims=True)  # a row no term comes near stays 0 (no 0 / 0)
    normalised = np.divide(expected, total, out=np.zeros_like(expected), where=total > 0)
    np.testing.assert_allclose(contributions, normalised, rtol=1e-4, atol=1e-6)


def test_rollout_multiplies_from_the_first_layer_up():
    rng = np.random.default_rng(3)
    layers = rng.random((3, 4, 4)).astype(np.float32)
    out = np.asarray(c.rollout(jnp.asarray(layers)))
    np.testing.assert_allclose(out[0], layers[0])
    np.testing.assert_allclose(out[2], layers[2] @ layers[1] @ layers[0], rtol=1e-5)


def test_value_zeroing_is_a_normalised_cosine_distance():
    rng = np.random.default_rng(4)
    zeroed, output = rng.standard_normal((5, 3, 6)), rng.standard_normal((3, 6))
    expected = np.zeros((3, 5))
    for i in range(3):
        for j in range(5):
            a, b = zeroed[j, i], output[i]
            expected[i, j] = 1 - a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    np.testing.assert_allclose(c.value_zeroing(zeroed, output, normalise=False), expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(c.value_zeroing(zeroed, output), expected / expected.sum(-1, keepdims=True), rtol=1e-4)


def test_chefer_relevance_adds_the_positive_gradient_weighted_map_to_the_identity():
    rng = np.random.default_rng(5)
    maps, grads = rng.random((2, 3, 4, 4)), rng.standard_normal((2, 3, 4, 4))
    relevance = np.eye(4)
    for layer in range(2):
        fused = np.mean([np.maximum(grads[layer, h] * maps[layer, h], 0) for h in range(3)], axis=0)
        relevance = relevance + fused @ relevance
    out = np.asarray(c.chefer_relevance(jnp.asarray(maps, jnp.float32), jnp.asarray(grads, jnp.float32)))
    np.testing.assert_allclose(out[-1], relevance, rtol=1e-5)
    assert out.shape == (2, 4, 4)


def test_chefer_rows_use_each_targets_own_gradient():
    # A target linear in α (target r = Σ W_r ⊙ α over layers) has ∇α = W_r: row r must be R of W_r, at row r.
    from models.attribution.methods import chefer

    rng = np.random.default_rng(6)
    layers, heads, size, rows = 2, 3, 4, 3
    maps = rng.random((layers, heads, size, size)).astype(np.float32)
    weights = rng.standard_normal((rows, layers, heads, size, size)).astype(np.float32)

    class Linear:
        def captures(self):
            return {"maps": tuple(jnp.asarray(m) for m in maps)}

        def targets_of_maps(self, given):
            stacked = jnp.stack([m[0] for m in given])
            return jnp.einsum("rlhij,lhij->r", weights, stacked)

    out = np.asarray(chefer(Linear())["weights"])
    assert out.shape == (layers, rows, size)
    for r in range(rows):
        expected = np.asarray(c.chefer_relevance(jnp.asarray(maps), jnp.asarray(weights[r])))[:, r]
        np.testing.assert_allclose(out[:, r], expected, rtol=1e-5, atol=1e-6)
