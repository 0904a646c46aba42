"""The attention core against plain numpy oracles, plus hypothesis properties."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from models import attention as core

RNG = np.random.default_rng(0)
settings.register_profile("ci", deadline=None, max_examples=40)
settings.load_profile("ci")


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------------ numpy oracles


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_dot_and_scaled_dot_match_numpy():
    s, h = rand(2, 3, 8), rand(2, 5, 8)
    expected = np.einsum("bqd,bkd->bqk", s, h)
    np.testing.assert_allclose(core.dot_scores(s, h), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(core.scaled_dot_scores(s, h), expected / np.sqrt(8), rtol=1e-5, atol=1e-5)


def test_general_matches_numpy():
    s, h, w = rand(3, 4), rand(6, 5), rand(4, 5)
    expected = np.array([[si @ w @ hj for hj in h] for si in s])
    np.testing.assert_allclose(core.general_scores(s, h, w), expected, rtol=1e-5, atol=1e-5)


def test_concat_matches_numpy():
    s, h, w, v = rand(3, 4), rand(6, 5), rand(7, 9), rand(7)
    expected = np.array([[v @ np.tanh(w @ np.concatenate([si, hj])) for hj in h] for si in s])
    np.testing.assert_allclose(core.concat_scores(s, h, w, v), expected, rtol=1e-5, atol=1e-5)


def test_additive_matches_numpy():
    s, h, w, u, v = rand(3, 4), rand(6, 5), rand(7, 4), rand(7, 5), rand(7)
    expected = np.array([[v @ np.tanh(w @ si + u @ hj) for hj in h] for si in s])
    np.testing.assert_allclose(core.additive_scores(s, h, w, u, v), expected, rtol=1e-5, atol=1e-5)


def test_location_matches_numpy_and_ignores_keys():
    s, w = rand(3, 4), rand(10, 4)
    expected = s @ w.T
    np.testing.assert_allclose(core.location_scores(s, w), expected, rtol=1e-5, atol=1e-5)
    weights = core.masked_softmax(core.location_scores(s, w))
    np.testing.assert_allclose(weights, np_softmax(expected), rtol=1e-5, atol=1e-6)


def test_cosine_matches_numpy():
    s, h = rand(3, 4), rand(6, 4)
    expected = (s / np.linalg.norm(s, axis=1, keepdims=True)) @ (h / np.linalg.norm(h, axis=1, keepdims=True)).T
    np.testing.assert_allclose(core.cosine_scores(s, h), expected, rtol=1e-5, atol=1e-5)
    assert np.all(np.abs(np.asarray(core.cosine_scores(s, h))) <= 1 + 1e-6)


def test_softmax_with_temperature_matches_numpy():
    x = rand(4, 7)
    for t in (0.1, 1.0, 3.0):
        np.testing.assert_allclose(core.masked_softmax(x, None, t), np_softmax(x / t), rtol=1e-5, atol=1e-6)


def test_padding_and_causal_masks():
    np.testing.assert_array_equal(core.padding_mask([2, 4], 4)[:, 0], [[1, 1, 0, 0], [1, 1, 1, 1]])
    np.testing.assert_array_equal(core.causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    x = rand(3, 3)
    w = np.asarray(core.masked_softmax(x, core.causal_mask(3)))
    assert w[0, 1] == 0.0 and w[0, 2] == 0.0 and w[1, 2] == 0.0
    np.testing.assert_allclose(w[1, :2], np_softmax(x[1, :2]), rtol=1e-5)


def test_fully_masked_row_is_zero_not_nan():
    w = np.asarray(core.masked_softmax(rand(2, 3), np.zeros((2, 3), bool)))
    assert np.all(w == 0.0)


def test_local_m_and_local_p_match_numpy():
    scores, d = rand(5, 9), 2
    centers = core.local_m_centers(5)
    w = np.asarray(core.local_attention_weights(scores, centers, d))
    j = np.arange(9)
    for t in range(5):
        inside = np.abs(j - t) <= d
        align = np.zeros(9)
        align[inside] = np_softmax(scores[t, inside])
        expected = align * np.exp(-((j - t) ** 2) / (2 * (d / 2) ** 2))
        np.testing.assert_allclose(w[t], expected, rtol=1e-5, atol=1e-7)
    s, wp, vp = rand(5, 4), rand(6, 4), rand(6)
    p = np.asarray(core.local_p_centers(s, wp, vp, 9.0))
    expected_p = 9.0 / (1 + np.exp(-(np.tanh(s @ wp.T) @ vp)))
    np.testing.assert_allclose(p, expected_p, rtol=1e-5)
    assert np.all((p >= 0) & (p <= 9))


def test_hard_argmax_is_one_hot_of_the_max():
    w = np.array([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3]], np.float32)
    np.testing.assert_array_equal(core.hard_argmax(w), [[0, 1, 0], [1, 0, 0]])


def test_hard_sample_is_reproducible_and_never_picks_zero_weight():
    w = np.array([[0.0, 0.5, 0.5, 0.0]], np.float32)
    a = np.asarray(core.hard_sample(jax.random.key(3), w, 500))
    b = np.asarray(core.hard_sample(jax.random.key(3), w, 500))
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {1, 2}
    c = np.asarray(core.hard_sample(jax.random.key(4), w, 500))
    assert not np.array_equal(a, c)


def test_soft_attention_is_the_expectation_of_hard_attention():
    w = np.asarray(core.masked_softmax(rand(1, 6)))
    values = rand(6, 3)
    samples = np.asarray(core.hard_sample(jax.random.key(0), w, 40_000))
    hard_mean = values[samples[0]].mean(axis=0)
    soft = np.asarray(core.context_vector(w, values))[0]
    np.testing.assert_allclose(hard_mean, soft, atol=0.03)


def test_scaled_dot_product_attention_matches_numpy():
    q, k, v = rand(2, 3, 4, 8), rand(2, 3, 6, 8), rand(2, 3, 6, 5)
    mask = core.padding_mask([6, 4], 6)[:, None]  # [B, 1, 1, Tk]
    ctx, w = core.scaled_dot_product_attention(q, k, v, mask)
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(8)
    scores = np.where(mask, scores, -np.inf)
    expected_w = np_softmax(scores)
    np.testing.assert_allclose(w, expected_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ctx, expected_w @ v, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("masked", [False, True])
def test_agrees_with_jax_nn_dot_product_attention(masked):
    b, t, h, d = 2, 7, 3, 16
    q, k, v = rand(b, t, h, d), rand(b, t, h, d), rand(b, t, h, d)
    mask = core.padding_mask([7, 5], t)[:, None] if masked else None  # [B, 1, 1, T]
    ctx, _ = core.scaled_dot_product_attention(
        jnp.transpose(q, (0, 2, 1, 3)), jnp.transpose(k, (0, 2, 1, 3)), jnp.transpose(v, (0, 2, 1, 3)), mask
    )
    reference = jax.nn.dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(np.transpose(np.asarray(ctx), (0, 2, 1, 3)), reference, atol=1e-5)


# -------------------------------------------------------------------- hypothesis properties

# Fixed shapes, so each property compiles once; masks and windows vary what is allowed.
TQ, TK = 4, 8
scores_2d = arrays(np.float32, (TQ, TK), elements=st.floats(-30, 30, width=32))


@given(scores=scores_2d, data=st.data(), temperature=st.floats(0.05, 20))
def test_rows_sum_to_one_over_allowed_keys_and_masked_are_exactly_zero(scores, data, temperature):
    mask = data.draw(arrays(bool, scores.shape))
    mask[:, 0] |= ~mask.any(axis=1)  # every row keeps at least one key
    w = np.asarray(core.masked_softmax(scores, mask, temperature))
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-5)
    assert np.all(w[~mask] == 0.0)
    assert np.all(w >= 0.0)


@given(scores=scores_2d, centers=st.data(), half_width=st.integers(0, 5))
def test_out_of_window_weights_are_exactly_zero(scores, centers, half_width):
    # Subnormal centres excluded: XLA on CPU flushes them to zero, numpy does not.
    elements = st.floats(0, TK, width=32, allow_subnormal=False)
    c = np.asarray(centers.draw(arrays(np.float32, (TQ,), elements=elements)))
    w = np.asarray(core.local_attention_weights(scores, c, half_width))
    outside = np.abs(np.arange(TK)[None, :] - c[:, None]) > half_width
    assert np.all(w[outside] == 0.0)
    assert np.all(w.sum(axis=-1) <= 1.0 + 1e-5)


@given(scores=arrays(np.float32, TK, elements=st.floats(-5, 5, width=32), unique=True))
def test_temperature_to_zero_approaches_one_hot(scores):
    ordered = np.sort(scores)
    if ordered[-1] - ordered[-2] < 1e-2:
        return  # near-ties need an even smaller temperature than the floor
    w = np.asarray(core.masked_softmax(scores, None, 1e-3))
    np.testing.assert_allclose(w, np.asarray(core.hard_argmax(scores)), atol=1e-3)


@settings(max_examples=15)
@given(logits=arrays(np.float32, TK, elements=st.floats(-3, 3, width=32)), seed=st.integers(0, 2**31 - 1))
def test_sample_frequencies_converge_to_alpha(logits, seed):
    alpha = np.asarray(core.masked_softmax(logits))
    n = 20_000
    freq = core.sample_frequencies(np.asarray(core.hard_sample(jax.random.key(seed), alpha, n)), len(alpha))
    # 5 standard errors of a binomial share: fails by chance about once in 3 million.
    tolerance = 5 * np.sqrt(alpha * (1 - alpha) / n) + 1e-3
    assert np.all(np.abs(freq - alpha) <= tolerance)


def test_hard_sample_matches_a_numpy_inverse_cdf_oracle():
    # The same uniforms as hard_sample's, searched in numpy: the key drawn is the number of
    # cumulative weights ≤ u·Σα, so zero weights (empty intervals) are never drawn.
    w = np.array([[0.0, 0.2, 0.0, 0.5, 0.3, 0.0], [0.6, 0.0, 0.0, 0.0, 0.0, 0.4]], np.float32)
    key, n = jax.random.key(11), 3000
    drawn = np.asarray(core.hard_sample(key, w, n))
    cdf = np.cumsum(w, axis=-1)
    u = np.asarray(jax.random.uniform(key, (2, n))) * cdf[:, -1:]
    expected = np.stack([np.searchsorted(cdf[i], u[i], side="right") for i in range(2)])
    np.testing.assert_array_equal(drawn, expected)
    assert set(np.unique(drawn[0])) == {1, 3, 4} and set(np.unique(drawn[1])) == {0, 5}
