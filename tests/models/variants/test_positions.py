"""RoPE, p-RoPE and NoPE, ALiBi's slopes and biases, sliding windows and the local/global pattern."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.variants import positions
from tests.models.variants import oracle


def test_rope_equals_pairwise_rotations():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    inv_freq = positions.rope_inverse_frequencies(8, base=100.0)
    np.testing.assert_allclose(inv_freq, 100.0 ** (-np.arange(0, 8, 2) / 8), rtol=1e-6)
    got = positions.rotate(x, np.arange(3, 8), inv_freq)
    np.testing.assert_allclose(got, oracle.rotate_pairs(x, np.arange(3, 8), inv_freq), atol=2e-6)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 50), st.integers(0, 50), st.integers(1, 30))
def test_rope_scores_depend_only_on_the_distance(i, j, shift):
    rng = np.random.default_rng(i * 100 + j)
    q, k = rng.standard_normal((1, 8)).astype(np.float32), rng.standard_normal((1, 8)).astype(np.float32)
    inv_freq = positions.rope_inverse_frequencies(8)
    score = np.asarray(positions.rotate(q, [i], inv_freq) @ positions.rotate(k, [j], inv_freq).T)
    moved = np.asarray(positions.rotate(q, [i + shift], inv_freq) @ positions.rotate(k, [j + shift], inv_freq).T)
    np.testing.assert_allclose(score, moved, atol=2e-4)


def test_p_rope_drops_the_lowest_frequencies_and_nope_rotates_nothing():
    full = positions.rope_inverse_frequencies(16)
    partial = positions.rope_inverse_frequencies(16, fraction=0.75)
    np.testing.assert_array_equal(partial[:6], full[:6])
    assert np.all(partial[6:] == 0) and np.all(np.diff(full) < 0)  # highest first: the zeros are the lowest
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32)
    np.testing.assert_allclose(positions.rotate(x, np.arange(4), positions.rope_inverse_frequencies(16, fraction=0)), x)
    rotated = np.asarray(positions.rotate(x, np.arange(4), partial))
    np.testing.assert_allclose(rotated[:, [6, 7, 14, 15]], x[:, [6, 7, 14, 15]])  # the dropped pairs stay
    with pytest.raises(ValueError, match="even"):
        positions.rope_inverse_frequencies(7)


@pytest.mark.parametrize("num_heads", [1, 2, 3, 4, 5, 6, 8, 12, 16])
def test_alibi_slopes_follow_the_reference_code(num_heads):
    np.testing.assert_allclose(positions.alibi_slopes(num_heads), oracle.alibi_slopes(num_heads), rtol=1e-6)


def test_alibi_slopes_of_eight_heads_and_the_bias():
    np.testing.assert_allclose(positions.alibi_slopes(8), [2.0**-k for k in range(1, 9)])
    bias = positions.alibi_bias([0.5, 0.25], [3], np.arange(4))  # [H, 1, 4]
    np.testing.assert_allclose(bias, [[[-1.5, -1.0, -0.5, 0.0]], [[-0.75, -0.5, -0.25, 0.0]]])


def test_sliding_window_mask_and_the_local_global_pattern():
    mask = positions.sliding_window_mask(np.arange(5), np.arange(5), 2)
    want = np.array([[i - 2 < j <= i for j in range(5)] for i in range(5)])
    np.testing.assert_array_equal(mask, want)
    np.testing.assert_array_equal(
        positions.sliding_window_mask(np.arange(5), np.arange(5), None), np.tril(np.ones((5, 5), bool))
    )
    assert positions.layer_windows(12, 4, 5) == (4, 4, 4, 4, 4, None) * 2  # Gemma 3: five local, one global
    assert positions.layer_windows(4, 4, 1) == (4, None, 4, None)  # Gemma 2, gpt-oss
