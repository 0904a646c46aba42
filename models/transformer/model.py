"""A BERT-family encoder in flax.nnx that returns every layer's attention probabilities.

The module tree mirrors Hugging Face's BertModel names (embeddings, encoder.layer.N.attention...)
so the loader in models/transformer/checkpoint.py maps tensors one to one. The maths lives in pure
functions (``encoder_forward``); modules own parameters only.

Shapes: B = batch, T = (padded) tokens, D = hidden width, H = heads, d = D / H, F = FFN width.
"""

from __future__ import annotations

import jax.numpy as jnp
from flax import nnx

from models.transformer.config import ACTIVATIONS, MINILM_L6, BertConfig  # noqa: F401 - re-exported

# ----------------------------------------------------------------------------- modules


def _layer_norm(cfg: BertConfig, rngs: nnx.Rngs) -> nnx.LayerNorm:
    # use_fast_variance=False: E[(x-μ)²] like PyTorch, not E[x²]-μ², for parity.
    return nnx.LayerNorm(cfg.hidden_size, epsilon=cfg.layer_norm_eps, use_fast_variance=False, rngs=rngs)


class BertEmbeddings(nnx.Module):
    """Word + position + token-type embeddings, then LayerNorm."""

    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.word_embeddings = nnx.Embed(cfg.vocab_size, cfg.hidden_size, rngs=rngs)
        self.position_embeddings = nnx.Embed(cfg.max_position_embeddings, cfg.hidden_size, rngs=rngs)
        self.token_type_embeddings = nnx.Embed(cfg.type_vocab_size, cfg.hidden_size, rngs=rngs)
        self.LayerNorm = _layer_norm(cfg, rngs)


class BertSelfAttention(nnx.Module):
    """The query, key and value projections of one layer."""

    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.query = nnx.Linear(cfg.hidden_size, cfg.hidden_size, rngs=rngs)
        self.key = nnx.Linear(cfg.hidden_size, cfg.hidden_size, rngs=rngs)
        self.value = nnx.Linear(cfg.hidden_size, cfg.hidden_size, rngs=rngs)


class BertDenseNorm(nnx.Module):
    """A dense projection back to the hidden width followed by residual LayerNorm."""

    def __init__(self, cfg: BertConfig, in_features: int, *, rngs: nnx.Rngs):
        self.dense = nnx.Linear(in_features, cfg.hidden_size, rngs=rngs)
        self.LayerNorm = _layer_norm(cfg, rngs)


class BertAttention(nnx.Module):
    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.self = BertSelfAttention(cfg, rngs=rngs)
        self.output = BertDenseNorm(cfg, cfg.hidden_size, rngs=rngs)


class BertIntermediate(nnx.Module):
    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.dense = nnx.Linear(cfg.hidden_size, cfg.intermediate_size, rngs=rngs)


class BertLayer(nnx.Module):
    """One transformer block: self-attention, then the feed-forward network."""

    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.attention = BertAttention(cfg, rngs=rngs)
        self.intermediate = BertIntermediate(cfg, rngs=rngs)
        self.output = BertDenseNorm(cfg, cfg.intermediate_size, rngs=rngs)


class BertEncoder(nnx.Module):
    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.layer = nnx.List([BertLayer(cfg, rngs=rngs) for _ in range(cfg.num_hidden_layers)])


class BertModel(nnx.Module):
    """The BERT encoder (no pooler: the app needs attention and hidden states only)."""

    def __init__(self, cfg: BertConfig, *, rngs: nnx.Rngs):
        self.config = cfg
        self.embeddings = BertEmbeddings(cfg, rngs=rngs)
        self.encoder = BertEncoder(cfg, rngs=rngs)

    def __call__(self, input_ids, token_type_ids, key_mask):
        """Returns (hidden [B, T, D], attentions: tuple of L arrays [B, H, T, T]); see encoder_forward."""
        return encoder_forward(self, input_ids, token_type_ids, key_mask)


# ----------------------------------------------------------------------------- maths


