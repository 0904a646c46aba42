"""The contribution graph of a decoder LM (the GPT trained here, users' folders, the induction model): one
forward, models/lm/forward.py ``decoder``, with the captures the graph reads, jitted with the graph's maths.

From the captures: α (maps), each key's value vector v^h_j (values; a grouped key/value head is read by its G
query heads), each head's output (heads) and the stream entering each block (residual). With W_O^h, head h's
rows of the output projection: the part of key j in query i's attention sum is α^h_ij v^h_j W_O^h; the stream
between attention and FFN is M = X + project_heads(heads) (bias included), and the FFN's output is X[l+1] − M.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models.capture import Capture
from models.flow.graph import FlowGraph, attention_step, ffn_step
from models.lm.forward import decoder, project_heads

FLOW_CAPTURE = Capture(logits=True, maps=True, values=True, heads=True, residual=True)


def mixed_values(layer, cfg, values):
    """Returns [B, H, T, D]: each key's value vector v [B, K, T, d] through each query head's rows of W_O."""
    w_o = layer.o.kernel[...].reshape(cfg.num_heads, cfg.head_dim, cfg.hidden_size)
    return jnp.einsum("bhtd,hde->bhte", jnp.repeat(values, cfg.queries_per_kv, axis=1), w_o)


def decoder_flow(model, ids, key_mask, *, parts: bool = False) -> dict[str, Any]:
    """Returns the graph's arrays of one forward: heads [L, B, H, S, T], residual_attention [L, B, S], ffn and
    residual_ffn [L, B, S] (absent for an attention-only model), visible bool [L, B, S, T], predicted int32 [B, S]
    and its probability [B, S]. parts: also maps, mixed [L, B, H, T, D], mid [L, B, S, D], residual
    [L + 1, B, S, D] and the output biases bias [L, D] (what the tests sum back to the stream).

    model: a DecoderLM or anything decoder reads (the induction model's decoder_view); ids int32 [B, S]; key_mask
    bool [B, S].
    """
    cfg = model.config
    out = decoder(model, ids, key_mask=key_mask, capture=FLOW_CAPTURE)
    residual = out["residual"]
    result: dict[str, list] = {
        "heads": [],
        "residual_attention": [],
        "ffn": [],
        "residual_ffn": [],
        "mixed": [],
        "mid": [],
    }
    for index, maps in enumerate(out["maps"]):  # the captures of each layer, not the layer again
        layer = model.layers[index]
        mixed = mixed_values(layer, cfg, out["values"][index])
        mid = residual[index] + project_heads(layer, out["heads"][index])
        heads, kept = attention_step(maps, mixed, residual[index], mid)
        result["heads"].append(heads)
        result["residual_attention"].append(kept)
        result["mixed"].append(mixed)
        result["mid"].append(mid)
        if cfg.intermediate_size:
            ffn, kept = ffn_step(mid, residual[index + 1] - mid, residual[index + 1])
            result["ffn"].append(ffn)
            result["residual_ffn"].append(kept)
    logits = out["logits"]
    graph = {name: jnp.stack(value) for name, value in result.items() if value and name not in ("mixed", "mid")}
    graph.update(
        {
            "visible": jnp.stack([jnp.any(maps > 0, axis=1) for maps in out["maps"]]),
            "predicted": jnp.argmax(logits, -1).astype(jnp.int32),
            "probability": jnp.exp(jnp.max(logits, -1) - jax.nn.logsumexp(logits, -1)),
        }
    )
    if parts:
        zeros = jnp.zeros((cfg.hidden_size,), jnp.float32)
        graph.update(
            {
                "maps": jnp.stack(out["maps"]),
                "mixed": jnp.stack(result["mixed"]),
                "mid": jnp.stack(result["mid"]),
                "residual": residual,
                "bias": jnp.stack([zeros if layer.o.bias is None else layer.o.bias[...] for layer in model.layers]),
            }
        )
    return graph


@functools.partial(jax.jit, static_argnames=("graphdef", "view", "parts"))
def flow(state, ids, key_mask, *, graphdef, view=None, parts: bool = False) -> dict[str, Any]:
    """Returns decoder_flow of nnx.merge(graphdef, state) (through view, e.g. the induction model's decoder_view):
    one jitted call per (graphdef, shape)."""
    model = nnx.merge(graphdef, state)
    return decoder_flow(model if view is None else view(model), ids, key_mask, parts=parts)


def graph_of(out: dict[str, Any], tokens: int, row: int = 0) -> FlowGraph:
    """Returns the FlowGraph of batch row `row` of flow's output, cut to its first `tokens` (real) tokens."""

    def cut(name):
        return (
            None
            if name not in out
            else np.asarray(out[name])[:, row, ..., :tokens, :tokens]
            if name in ("heads", "visible")
            else np.asarray(out[name])[:, row, :tokens]
        )

    return FlowGraph(cut("heads"), cut("residual_attention"), cut("ffn"), cut("residual_ffn"), cut("visible"))
