"""A BERT-family encoder in flax.nnx and its one forward: every view (the maps of the runner, the hidden
states the HAN and sentence alignment read, the neuron view, the corpus statistics, queries and keys of a
head) is a call of ``encoder`` with what to capture and what to change.

The module tree mirrors Hugging Face's BertModel names (embeddings, encoder.layer.N.attention...) for the
loader (models/transformer/checkpoint.py); modules own parameters only. What to keep and what to change are
models/capture.py's ``Capture`` and ``Interventions``: an intermediate is handed back only when asked for,
so the plain path computes nothing more, and interventions act after the softmax (Penzai's knock-out).

Shapes: B = batch, T = (padded) tokens, D = hidden width, H = heads, d = D / H, F = FFN width, L = layers.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from flax import nnx

from models.capture import CAPTURED, PLAIN, Capture, Interventions, heads_output, keep_values
from models.transformer.config import ACTIVATIONS, BertConfig

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


def attention(attn: BertAttention, num_heads: int, x, bias, *, index: int, change: Interventions,
              capture: Capture, sown: dict):
    """Returns the output [B, T, D] of one layer's multi-head attention (output projection, residual, LayerNorm).

    x [B, T, D]; bias float32 [B, 1, 1, T] from key_bias (padding keys get weight 0). change: the
    Interventions, read at layer `index`; the captures asked for this layer are appended to sown's lists.
    """
    q = _split_heads(_dense(attn.self.query, x), num_heads)
    k = _split_heads(_dense(attn.self.key, x), num_heads)
    v = _split_heads(_dense(attn.self.value, x), num_heads)
    v = keep_values(v, change, index)
    scale = jnp.asarray(1.0 / (q.shape[-1] ** 0.5), q.dtype)
    scores = jnp.matmul(q * scale, jnp.swapaxes(k, -1, -2))  # [B, H, T, T]; the scale on q: T·d products, not T²
    probs, context = heads_output(bias_softmax(scores, bias), v, change, index)  # [B, H, T, T], [B, H, T, d]
    for name, value in (("maps", probs), ("queries", q), ("keys", k), ("values", v), ("scores", scores),
                        ("heads", context)):
        if capture.wants(name, index):
            sown[name].append(value)
    b, h, t, d = context.shape
    merged = jnp.transpose(context, (0, 2, 1, 3)).reshape(b, t, h * d)
    return attn.output.LayerNorm(_dense(attn.output.dense, merged) + x)


def embed(model: BertModel, input_ids, token_type_ids):
    """Returns x [B, T, D]: word + position (0..T-1) + token-type embeddings, then LayerNorm.  ids int32 [B, T]."""
    emb = model.embeddings
    positions = emb.position_embeddings.embedding[...][: input_ids.shape[1]][None]
    return emb.LayerNorm(emb.word_embeddings.embedding[...][input_ids] + positions
                         + emb.token_type_embeddings.embedding[...][token_type_ids])


def encoder(model: BertModel, input_ids, token_type_ids, key_mask, *, capture: Capture = PLAIN,
            interventions: Interventions | None = None, stream=None) -> dict[str, Any]:
    """Returns the forward's outputs as a dict: "final" (the last hidden states [B, T, D]) and what capture
    asks for: CAPTURED names as tuples over the chosen layers (maps α [B, H, T, T], exactly 0 on padding
    keys; queries, keys, values [B, H, T, d]; scores q·k/√d before the mask [B, H, T, T]; heads [B, H, T, d]),
    and "residual" [L + 1, B, T, D] (the stream entering each layer and after the last: Hugging Face's
    hidden_states). An encoder has no logits: capture.logits is not read.

    input_ids, token_type_ids int32 [B, T]; key_mask bool [B, T], True = a real token. interventions: as in
    models/capture.py, with value_keep {layer: [B, T]}. What no output needs is left out by XLA when jitted
    (the layers above the last capture, the last layer's values and feed-forward when only maps are asked).
    stream [B, T, D]: read in place of the embeddings' output (what gradients and attributions differentiate).
    """
    cfg = model.config
    act = ACTIVATIONS[cfg.hidden_act]
    change = Interventions() if interventions is None else interventions
    x = embed(model, input_ids, token_type_ids) if stream is None else stream
    bias = key_bias(key_mask)  # [B, 1, 1, T]
    sown, rows = {name: [] for name in CAPTURED}, [x]
    for index, layer in enumerate(model.encoder.layer):
        x = attention(layer.attention, cfg.num_attention_heads, x, bias, index=index, change=change,
                      capture=capture, sown=sown)
        hidden = act(_dense(layer.intermediate.dense, x))
        x = layer.output.LayerNorm(_dense(layer.output.dense, hidden) + x)
        rows.append(x)
    out: dict[str, Any] = {"final": x}
    out.update({name: tuple(sown[name]) for name in CAPTURED if getattr(capture, name)})
    if capture.residual:
        out["residual"] = jnp.stack(rows)
    return out
