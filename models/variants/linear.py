"""Linear attention (Katharopoulos et al. 2020): the softmax's exp(q·k) replaced by a kernel φ(q)·φ(k),
φ = elu + 1 > 0, so attention is a running sum and a causal layer is a recurrent network:

  parallel:   out_i = Σ_{j≤i} φ(q_i)·φ(k_j) v_j / Σ_{j≤i} φ(q_i)·φ(k_j)
  recurrent:  S_i = S_{i−1} + φ(k_i) v_iᵀ,  z_i = z_{i−1} + φ(k_i),  out_i = φ(q_i)ᵀ S_i / φ(q_i)ᵀ z_i

The state (S [d, d_v], z [d]) has a fixed size however long the input: the KV cache's counterpart
(Dao & Gu 2024 write the same as a state-space model).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

EPS = 1e-6  # keeps the denominator away from 0; φ > 0, so it never is unless every key is masked


def elu_feature_map(x):
    """Returns φ(x) = elu(x) + 1 (> 0), elementwise."""
    return jax.nn.elu(x) + 1.0


@partial(jax.jit, static_argnames=("causal",))
def linear_attention(q, k, v, *, causal: bool = True):
    """Returns (output [..., T, d_v], weights [..., T, S]) of the parallel form: α_ij = φ(q_i)·φ(k_j) / Σ_j.

    q [..., T, d], k [..., S, d], v [..., S, d_v]; causal: key j ≤ query i only.
    """
    kernel = jnp.matmul(elu_feature_map(q), jnp.swapaxes(elu_feature_map(k), -1, -2))  # [..., T, S]
    if causal:
        kernel = jnp.where(jnp.tril(jnp.ones(kernel.shape[-2:], bool)), kernel, 0.0)
    weights = kernel / (jnp.sum(kernel, axis=-1, keepdims=True) + EPS)
    return jnp.matmul(weights, v), weights


@jax.jit
def linear_attention_recurrent(q, k, v):
    """Returns (output [..., T, d_v], final state (S [..., d, d_v], z [..., d])) of the causal recurrent form,
    one token at a time (lax.scan over T). q, k [..., T, d]; v [..., T, d_v]."""
    fq, fk = elu_feature_map(q), elu_feature_map(k)
    state = (
        jnp.zeros((*q.shape[:-2], q.shape[-1], v.shape[-1]), q.dtype),
        jnp.zeros((*q.shape[:-2], q.shape[-1]), q.dtype),
    )

    def step(carry, token):
        s, z = carry
        phi_q, phi_k, value = token
        s = s + phi_k[..., :, None] * value[..., None, :]
        z = z + phi_k
        out = jnp.einsum("...d,...de->...e", phi_q, s) / (jnp.sum(phi_q * z, axis=-1, keepdims=True) + EPS)
        return (s, z), out

    tokens = (jnp.moveaxis(fq, -2, 0), jnp.moveaxis(fk, -2, 0), jnp.moveaxis(v, -2, 0))
    state, outs = jax.lax.scan(step, state, tokens)
    return jnp.moveaxis(outs, 0, -2), state


def linear_state_size(head_dim: int, value_dim: int) -> int:
    """Returns the numbers one head's recurrent state holds: d · d_v + d, whatever the length."""
    return head_dim * value_dim + head_dim
