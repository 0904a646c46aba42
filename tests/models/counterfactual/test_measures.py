"""The model-free measures of the 2019 tests against numpy oracles and hand-made cases: JSD and TVD, the
shuffles, the adversary on a toy model whose insensitive directions are known, and Serrano & Smith's counting."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from models.counterfactual import measures


def _numpy_jsd(p, q):
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    m = (p + q) / 2
    kl = lambda a: sum(a_i * np.log(a_i / m_i) for a_i, m_i in zip(a, m) if a_i > 0)  # noqa: E731
    return (kl(p) + kl(q)) / 2


def _distribution(values):
    values = np.asarray(values, np.float64)
    return (values / values.sum()).astype(np.float32)


# One length (8) so that the jitted measures compile once; zeros (often drawn) stand for shorter supports.
weights = arrays(np.float64, 8, elements=st.floats(0, 10) | st.just(0.0)).filter(lambda a: a.sum() > 1e-3)
JSD, TVD = jax.jit(measures.jsd), jax.jit(measures.tvd)


@settings(max_examples=60, deadline=None)
@given(weights, weights)
def test_jsd_and_tvd_against_numpy_oracles(a, b):
    p, q = _distribution(a), _distribution(b)
    np.testing.assert_allclose(float(JSD(p, q)), _numpy_jsd(p, q), atol=2e-6)
    np.testing.assert_allclose(float(TVD(p, q)), 0.5 * np.abs(p.astype(np.float64) - q).sum(), atol=1e-6)
    assert -1e-6 <= float(JSD(p, q)) <= np.log(2) + 1e-6


def test_jsd_of_disjoint_distributions_is_ln2_and_its_gradient_is_finite():
    p, q = jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 0.5, 0.5])
    np.testing.assert_allclose(float(JSD(p, q)), np.log(2), rtol=1e-6)
    assert np.all(np.isfinite(np.asarray(jax.jit(jax.grad(lambda x: measures.jsd(x, q)))(p))))


def test_heads_tvd_is_the_largest_over_heads():
    ps = (jnp.array([0.5, 0.5]), jnp.array([0.2, 0.3, 0.5]))
    qs = (jnp.array([0.6, 0.4]), jnp.array([0.5, 0.3, 0.2]))
    np.testing.assert_allclose(float(measures.heads_tvd(ps, qs)), 0.3, atol=1e-7)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 9), st.integers(0, 4), st.integers(0, 1000))
def test_permutation_orders_shuffle_the_real_positions_and_keep_the_padding(n, pad, seed):
    orders = measures.permutation_orders(np.asarray([n, max(n - 1, 1)]), n + pad, 7, seed)
    assert orders.shape == (2, 7, n + pad)
    for row, length in zip(orders, (n, max(n - 1, 1))):
        for order in row:
            assert sorted(order[:length]) == list(range(length))
            assert list(order[length:]) == list(range(length, n + pad))


def test_masked_softmax_and_uniform_are_zero_on_padding():
    mask = jnp.array([True, True, False])
    np.testing.assert_allclose(
        np.asarray(measures.masked_softmax(jnp.array([0.0, np.log(3.0), 5.0]), mask)), [0.25, 0.75, 0.0], atol=1e-7
    )
    np.testing.assert_allclose(np.asarray(measures.uniform(mask)), [0.5, 0.5, 0.0])


def _toy_output(alpha, item):
    # A "model" that reads only the mass on the first two positions (and, through item, nothing else): any α̃ that
    # keeps that mass gives the same output, so the adversary can move everything inside each group.
    a, b = jnp.sum(alpha[:2]), jnp.sum(alpha[2:])
    return (jax.nn.softmax(jnp.stack([3.0 * a, 3.0 * b]) + item),)


def test_adversary_keeps_the_output_within_epsilon_and_moves_alpha():
    alpha = jnp.array([0.7, 0.05, 0.2, 0.05, 0.0])
    mask = jnp.array([True, True, True, True, False])
    run = jax.jit(lambda key: measures.adversary(_toy_output, 0.0, alpha, mask, key))
    tilde, divergence, distance = run(jax.random.key(0))
    base = _toy_output(alpha, 0.0)[0]
    np.testing.assert_allclose(float(distance), float(measures.tvd(_toy_output(tilde, 0.0)[0], base)), atol=1e-7)
    assert float(distance) <= 0.01
    np.testing.assert_allclose(float(divergence), _numpy_jsd(np.asarray(tilde), np.asarray(alpha)), atol=1e-5)
    assert float(tilde[-1]) == 0.0 and abs(float(tilde.sum()) - 1) < 1e-6
    # Inside the groups the mass may go anywhere: α̃ puts it on the small items (measured 0.43 nats).
    assert float(divergence) > 0.3


def test_adversary_returns_alpha_itself_when_every_change_moves_the_output():
    # A steep model: the output follows α itself, so no α̃ far from α keeps the TVD within 0.01.
    steep = lambda alpha, item: (alpha,)  # noqa: E731
    alpha = jnp.array([0.5, 0.5])
    mask, settings = jnp.array([True, True]), measures.AdversarySettings(steps=50)
    run = jax.jit(lambda key: measures.adversary(steep, 0, alpha, mask, key, settings))
    _, divergence, distance = run(jax.random.key(1))
    assert float(distance) <= 0.01 and float(divergence) < 1e-3


def test_permutation_tvd_against_a_loop():
    alpha = jnp.array([0.6, 0.3, 0.1, 0.0])
    orders = measures.permutation_orders(np.asarray(3), 4, 6, seed=3)
    got = np.asarray(measures.permutation_tvd(_toy_output, 0.0, alpha, orders))
    base = np.asarray(_toy_output(alpha, 0.0)[0])
    expected = [0.5 * np.abs(np.asarray(_toy_output(alpha[o], 0.0)[0]) - base).sum() for o in orders]
    np.testing.assert_allclose(got, expected, atol=1e-7)


def test_removal_masks_remove_in_alpha_order_and_keep_one():
    keep = measures.removal_masks(np.array([0.1, 0.5, 0.3, 0.1, 0.0]), 4)
    np.testing.assert_array_equal(keep, [[1, 0, 1, 1, 0], [1, 0, 0, 1, 0], [0, 0, 0, 1, 0]])
    np.testing.assert_allclose(
        np.asarray(measures.removed(jnp.array([0.1, 0.5, 0.3, 0.1]), keep[0, :4])), [0.2, 0.0, 0.6, 0.2], atol=1e-7
    )


def test_removals_until_flip():
    assert measures.removals_until_flip(np.array([1, 1, 0, 1]), 1) == 3
    assert measures.removals_until_flip(np.array([0, 1]), 1) == 1
    assert measures.removals_until_flip(np.array([1, 1]), 1) is None


def test_flips_on_a_hand_made_linear_model():
    # Four sentences voting for class 1 (+) or 0 (−) with strength v: decision = [Σ α_i v_i > 0].
    votes = np.array([-1.0, 1.0, 2.0, -3.0])
    alpha = np.array([0.1, 0.3, 0.4, 0.2])  # Σ α v = −0.1 + 0.3 + 0.8 − 0.6 = 0.4 > 0: class 1; the top is sentence 2

    def decide(alphas):
        return (np.asarray(alphas) @ votes > 0).astype(int)

    flips = measures.flips(alpha, 1, decide)
    # Top sentence 2 removed: (−0.1 + 0.3 − 0.6)/0.6 < 0, it flips. Others alone: 0 → 0.5/0.9 > 0; 1 → 0.1/0.7 > 0;
    # 3 → 1.0/0.8 > 0: none flips. In α order, the first removal already flips.
    assert flips.top_flips and flips.random_flip_rate == 0.0 and flips.removals_to_flip == 1 and flips.sentences == 4
    # Against class 0: every other sentence's removal leaves 1 ("flips"); in α order (2, 1, 3) the sums are negative.
    other = measures.flips(alpha, 0, decide)
    assert not other.top_flips and other.random_flip_rate == 1.0 and other.removals_to_flip is None
    # A model that never changes its mind never flips.
    never = measures.flips(alpha, 1, lambda alphas: np.ones(len(alphas), int))
    assert not never.top_flips and never.removals_to_flip is None
