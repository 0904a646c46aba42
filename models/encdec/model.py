"""A small Transformer encoder–decoder (Vaswani et al., 2017) for the character-level date task.

Source characters → embedding·√d + sinusoidal positions → N encoder layers (self-attention,
feed-forward) → memory. Target side: <s> then the output so far → embedding·√d + sinusoidal
positions → N decoder layers, each with masked self-attention (position i sees positions
0…i only), cross-attention over the memory, and a feed-forward network → the logits of the
next character. Layers are pre-norm (LayerNorm before each sub-layer, one more at the end of
each stack), which trains without a learning-rate search at this size; the paper put the
norm after the residual sum. No dropout: the generator never repeats a batch.

The three attention records the app shows come out of the same forward pass:
encoder self-attention [B, L, H, S, S], decoder masked self-attention [B, L, H, T, T]
(exactly 0 above the diagonal: masked_softmax writes 0, not a tiny number), cross-attention
[B, L, H, T, S]. Padded source keys get exactly 0 as well.

The maths is models/attention.py's multi_head_attention and masked_softmax; modules own
parameters only; ``teacher_forced`` and ``greedy`` are the pure jitted functions of
(graphdef, params, inputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from models import attention as core

# The same task, buckets and batching as the RNN models (numpy only, no Flax there): one source
# length (the input cap) and three batch sizes, as on 2 cores a compile costs seconds and a padded
# row microseconds.
from models.seq2seq.config import BATCH_BUCKETS, BOS_ID, LENGTH_BUCKETS, batch_rows, pad_batch, teacher_inputs  # noqa: F401
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


# ----------------------------------------------------------------------------- maths


def _heads(block: MultiHead) -> core.MultiHeadParams:
    return core.MultiHeadParams(block.w_q[...], block.w_k[...], block.w_v[...], block.w_o[...],
                                block.b_q[...], block.b_k[...], block.b_v[...], block.b_o[...])


def feed_forward(block: FeedForward, x):
    """Returns ReLU(x W_1 + b_1) W_2 + b_2.  x [B, T, D]."""
    return jax.nn.relu(x @ block.w_1[...] + block.b_1[...]) @ block.w_2[...] + block.b_2[...]


def embed(table, ids, scale: float):
    """Returns table[ids]·scale + sinusoidal positions.  table [V, D], ids int [B, T] -> [B, T, D]."""
    return table[ids] * scale + sinusoidal_positions(ids.shape[1], table.shape[1])[None]


def source_key_mask(src_len, num_keys: int):
    """Returns bool [B, 1, 1, S]: True for real source characters.  src_len int [B]."""
    return (jnp.arange(num_keys)[None, :] < src_len[:, None])[:, None, None, :]


def encode(model: EncDec, src_ids, src_len):
    """Returns (memory [B, S, D], encoder self-attention [B, L, H, S, S]).  src_ids int [B, S], src_len int [B]."""
    cfg = model.cfg
    x = embed(model.source_embed[...], src_ids, float(np.sqrt(cfg.model_dim)))
    mask = source_key_mask(src_len, src_ids.shape[1])
    weights = []
    for layer in model.encoder:
        normed = layer.norm_1(x)
        h, w = core.multi_head_attention(normed, normed, _heads(layer.self_attention), cfg.num_heads, mask)
        x = x + h
        x = x + feed_forward(layer.feed_forward, layer.norm_2(x))
        weights.append(w)
    return model.encoder_norm(x), jnp.stack(weights, axis=1)


def decode(model: EncDec, tgt_in, memory, src_len):
    """Returns (logits [B, T, V], masked self-attention [B, L, H, T, T], cross-attention [B, L, H, T, S]).

    tgt_in int [B, T]: <s> then the characters written so far (position i predicts character i);
    memory [B, S, D] from encode; src_len int [B].
    """
    cfg = model.cfg
    y = embed(model.target_embed[...], tgt_in, float(np.sqrt(cfg.model_dim)))
    causal = core.causal_mask(tgt_in.shape[1])[None, None]  # [1, 1, T, T], numpy: no compile per shape
    memory_mask = source_key_mask(src_len, memory.shape[1])
    self_weights, cross_weights = [], []
    for layer in model.decoder:
        normed = layer.norm_1(y)
        h, w_self = core.multi_head_attention(normed, normed, _heads(layer.self_attention), cfg.num_heads, causal)
        y = y + h
        h, w_cross = core.multi_head_attention(layer.norm_2(y), memory, _heads(layer.cross_attention),
                                               cfg.num_heads, memory_mask)
        y = y + h
        y = y + feed_forward(layer.feed_forward, layer.norm_3(y))
        self_weights.append(w_self)
        cross_weights.append(w_cross)
    logits = model.decoder_norm(y) @ model.output[...] + model.output_b[...]
    return logits, jnp.stack(self_weights, axis=1), jnp.stack(cross_weights, axis=1)


# ----------------------------------------------------------------------- pure functions


def make_model(cfg: EncDecConfig, seed: int = 0) -> tuple[nnx.GraphDef, nnx.State]:
    """Returns (graphdef, params) of a freshly initialised model (split once)."""
    return nnx.split(EncDec(cfg, rngs=nnx.Rngs(seed)))


def abstract_model(cfg: EncDecConfig) -> tuple[nnx.GraphDef, nnx.State]:
    """Returns (graphdef, abstract params): shapes only, no initialiser runs (for loading)."""
    return nnx.split(nnx.eval_shape(lambda: EncDec(cfg, rngs=nnx.Rngs(0))))


@partial(jax.jit, static_argnames=("graphdef",))
def teacher_forced(graphdef, params, src_ids, src_len, tgt_in):
    """Returns (logits [B, T, V], encoder [B, L, H, S, S], decoder [B, L, H, T, T], cross [B, L, H, T, S]).

    src_ids int [B, S] (padded), src_len int [B], tgt_in int [B, T] (<s> then the target shifted right).
    """
    model = nnx.merge(graphdef, params)
    memory, encoder_weights = encode(model, src_ids, src_len)
    logits, decoder_weights, cross_weights = decode(model, tgt_in, memory, src_len)
    return logits, encoder_weights, decoder_weights, cross_weights


@partial(jax.jit, static_argnames=("graphdef",))
def greedy(graphdef, params, src_ids, src_len):
    """Returns (tokens int [B, T], logits [B, T, V], encoder, decoder, cross attention) of greedy decoding.

    Step t feeds <s> and the t characters already chosen and takes the argmax at position t.
    The causal mask makes position t blind to the later (still empty) slots, so the last step's
    pass, over the finished prefix, holds every step's logits and attention exactly as they were
    when that character was written.
    """
    model = nnx.merge(graphdef, params)
    memory, encoder_weights = encode(model, src_ids, src_len)
    length = model.cfg.output_length
    batch = src_ids.shape[0]
    tokens = jnp.zeros((batch, length), jnp.int32).at[:, 0].set(BOS_ID)
    heads, decoder_layers, source = model.cfg.num_heads, model.cfg.decoder_layers, src_ids.shape[1]
    start = (tokens, jnp.zeros((batch, length, model.cfg.target_vocab)),
             jnp.zeros((batch, decoder_layers, heads, length, length)),
             jnp.zeros((batch, decoder_layers, heads, length, source)))

    def write_next(t, carry):
        # One decoder pass per step; the last step's pass (all slots filled) is returned.
        tokens = carry[0]
        logits, decoder_weights, cross_weights = decode(model, tokens, memory, src_len)
        chosen = jnp.argmax(jax.lax.dynamic_index_in_dim(logits, t, axis=1, keepdims=False), -1).astype(jnp.int32)
        written = jax.lax.dynamic_update_index_in_dim(tokens, chosen, jnp.minimum(t + 1, length - 1), axis=1)
        return jnp.where(t + 1 < length, written, tokens), logits, decoder_weights, cross_weights

    _, logits, decoder_weights, cross_weights = jax.lax.fori_loop(0, length, write_next, start)
    return jnp.argmax(logits, -1).astype(jnp.int32), logits, encoder_weights, decoder_weights, cross_weights