def _dense(linear: nnx.Linear, x):
    # x [..., in] @ kernel [in, out] + bias [out]
    return jnp.matmul(x, linear.kernel[...]) + linear.bias[...]


def _split_heads(x, num_heads: int):
    # [B, T, H·d] -> [B, H, T, d]: the layout where QKᵀ and A·V are plain batched matmuls
    # (with einsum over [B, T, H, d] XLA copies each probability matrix before A·V).
    b, t, hd = x.shape
    return jnp.transpose(x.reshape(b, t, num_heads, hd // num_heads), (0, 2, 1, 3))


def key_bias(key_mask):
    """Returns float32 [B, 1, 1, T]: 0 for real keys, the most negative float for padding.

    key_mask bool [B, T]. Added to the scores, as Hugging Face's BERT does: exp() of it
    underflows to exactly 0, so padding keys get weight exactly 0.
    """
    return jnp.where(key_mask, 0.0, jnp.finfo(jnp.float32).min)[:, None, None, :]


def bias_softmax(scores, bias):
    """Returns softmax(scores + bias) over the last axis.  scores [B, H, Tq, Tk], bias [B, 1, 1, Tk].

    The same maths as models.attention.masked_softmax for rows with at least one real key
    (every BERT row has [CLS]); written out because the forward is speed-critical: this form
    fuses into two reads and one write of the scores and took half of masked_softmax's CPU
    time at 32 × 128 tokens (bench/transformer.py, docs/PERFORMANCE.md).
    """
    logits = scores + bias
    row_max = jnp.max(logits, axis=-1, keepdims=True)
    exp = jnp.exp(logits - row_max)
    return exp * (1.0 / jnp.sum(exp, axis=-1, keepdims=True))


def self_attention(attn: BertAttention, x, bias, num_heads: int):
    """Returns (output [B, T, D], probabilities [B, H, T, T]) of one layer's multi-head attention.

    x [B, T, D]; bias float32 [B, 1, 1, T] from key_bias (padding keys get weight 0).
    """
    q = _split_heads(_dense(attn.self.query, x), num_heads)
    k = _split_heads(_dense(attn.self.key, x), num_heads)
    v = _split_heads(_dense(attn.self.value, x), num_heads)
    scale = jnp.asarray(1.0 / (q.shape[-1] ** 0.5), q.dtype)
    scores = jnp.matmul(q * scale, jnp.swapaxes(k, -1, -2))  # [B, H, T, T]
    probs = bias_softmax(scores, bias)
    context = jnp.matmul(probs, v)  # [B, H, T, d]
    b, h, t, d = context.shape
    merged = jnp.transpose(context, (0, 2, 1, 3)).reshape(b, t, h * d)
    out = attn.output.LayerNorm(_dense(attn.output.dense, merged) + x)
    return out, probs


def encoder_forward(model: BertModel, input_ids, token_type_ids, key_mask):
    """Returns (hidden [B, T, D], attentions: tuple of L arrays [B, H, T, T] float32).

    input_ids, token_type_ids int32 [B, T]; key_mask bool [B, T], True = a real token.
    Positions are 0..T-1, as in BERT with absolute position embeddings.
    """
    cfg = model.config
    act = ACTIVATIONS[cfg.hidden_act]
    emb = model.embeddings
    positions = jnp.arange(input_ids.shape[1])
    x = (
        emb.word_embeddings.embedding[...][input_ids]
        + emb.position_embeddings.embedding[...][positions][None]
        + emb.token_type_embeddings.embedding[...][token_type_ids]
    )
    x = emb.LayerNorm(x)
    bias = key_bias(key_mask)  # [B, 1, 1, T]
    attentions = []
    for layer in model.encoder.layer:
        x, probs = self_attention(layer.attention, x, bias, cfg.num_attention_heads)
        hidden = act(_dense(layer.intermediate.dense, x))
        x = layer.output.LayerNorm(_dense(layer.output.dense, hidden) + x)
        attentions.append(probs)
    return x, tuple(attentions)
