"""Gradient × input, integrated gradients and occlusion of any function of an input x [T, D] (or [T]).

Written once for every model: f maps x to a scalar, or to a vector [R] (one target per output row), and each
method returns one score per input position, [T] or [R, T], summing over the feature axis. Everything is
jit-compatible; a vector f costs one backward per row (jax.vjp, rows mapped in chunks of ROW_BATCH).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

ROW_BATCH = 16  # backward passes run side by side (lax.map's batch): bounds memory for long inputs


def jacobian(f: Callable, x) -> tuple[jax.Array, jax.Array]:
    """Returns (f(x), ∂f/∂x [*f(x).shape, *x.shape]): one backward per output entry, mapped in chunks."""
    y, pullback = jax.vjp(f, x)
    if y.ndim == 0:
        return y, pullback(jnp.ones_like(y))[0]
    basis = jnp.eye(y.size, dtype=y.dtype).reshape(y.size, *y.shape)
    rows = jax.lax.map(lambda e: pullback(e)[0], basis, batch_size=min(ROW_BATCH, y.size))
    return y, rows.reshape(*y.shape, *x.shape)


def per_position(grad, delta, out_ndim: int):
    """Returns Σ over x's feature axes of grad ⊙ delta: [*out, T] from grad [*out, T, ...] and delta [T, ...]."""
    product = grad * delta
    return jnp.sum(product, axis=tuple(range(out_ndim + 1, product.ndim)))


def gradient_x_input(f: Callable, x):
    """Returns ∂f/∂x ⊙ x summed over features per position: [T] (scalar f) or [R, T] (Shrikumar et al. 2016)."""
    y, grad = jacobian(f, x)
    return per_position(grad, x, y.ndim)


def gauss_legendre(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Returns (nodes, weights) of the Gauss–Legendre rule on [0, 1] (Captum's default for IG)."""
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    return ((nodes + 1) / 2).astype(np.float32), (weights / 2).astype(np.float32)


def integrated_gradients(f: Callable, x, baseline, steps: int = 64):
    """Returns (attributions [T] or [R, T], completeness gap [] or [R]) of Sundararajan et al. (2017):
    (x − x') ⊙ ∫₀¹ ∂f/∂x(x' + a(x − x')) da summed over features, the integral by `steps`-point Gauss–Legendre.

    The gap is Σ_t attribution_t − (f(x) − f(x')): 0 for the exact integral (completeness).
    baseline: broadcastable to x.
    """
    baseline = jnp.broadcast_to(jnp.asarray(baseline, x.dtype), x.shape)
    nodes, weights = gauss_legendre(steps)
    delta = x - baseline

    def weighted(node_weight):
        node, weight = node_weight[0], node_weight[1]
        return weight * jacobian(f, baseline + node * delta)[1]

    grads = jax.lax.map(weighted, jnp.stack([jnp.asarray(nodes), jnp.asarray(weights)], axis=1))
    out = f(x)
    attributions = per_position(jnp.sum(grads, axis=0), delta, out.ndim)
    return attributions, jnp.sum(attributions, axis=-1) - (out - f(baseline))


def occlusion(f: Callable, x, replacement, batch_size: int | None = None):
    """Returns f(x) − f(x with position t replaced) for every t: [T] (scalar f) or [R, T] (leave-one-out,
    Zeiler & Fergus 2014; Li et al. 2016). replacement: broadcastable to x (one row per position, or one for all).
    The T occluded inputs run as one jax.vmap batch (in chunks of batch_size when given).
    """
    replacement = jnp.broadcast_to(jnp.asarray(replacement, x.dtype), x.shape)
    positions = jnp.arange(x.shape[0])

    def occluded(t):
        return f(x.at[t].set(replacement[t]))

    out = f(x)
    drops = jax.lax.map(occluded, positions, batch_size=batch_size or x.shape[0])  # [T, *out]
    return jnp.moveaxis(out[None] - drops, 0, -1)
