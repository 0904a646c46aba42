"""The contribution graph of the date Transformer (models/encdec): the greedy output, then one teacher-forced
forward over it with the captures the graph reads (models/encdec/forward.py read_own_output), jitted with the
graph's maths.

Both stacks normalise before each sub-layer (pre-LN), so every sum is read as the decoder LM's is: in the encoder
X[l] → M[l] (self-attention) → X[l+1] (FFN = X[l+1] − M); in the decoder Y[l] → M[l] (masked self-attention)
→ C[l] (cross-attention, whose keys are the memory: the encoder's last stream through its final norm, one node
per source character) → Y[l+1] (FFN = Y[l+1] − C). The route from an output character runs back through the
decoder to the memory nodes it reaches and on from them through the encoder.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from models.capture import Capture
from models.encdec.forward import KindCapture, read_own_output
from models.flow.graph import FlowGraph, attention_step, ffn_step

_STEP = Capture(logits=False, maps=True, values=True, heads=True, residual=True)
FLOW_CAPTURE = KindCapture(
    encoder=_STEP, decoder=_STEP, cross=Capture(logits=False, maps=True, values=True, heads=True)
)


def _head_parts(block, heads_out, values, num_heads: int):
    # -> (each head's output through W_O plus b_O [B, T, D], values through each head's rows of W_O [B, H, S, D])
    w_o = block.w_o[...].reshape(num_heads, -1, block.w_o.shape[-1])
    return jnp.einsum("bhtd,hde->bte", heads_out, w_o) + block.b_o[...], jnp.einsum("bhsd,hde->bhse", values, w_o)


def _stack(steps: list[dict]) -> dict[str, Any]:
    return {name: jnp.stack([step[name] for step in steps]) for name in steps[0]}


@functools.partial(jax.jit, static_argnames=("graphdef", "parts"))
def flow(graphdef, params, src_ids, src_len, *, parts: bool = False) -> dict[str, Any]:
    """Returns {"tokens": the greedy output [B, T], "encoder": {...}, "decoder": {...}} of the graph's arrays, each
    [L, B, ...] (heads, residual_attention, ffn, residual_ffn, visible; the decoder also cross_heads [L, B, H, T, S],
    residual_cross, cross_visible). src_ids int32 [B, S] (padded); src_len int32 [B]. parts: also "captures",
    read_own_output's dict (what the tests sum back to the streams)."""
    from flax import nnx

    model = nnx.merge(graphdef, params)
    h = model.cfg.num_heads
    tokens, out = read_own_output(graphdef, params, src_ids, src_len, capture=FLOW_CAPTURE)
    graphs = {}
    for kind, layers in (("encoder", model.encoder), ("decoder", model.decoder)):
        seen, steps = out[kind], []
        for index, layer in enumerate(layers):  # the captures of each layer, not the layer again
            x, after = seen["residual"][index], seen["residual"][index + 1]
            attended, mixed = _head_parts(layer.self_attention, seen["heads"][index], seen["values"][index], h)
            mid = x + attended
            heads, kept = attention_step(seen["maps"][index], mixed, x, mid)
            step = {"heads": heads, "residual_attention": kept, "visible": jnp.any(seen["maps"][index] > 0, axis=1)}
            if kind == "decoder":
                cross = out["cross"]
                read, mixed = _head_parts(layer.cross_attention, cross["heads"][index], cross["values"][index], h)
                crossed = mid + read
                cross_heads, kept = attention_step(cross["maps"][index], mixed, mid, crossed)
                step.update(
                    {
                        "cross_heads": cross_heads,
                        "residual_cross": kept,
                        "cross_visible": jnp.any(cross["maps"][index] > 0, axis=1),
                    }
                )
                mid = crossed
            step["ffn"], step["residual_ffn"] = ffn_step(mid, after - mid, after)
            steps.append(step)
        graphs[kind] = _stack(steps)
    return {"tokens": tokens, **graphs, **({"captures": out} if parts else {})}


def graphs_of(out: dict[str, Any], sources: int, row: int = 0) -> tuple[FlowGraph, FlowGraph]:
    """Returns (encoder graph over the first `sources` source characters, decoder graph) of batch row `row`."""
    enc = {name: np.asarray(value)[:, row] for name, value in out["encoder"].items()}
    dec = {name: np.asarray(value)[:, row] for name, value in out["decoder"].items()}
    encoder = FlowGraph(
        enc["heads"][..., :sources, :sources],
        enc["residual_attention"][:, :sources],
        enc["ffn"][:, :sources],
        enc["residual_ffn"][:, :sources],
        enc["visible"][:, :sources, :sources],
    )
    decoder = FlowGraph(
        dec["heads"],
        dec["residual_attention"],
        dec["ffn"],
        dec["residual_ffn"],
        dec["visible"],
        dec["cross_heads"][..., :sources],
        dec["residual_cross"],
        dec["cross_visible"][..., :sources],
    )
    return encoder, decoder
