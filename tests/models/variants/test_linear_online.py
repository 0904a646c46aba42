"""Linear attention's parallel and recurrent forms against the oracle and each other; the online softmax
(FlashAttention) against the naive softmax, in key and query blocks of any size, keeping the log-sum-exp."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models import attention as core
from models.variants import linear, online
from tests.models.variants import oracle

T, D, DV = 9, 4, 3


def _qkv(seed: int, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    return tuple((rng.standard_normal(shape) * scale).astype(np.float32) for shape in ((T, D), (T, D), (T, DV)))


def test_linear_attention_parallel_form_equals_oracle():
    q, k, v = _qkv(0)
    for causal in (True, False):
        out, weights = linear.linear_attention(q, k, v, causal=causal)
        want_out, want_weights = oracle.linear_parallel(q, k, v, causal)
        np.testing.assert_allclose(weights, want_weights, atol=1e-6)
        np.testing.assert_allclose(out, want_out, atol=1e-5)
    np.testing.assert_allclose(linear.elu_feature_map(np.array([-1.0, 0.0, 2.0])), [np.exp(-1), 1.0, 3.0], rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**16), st.sampled_from([0.5, 1.0, 3.0]))
def test_linear_attention_recurrent_form_equals_the_parallel_form(seed, scale):
    q, k, v = _qkv(seed, scale)
    parallel, _ = linear.linear_attention(q, k, v, causal=True)
    recurrent, (state, z) = linear.linear_attention_recurrent(q, k, v)
    # float32 sums of φ(k)vᵀ in another order: at scale 3 the outputs reach ~6 and differ by up to 1.8e-5 relative.
    np.testing.assert_allclose(recurrent, parallel, rtol=1e-4, atol=1e-5)
    want_out, want_state, want_z = oracle.linear_recurrent(q, k, v)
    np.testing.assert_allclose(recurrent, want_out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(state, want_state, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z, want_z, rtol=1e-5)
    assert state.size + z.size == linear.linear_state_size(D, DV)  # fixed, whatever T


def test_linear_attention_recurrent_form_batches_over_heads():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 3, T, D)).astype(np.float32) for _ in range(3))
    out, _ = linear.linear_attention_recurrent(q, k, v)
    parallel, _ = linear.linear_attention(q, k, v)
    np.testing.assert_allclose(out, parallel, rtol=1e-5, atol=1e-5)


@settings(max_examples=16, deadline=None)
@given(st.integers(1, T + 3), st.sampled_from([None, 1, 4, T]), st.integers(0, 2**16), st.booleans())
def test_online_softmax_equals_naive_within_1e_6_in_any_blocks(block, query_block, seed, causal):
    q, k, v = _qkv(seed)
    mask = np.tril(np.ones((T, T), bool)) if causal else None
    out, lse = online.online_softmax_attention(q, k, v, mask, block_size=block, query_block=query_block)
    want_out, want_weights = oracle.attention(q, k, v, mask)
    scores = np.asarray(q, np.float64) @ np.asarray(k, np.float64).T / np.sqrt(D)
    np.testing.assert_allclose(out, want_out, atol=1e-6)
    np.testing.assert_allclose(lse, oracle.logsumexp(scores, mask), atol=1e-6)
    recovered = online.weights_from_lse(np.asarray(scores, np.float32), lse, mask)
    np.testing.assert_allclose(recovered, want_weights, atol=1e-6)
    naive_out, _ = core.scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_allclose(out, naive_out, atol=1e-6)


def test_online_softmax_with_an_empty_row_and_large_scores():
    q, k, v = _qkv(1, scale=30.0)  # scores in the hundreds: the running maximum keeps exp finite
    mask = np.ones((T, T), bool)
    mask[2] = False
    out, lse = online.online_softmax_attention(q, k, v, mask, block_size=4)
    assert np.all(np.asarray(out)[2] == 0) and np.asarray(lse)[2] == -np.inf
    keep = np.arange(T) != 2
    naive, _ = core.scaled_dot_product_attention(q, k, v, mask)  # the same float32 scores
    np.testing.assert_allclose(np.asarray(out)[keep], np.asarray(naive)[keep], rtol=1e-5, atol=1e-5)
    want_out, _ = oracle.attention(q, k, v, mask)  # float64 scores: float32's rounding of scores near 10³
    np.testing.assert_allclose(np.asarray(out)[keep], want_out[keep], rtol=1e-3)
