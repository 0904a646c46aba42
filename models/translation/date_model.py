"""The date model trained here (models/encdec/) described as an ``Arch`` with its parameters in the translation
forward's tree, so that models/translation/forward.py, the forward of Hugging Face translation folders, carries
it too: pre-norm LayerNorm (flax's epsilon 1e-6), interleaved sinusoidal positions, embeddings × √D, a final
norm per stack, ReLU, separate source and target embeddings, an output projection with a bias.
tests/models/translation/test_date_model.py holds the two forwards equal on the committed checkpoint.
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp

from models.encdec.model import BOS_ID, EncDecConfig
from models.translation.config import Arch


def date_arch(cfg: EncDecConfig) -> Arch:
    """Returns the Arch of an encoder–decoder of the date task's configuration."""
    head_dim = cfg.model_dim // cfg.num_heads
    return Arch(
        model_type="encdec", width=cfg.model_dim, encoder_layers=cfg.encoder_layers,
        decoder_layers=cfg.decoder_layers, encoder_heads=cfg.num_heads, decoder_heads=cfg.num_heads,
        encoder_head_dim=head_dim, decoder_head_dim=head_dim, vocab_size=cfg.target_vocab, positions="interleaved",
        norm="layer", eps=1e-6, pre_norm=True, embed_norm=False, final_norm=True, scaled=True,
        embed_scale=math.sqrt(cfg.model_dim), output_scale=1.0, position_offset=0,
        max_positions=max(cfg.max_source, cfg.output_length), activation="relu", gated=False, buckets=0,
        max_distance=0, pad_id=0, eos_id=0, decoder_start_id=BOS_ID, wrap_last_label=False,
    )  # fmt: skip


def date_params(model) -> dict[str, Any]:
    """Returns the translation forward's parameter tree of an EncDec module (nnx.merge(graphdef, params))."""

    def norm(layer_norm) -> dict[str, Any]:
        return {"w": layer_norm.scale[...], "b": layer_norm.bias[...]}

    def attention(block) -> dict[str, Any]:
        return {key: {"w": getattr(block, f"w_{key}")[...], "b": getattr(block, f"b_{key}")[...]} for key in "qkvo"}

    def ffn(block) -> dict[str, Any]:
        return {"in": {"w": block.w_1[...], "b": block.b_1[...]}, "out": {"w": block.w_2[...], "b": block.b_2[...]}}

    encoder = [
        {"self": attention(layer.self_attention), "norm_self": norm(layer.norm_1), "ffn": ffn(layer.feed_forward),
         "norm_ffn": norm(layer.norm_2)}
        for layer in model.encoder
    ]  # fmt: skip
    decoder = [
        {"self": attention(layer.self_attention), "norm_self": norm(layer.norm_1),
         "cross": attention(layer.cross_attention), "norm_cross": norm(layer.norm_2), "ffn": ffn(layer.feed_forward),
         "norm_ffn": norm(layer.norm_3)}
        for layer in model.decoder
    ]  # fmt: skip
    return {
        "enc_embed": model.source_embed[...], "dec_embed": model.target_embed[...], "encoder": encoder,
        "decoder": decoder, "enc_final": norm(model.encoder_norm), "dec_final": norm(model.decoder_norm),
        "lm_head": jnp.transpose(model.output[...]), "logits_bias": model.output_b[...],
    }  # fmt: skip
