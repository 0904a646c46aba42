"""The contribution graph of a BERT-family encoder (MiniLM): one forward, models/transformer/model.py ``encoder``,
with the captures the graph reads, jitted with the graph's maths.

BERT normalises after each residual sum (post-LN): M = LN₁(X + Σ_h heads_h W_O^h + b_O) and X' = LN₂(M + FFN(M)).
Each part is carried through the LayerNorm linearly, as ALTI does (models/flow/graph.py layer_norm_parts), so
that the parts and the norm's β sum to the stream the model computed. The encoder captures the stream entering
each layer but not M nor the FFN's output: both are recomputed here from the captured heads with the layer's own
modules (the capture patch asked for in the issue note would remove this).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from models.capture import Capture
from models.flow.graph import attention_step, ffn_step, layer_norm_parts
from models.record import InputError
from models.transformer.config import ACTIVATIONS, BertConfig

ENCODER_CAPTURE = Capture(logits=False, maps=True, values=True, heads=True, residual=True)


def _linear(linear, x):
    # the layer's own dense maths (models/transformer/model.py _dense), with or without a bias
    y = jnp.matmul(x, linear.kernel[...])
    return y if getattr(linear, "bias", None) is None else y + linear.bias[...]


def check_encoder(cfg: BertConfig) -> None:
    """Raises InputError (one line) for an encoder the graph does not read: pre-norm or gated feed-forward."""
    if getattr(cfg, "pre_norm", False) or getattr(cfg, "gated_mlp", False):
        raise InputError(
            f"the flow graph reads post-LN BERT-family encoders with a plain feed-forward; "
            f"{cfg.model_type} is pre-norm or gated"
        )


def encoder_flow(model, input_ids, token_type_ids, key_mask, *, parts: bool = False) -> dict[str, Any]:
    """Returns the graph's arrays of one encoder forward: heads [L, B, H, T, T], residual_attention, ffn and
    residual_ffn [L, B, T], visible bool [L, B, T, T]; parts: also mid [L, B, T, D] and residual [L + 1, B, T, D].

    input_ids, token_type_ids int32 [B, T]; key_mask bool [B, T] (True = a real token).
    """
    from models.transformer.model import encoder

    cfg = model.config
    h = cfg.num_attention_heads
    act = ACTIVATIONS[cfg.hidden_act]
    out = encoder(model, input_ids, token_type_ids, key_mask, capture=ENCODER_CAPTURE)
    residual = out["residual"]
    result: dict[str, list] = {"heads": [], "residual_attention": [], "ffn": [], "residual_ffn": [], "mid": []}
    for index, layer in enumerate(model.encoder.layer):  # the captures of each layer; M and FFN(M) recomputed
        x, maps, attn = residual[index], out["maps"][index], layer.attention.output
        w_o = attn.dense.kernel[...].reshape(h, -1, cfg.hidden_size)
        mixed = jnp.einsum("bhtd,hde->bhte", out["values"][index], w_o)
        merged = jnp.transpose(out["heads"][index], (0, 2, 1, 3)).reshape(*x.shape[:2], -1)
        pre = x + _linear(attn.dense, merged)
        mid = attn.LayerNorm(pre)
        inv, centre = layer_norm_parts(pre, attn.LayerNorm.scale[...], attn.LayerNorm.epsilon)
        heads, kept = attention_step(maps * inv[:, None, :, None], centre(mixed), centre(x) * inv[..., None], mid)
        ffn = _linear(layer.output.dense, act(_linear(layer.intermediate.dense, mid)))
        norm = layer.output.LayerNorm
        inv, centre = layer_norm_parts(mid + ffn, norm.scale[...], norm.epsilon)
        f, r = ffn_step(centre(mid) * inv[..., None], centre(ffn) * inv[..., None], residual[index + 1])
        for name, value in (
            ("heads", heads),
            ("residual_attention", kept),
            ("ffn", f),
            ("residual_ffn", r),
            ("mid", mid),
        ):
            result[name].append(value)
    graph = {name: jnp.stack(value) for name, value in result.items() if name != "mid"}
    graph["visible"] = jnp.stack([jnp.any(maps > 0, axis=1) for maps in out["maps"]])
    if parts:
        graph.update({"mid": jnp.stack(result["mid"]), "residual": residual})
    return graph


@functools.partial(jax.jit, static_argnames=("cfg", "parts"))
def flow(params, input_ids, token_type_ids, key_mask, *, cfg: BertConfig, parts: bool = False) -> dict[str, Any]:
    """Returns encoder_flow of the encoder holding params ({dotted path: array}, the runner's): one jitted call per
    (cfg, shape)."""
    from models.transformer.checkpoint import model_from_tensors

    return encoder_flow(model_from_tensors(cfg, params), input_ids, token_type_ids, key_mask, parts=parts)
