"""A small Transformer encoder–decoder (Vaswani et al., 2017) for the character-level date task.

Source characters → embedding·√d + sinusoidal positions → N encoder layers (self-attention,
feed-forward) → memory. Target side: <s> then the output so far → embedding·√d + sinusoidal
positions → N decoder layers, each with masked self-attention (position i sees positions
0…i only), cross-attention over the memory, and a feed-forward network → the logits of the
next character. Layers are pre-norm (LayerNorm before each sub-layer, one more at the end of
each stack), which trains without a learning-rate search at this size; the paper put the
norm after the residual sum. No dropout: the generator never repeats a batch.

Modules own parameters only. The maths is models/encdec/forward.py, the one forward every view
calls (encoder self-attention, decoder masked self-attention, cross-attention; a KV cache for
greedy decoding; captures and interventions per attention kind).
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

# The same task, buckets and batching as the RNN models (numpy only, no Flax there): one source
# length (the input cap) and three batch sizes, as on 2 cores a compile costs seconds and a padded
# row microseconds.
from models.seq2seq.config import BOS_ID, LENGTH_BUCKETS, batch_rows, pad_batch, teacher_inputs  # noqa: F401
from models.seq2seq.task import MAX_INPUT_CHARS, OUTPUT_LENGTH, SOURCE_VOCAB, TARGET_VOCAB

RECORD_KINDS = ("encoder", "decoder", "cross")


@dataclass(frozen=True)
class EncDecConfig:
    """Sizes of the encoder–decoder; frozen, so it doubles as a cache key."""

    source_vocab: int = len(SOURCE_VOCAB)
    target_vocab: int = len(TARGET_VOCAB)
    model_dim: int = 64
    num_heads: int = 4
    ffn_dim: int = 128
    encoder_layers: int = 2
    decoder_layers: int = 2
    max_source: int = MAX_INPUT_CHARS
    output_length: int = OUTPUT_LENGTH

    def __post_init__(self):
        if self.model_dim % self.num_heads:
            raise ValueError(f"model_dim {self.model_dim} is not divisible by num_heads {self.num_heads}")
        if min(self.encoder_layers, self.decoder_layers, self.num_heads) < 1:
            raise ValueError("an encoder–decoder needs at least one layer on each side and one head")


PRESETS = {
    "date": EncDecConfig(),
    "tiny": EncDecConfig(model_dim=16, num_heads=2, ffn_dim=32, encoder_layers=1, decoder_layers=1),
}


def sinusoidal_positions(length: int, dim: int) -> np.ndarray:
    """Returns float32 [length, dim]: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(…) (§3.5)."""
    positions = np.arange(length, dtype=np.float64)[:, None]
    rates = 1.0 / np.power(10_000.0, np.arange(0, dim, 2, dtype=np.float64) / dim)
    table = np.zeros((length, dim))
    table[:, 0::2] = np.sin(positions * rates)
    table[:, 1::2] = np.cos(positions * rates)[:, : dim // 2]
    return table.astype(np.float32)


# ----------------------------------------------------------------------------- modules


def _glorot(rngs: nnx.Rngs, fan_in: int, fan_out: int) -> nnx.Param:
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return nnx.Param(jax.random.uniform(rngs.params(), (fan_in, fan_out), jnp.float32, -limit, limit))


def _zeros(n: int) -> nnx.Param:
    return nnx.Param(jnp.zeros((n,), jnp.float32))


class MultiHead(nnx.Module):
    """Projections of one multi-head attention, stored (in, out) with biases."""

    def __init__(self, dim: int, *, rngs: nnx.Rngs):
        self.w_q, self.w_k, self.w_v, self.w_o = (_glorot(rngs, dim, dim) for _ in range(4))
        self.b_q, self.b_k, self.b_v, self.b_o = (_zeros(dim) for _ in range(4))


class FeedForward(nnx.Module):
    """The position-wise network max(0, x W_1 + b_1) W_2 + b_2."""

    def __init__(self, dim: int, hidden: int, *, rngs: nnx.Rngs):
        self.w_1, self.b_1 = _glorot(rngs, dim, hidden), _zeros(hidden)
        self.w_2, self.b_2 = _glorot(rngs, hidden, dim), _zeros(dim)


class EncoderLayer(nnx.Module):
    def __init__(self, cfg: EncDecConfig, *, rngs: nnx.Rngs):
        d = cfg.model_dim
        self.norm_1, self.self_attention = nnx.LayerNorm(d, rngs=rngs), MultiHead(d, rngs=rngs)
        self.norm_2, self.feed_forward = nnx.LayerNorm(d, rngs=rngs), FeedForward(d, cfg.ffn_dim, rngs=rngs)


class DecoderLayer(nnx.Module):
    def __init__(self, cfg: EncDecConfig, *, rngs: nnx.Rngs):
        d = cfg.model_dim
        self.norm_1, self.self_attention = nnx.LayerNorm(d, rngs=rngs), MultiHead(d, rngs=rngs)
        self.norm_2, self.cross_attention = nnx.LayerNorm(d, rngs=rngs), MultiHead(d, rngs=rngs)
        self.norm_3, self.feed_forward = nnx.LayerNorm(d, rngs=rngs), FeedForward(d, cfg.ffn_dim, rngs=rngs)


class EncDec(nnx.Module):
    """Parameters of the whole encoder–decoder."""

    def __init__(self, cfg: EncDecConfig, *, rngs: nnx.Rngs):
        self.cfg = cfg
        d = cfg.model_dim
        self.source_embed = nnx.Param(jax.random.normal(rngs.params(), (cfg.source_vocab, d)) / np.sqrt(d))
        self.target_embed = nnx.Param(jax.random.normal(rngs.params(), (cfg.target_vocab, d)) / np.sqrt(d))
        self.encoder = nnx.List([EncoderLayer(cfg, rngs=rngs) for _ in range(cfg.encoder_layers)])
        self.decoder = nnx.List([DecoderLayer(cfg, rngs=rngs) for _ in range(cfg.decoder_layers)])
        self.encoder_norm, self.decoder_norm = nnx.LayerNorm(d, rngs=rngs), nnx.LayerNorm(d, rngs=rngs)
        self.output, self.output_b = _glorot(rngs, d, cfg.target_vocab), _zeros(cfg.target_vocab)


# ----------------------------------------------------------------------- pure functions


def make_model(cfg: EncDecConfig, seed: int = 0) -> tuple[nnx.GraphDef, nnx.State]:
    """Returns (graphdef, params) of a freshly initialised model (split once)."""
    return nnx.split(EncDec(cfg, rngs=nnx.Rngs(seed)))
