"""Sigmoid attention with b = −log n, the sink logit, softmax₁, the gate and differential attention against
their oracles."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from models.variants import differential as diff
from models.variants import gated, normalisers
from tests.models.variants import oracle

SCORES = arrays(np.float32, (3, 6), elements=st.floats(-30, 30, width=32))


@settings(max_examples=20, deadline=None)
@given(SCORES)
def test_sigmoid_weights_equal_oracle_with_bias_minus_log_n(scores):
    mask = np.tril(np.ones((3, 6), bool), k=3)
    np.testing.assert_allclose(normalisers.sigmoid_attention_weights(scores), oracle.sigmoid_weights(scores), atol=1e-6)
    got = normalisers.sigmoid_attention_weights(scores, mask)
    np.testing.assert_allclose(got, oracle.sigmoid_weights(scores, mask), atol=1e-6)
    assert np.all(np.asarray(got)[~mask] == 0)
    per_row = -np.log(mask.sum(-1, keepdims=True)).astype(np.float32)  # a bias of one's own: −log of the visible keys
    got = normalisers.sigmoid_attention_weights(scores, mask, per_row)
    np.testing.assert_allclose(got, oracle.sigmoid_weights(scores, mask, per_row), atol=1e-6)


def test_sigmoid_weights_of_zero_scores_sum_to_one():
    np.testing.assert_allclose(
        np.sum(normalisers.sigmoid_attention_weights(np.zeros((1, 1000), np.float32))), 1.0, rtol=2e-3
    )  # n · σ(−log n) = n / (n + 1)


@settings(max_examples=20, deadline=None)
@given(SCORES, st.floats(-20, 20))
def test_sink_softmax_equals_oracle_and_gives_less_than_one(scores, sink):
    got = np.asarray(normalisers.sink_softmax(scores, sink))
    np.testing.assert_allclose(got, oracle.sink_softmax(scores, sink), atol=1e-6)
    assert np.all(got.sum(-1) < 1 + 1e-6)


def test_softmax_one_is_the_sink_at_zero_and_a_very_low_sink_is_the_softmax():
    scores = np.array([[1.0, 2.0, -1.0], [-50.0, -60.0, -70.0]], np.float32)
    np.testing.assert_allclose(normalisers.softmax_one(scores), oracle.sink_softmax(scores, 0.0), atol=1e-7)
    assert float(np.sum(normalisers.softmax_one(scores)[1])) < 1e-20  # all scores low: attend to nothing
    np.testing.assert_allclose(normalisers.sink_softmax(scores, -1e4), oracle.softmax(scores), atol=1e-6)
    big = normalisers.sink_softmax(np.array([[1000.0, 999.0]], np.float32), 998.0)  # no overflow
    np.testing.assert_allclose(big, oracle.sink_softmax(np.array([[2.0, 1.0]]), 0.0), atol=1e-6)
    masked = normalisers.sink_softmax(scores, 0.5, np.array([True, False, True]))
    np.testing.assert_allclose(masked[:, 1], 0.0)


@pytest.mark.parametrize("width", [1, 4])  # head-wise, elementwise
def test_gate_equals_sigmoid_of_the_projection_times_the_output(width):
    rng = np.random.default_rng(width)
    x = rng.standard_normal((5, 6)).astype(np.float32)  # [T, D]
    w_gate = rng.standard_normal((6, 3 * width)).astype(np.float32)
    context = rng.standard_normal((3, 5, 4)).astype(np.float32)  # [H, T, d]
    logits = gated.gate_logits(x, w_gate, 3)
    assert logits.shape == (3, 5, width)
    want_logits = (x @ w_gate).reshape(5, 3, width).transpose(1, 0, 2)
    np.testing.assert_allclose(logits, want_logits, atol=1e-5)
    np.testing.assert_allclose(gated.gated_output(context, logits), context / (1 + np.exp(-want_logits)), atol=1e-6)


def test_differential_attention_equals_oracle():
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 4, 8)).astype(np.float32), rng.standard_normal((2, 6, 8)).astype(np.float32)
    v = rng.standard_normal((2, 6, 8)).astype(np.float32)
    vectors = [rng.standard_normal((2, 4)).astype(np.float32) * 0.1 for _ in range(4)]
    assert diff.lambda_init(1) == pytest.approx(0.2)
    assert diff.lambda_init(10) == pytest.approx(0.8 - 0.6 * np.exp(-2.7))
    lam = np.asarray(diff.differential_lambda(*vectors, diff.lambda_init(3)))  # [H]
    want_lam = [
        np.exp(vectors[0][h] @ vectors[1][h]) - np.exp(vectors[2][h] @ vectors[3][h]) + diff.lambda_init(3)
        for h in range(2)
    ]
    np.testing.assert_allclose(lam, want_lam, rtol=1e-6)
    scale = rng.standard_normal(8).astype(np.float32)
    out, weights = diff.differential_attention(q, k, v, lam[:, None, None], 3, norm_scale=scale)
    for h in range(2):
        want_out, want_a = oracle.differential(q[h], k[h], v[h], want_lam[h], 3, scale)
        np.testing.assert_allclose(weights[h], want_a, atol=2e-6)
        np.testing.assert_allclose(out[h], want_out, atol=1e-5)
