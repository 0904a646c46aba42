"""The generic gradient methods against references: central finite differences, a python loop of occlusions,
IG's completeness, and closed forms on functions whose attributions are known."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.attribution.gradients import gradient_x_input, integrated_gradients, jacobian, occlusion

RNG = np.random.default_rng(0)
W1 = jnp.asarray(RNG.standard_normal((4, 6)), jnp.float32)
W2 = jnp.asarray(RNG.standard_normal((6, 3)), jnp.float32)


def small_net(x):
    """A smooth scalar function of x [T, 4]: softmax attention over positions, then tanh features."""
    h = jnp.tanh(x @ W1)  # [T, 6]
    scores = h @ h.T / 3.0
    mixed = jax.nn.softmax(scores, axis=-1) @ h
    return jnp.sum(jnp.tanh(mixed @ W2) ** 2)


def vector_net(x):
    """Three targets of x [T, 4] (one per output row)."""
    h = jnp.tanh(x @ W1)
    return jnp.tanh(jnp.sum(h, axis=0) @ W2) * jnp.arange(1.0, 4.0)


VECTOR_NET = jax.jit(vector_net)
OCCLUDED = jax.jit(lambda x, replacement: occlusion(vector_net, x, replacement, batch_size=3))


def finite_differences(f, x, eps=1e-3):
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        out[index] = (float(f(jnp.asarray(up, jnp.float32))) - float(f(jnp.asarray(down, jnp.float32)))) / (2 * eps)
    return out


def test_gradient_x_input_matches_finite_differences():
    x = jnp.asarray(RNG.standard_normal((5, 4)), jnp.float32)
    expected = (finite_differences(small_net, x) * np.asarray(x)).sum(-1)
    np.testing.assert_allclose(jax.jit(lambda x: gradient_x_input(small_net, x))(x), expected, rtol=2e-2, atol=2e-3)


def test_the_jacobian_of_a_vector_function_is_one_row_per_target():
    x = jnp.asarray(RNG.standard_normal((5, 4)), jnp.float32)
    y, jac = jax.jit(lambda x: jacobian(vector_net, x))(x)
    assert jac.shape == (3, 5, 4)
    for row in range(3):
        np.testing.assert_allclose(jac[row], finite_differences(lambda z, r=row: vector_net(z)[r], x), atol=3e-3)
    rows = gradient_x_input(vector_net, x)
    np.testing.assert_allclose(rows, (np.asarray(jac) * np.asarray(x)).sum(-1), rtol=1e-5, atol=1e-6)


def test_integrated_gradients_is_complete_at_64_steps():
    x = jnp.asarray(RNG.standard_normal((6, 4)), jnp.float32)
    attributions, gap = jax.jit(lambda x: integrated_gradients(small_net, x, jnp.zeros_like(x)))(x)
    assert attributions.shape == (6,) and abs(float(gap)) < 1e-3
    assert abs(float(attributions.sum() - (small_net(x) - small_net(jnp.zeros_like(x))))) < 1e-3
    rows, gaps = integrated_gradients(vector_net, x, 0.0)
    assert rows.shape == (3, 6) and np.all(np.abs(gaps) < 1e-3)


def test_integrated_gradients_of_a_linear_function_is_weight_times_input():
    w = jnp.asarray(RNG.standard_normal((5, 3)), jnp.float32)
    x, base = (jnp.asarray(RNG.standard_normal((5, 3)), jnp.float32) for _ in range(2))
    attributions, gap = integrated_gradients(lambda z: jnp.sum(w * z), x, base, steps=4)
    np.testing.assert_allclose(attributions, np.sum(np.asarray(w) * np.asarray(x - base), -1), rtol=1e-5, atol=1e-5)
    assert abs(float(gap)) < 1e-5


@settings(max_examples=8, deadline=None)
@given(st.integers(2, 4), st.integers(0, 1000), st.booleans())
def test_occlusion_equals_a_python_loop(length, seed, per_position):
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.standard_normal((length, 4)), jnp.float32)
    replacement = jnp.asarray(rng.standard_normal((length, 4) if per_position else (4,)), jnp.float32)
    expected = []
    for t in range(length):
        occluded = np.asarray(x).copy()
        occluded[t] = np.asarray(replacement[t] if per_position else replacement)
        expected.append(VECTOR_NET(x) - VECTOR_NET(jnp.asarray(occluded)))
    got = OCCLUDED(x, replacement)
    np.testing.assert_allclose(got, np.stack(expected, axis=-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        occlusion(small_net, x, replacement)[0],
        small_net(x) - small_net(x.at[0].set(replacement[0] if per_position else replacement)),
        rtol=1e-5,
        atol=1e-6,
    )


def test_feature_vectors_of_one_number_per_position_are_scored_too():
    x = jnp.asarray(RNG.standard_normal(5), jnp.float32)
    f = lambda z: jnp.sum(jnp.sin(z) * jnp.arange(5.0))  # noqa: E731
    np.testing.assert_allclose(gradient_x_input(f, x), np.cos(x) * np.arange(5.0) * np.asarray(x), rtol=1e-5)
    assert occlusion(f, x, 0.0).shape == (5,)
