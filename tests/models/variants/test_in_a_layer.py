"""Every variant works as a layer needs it: batched [B, H, T, d] inputs with a causal mask, under jax.jit, with
finite gradients (issue 57 §2 trains them inside a tiny transformer)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from models.variants import differential as diff
from models.variants import gated, heads, linear, normalisers, online, positions

B, H, K, T, D = 2, 4, 2, 6, 8
CAUSAL = np.tril(np.ones((T, T), bool))


def _scores(q, k):
    return jnp.matmul(q, jnp.swapaxes(k, -1, -2)) / jnp.sqrt(D)


def _rotated(q, k, v):
    inv_freq = positions.rope_inverse_frequencies(D, fraction=0.5)
    q, k = positions.rotate(q, np.arange(T), inv_freq), positions.rotate(k, np.arange(T), inv_freq)
    return jnp.matmul(normalisers.sigmoid_attention_weights(_scores(q, k), CAUSAL), v)


def _alibi_window(q, k, v):
    bias = positions.alibi_bias(positions.alibi_slopes(H), np.arange(T), np.arange(T))
    mask = CAUSAL & positions.sliding_window_mask(np.arange(T), np.arange(T), 3)
    return jnp.matmul(normalisers.sink_softmax(_scores(q, k) + bias, jnp.zeros((H, 1, 1)), mask), v)


LAYERS = {
    "gqa": lambda q, k, v: heads.grouped_query_attention(q, k[:, :K], v[:, :K], CAUSAL)[0],
    "rope-sigmoid": _rotated,
    "alibi-window-sink": _alibi_window,
    "gated": lambda q, k, v: gated.gated_output(
        jnp.matmul(normalisers.softmax_one(_scores(q, k), CAUSAL), v), q[..., :1]
    ),
    "differential": lambda q, k, v: diff.differential_attention(q, k, v, 0.3, 2, CAUSAL)[0],
    "linear": lambda q, k, v: linear.linear_attention(q, k, v)[0],
    "linear-recurrent": lambda q, k, v: linear.linear_attention_recurrent(q, k, v)[0],
    "online": lambda q, k, v: online.online_softmax_attention(q, k, v, CAUSAL, block_size=4)[0],
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_variant_is_batched_jittable_and_differentiable(name):
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal((B, H, T, D)), jnp.float32) for _ in range(3))
    layer = LAYERS[name]
    out = jax.jit(layer)(q, k, v)
    assert out.shape == (B, H, T, D) and bool(jnp.all(jnp.isfinite(out)))
    grads = jax.grad(lambda q, k, v: jnp.sum(layer(q, k, v) ** 2), argnums=(0, 1, 2))(q, k, v)
    assert all(bool(jnp.all(jnp.isfinite(g))) and float(jnp.abs(g).sum()) > 0 for g in grads)
    # Causal: changing the last token changes no earlier output.
    later = layer(q, k.at[:, :, -1].add(1.0), v.at[:, :, -1].add(1.0))
    np.testing.assert_allclose(later[:, :, :-1], out[:, :, :-1], atol=1e-5)


def test_mla_is_jittable_and_differentiable_in_its_weights():
    from models.variants.records import mla_weights

    w = mla_weights(3)
    x = jnp.asarray(np.random.default_rng(1).standard_normal((B, T, 4)), jnp.float32)
    rope = positions.rope_tables(np.arange(T), positions.rope_inverse_frequencies(2))

    def loss(w):
        out, _ = heads.mla_attention(x, heads.mla_cache(x, w, rope), w, rope, CAUSAL, absorbed=True)
        return jnp.sum(out**2)

    grads = jax.jit(jax.grad(loss))(w)
    assert all(bool(jnp.all(jnp.isfinite(g))) for g in grads)
