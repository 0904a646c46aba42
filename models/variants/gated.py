"""Gated attention (Qiu et al. 2025, in Qwen3-Next): each head's output is multiplied by a sigmoid gate
computed from the query token's hidden state, after the attention and before the output projection.

A head-wise gate is one number per head and token; an elementwise gate one per output dimension. A gate near
0 lets a head say nothing, which a softmax alone cannot (its weights sum to 1): the paper finds the attention
sink and the massive activations go away.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def gate_logits(x, w_gate, num_heads: int):
    """Returns the gate logits [..., H, T, e] of hidden states x [..., T, D]; w_gate [D, H·e], e = 1 (head-wise)
    or the head width d (elementwise)."""
    projected = jnp.matmul(x, w_gate)  # [..., T, H·e]
    width = projected.shape[-1] // num_heads
    shaped = jnp.reshape(projected, (*projected.shape[:-1], num_heads, width))
    return jnp.swapaxes(shaped, -3, -2)


@jax.jit
def gated_output(context, logits):
    """Returns context ⊙ σ(logits): context [..., H, T, d] each head's output; logits [..., H, T, 1] (head-wise)
    or [..., H, T, d] (elementwise)."""
    return context * jax.nn.sigmoid(logits)
