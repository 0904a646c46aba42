"""How scores become weights, after the softmax of 2017: sigmoid attention with its bias b = −log n
(Ramapuram et al. 2024), a learned sink logit in the denominator (gpt-oss, 2025) and softmax₁, the sink fixed
at 0 (Miller 2023). Only the softmax's rows sum to 1: a sink or a sigmoid lets a head attend to less (or more).

scores [..., S]; mask bool broadcastable to scores, True = allowed (a masked weight is exactly 0).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


@jax.jit
def sigmoid_attention_weights(scores, mask=None, bias=None):
    """Returns σ(scores + b) [..., S], each weight on its own; b defaults to −log S, S the sequence length (the
    keys), as in the paper, also under a causal mask. Pass `bias` for another (a per-row −log of the visible keys).

    The bias keeps the total near 1 at initialisation (n weights of about 1/n each), which the paper found
    necessary for stable training.
    """
    if bias is None:
        bias = -jnp.log(jnp.asarray(scores.shape[-1], scores.dtype))
    weights = jax.nn.sigmoid(scores + bias)
    return weights if mask is None else jnp.where(mask, weights, 0.0)


@jax.jit
def sink_softmax(scores, sink_logit, mask=None):
    """Returns e^{s_j} / (e^{b} + Σ_j e^{s_j}) [..., S]: a softmax with one more, value-less logit b in the
    denominator, so a row may give its attention to nothing. sink_logit broadcastable to scores[..., :1]
    (one per head in gpt-oss: pass [H, 1, 1] against [..., H, T, S])."""
    sink = jnp.broadcast_to(jnp.asarray(sink_logit, scores.dtype), (*scores.shape[:-1], 1))
    allowed = jnp.ones(scores.shape, bool) if mask is None else jnp.broadcast_to(mask, scores.shape)
    logits = jnp.where(allowed, scores, -jnp.inf)
    top = jnp.maximum(jnp.max(logits, axis=-1, keepdims=True), sink)  # the sink is finite: top is too
    exp = jnp.exp(logits - top)
    return exp / (jnp.exp(sink - top) + jnp.sum(exp, axis=-1, keepdims=True))


def softmax_one(scores, mask=None):
    """Returns softmax₁: e^{s_j} / (1 + Σ_j e^{s_j}) [..., S], the sink logit fixed at 0."""
    return sink_softmax(scores, 0.0, mask)
